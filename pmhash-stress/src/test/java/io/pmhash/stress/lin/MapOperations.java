package io.pmhash.stress.lin;

import io.pmhash.core.PoolOptions;
import io.pmhash.map.Codec;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.PmHashMap;
import io.pmhash.map.TableOptions;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * The map operations of {@link LongHashTable} as Lincheck operations, over a tiny key range
 * (keys 1..{@value #KEYS}, values 1..3) so that concurrent operations collide on the same keys
 * all the time. The scheme is the one {@link #use} named last: Lincheck builds a fresh instance
 * per scenario through the no-argument constructor, so the scheme cannot be a constructor
 * argument. A name ending in {@value #POINTER} is the scheme's pointer mode: a {@link PmHashMap}
 * of {@code String} keys and values stored out of line ({@link Codec#utf8()}), key {@code k} as
 * {@code "key k"} and value {@code v} as {@code "value v"}, checked against the same {@link
 * SequentialMap}.
 *
 * <p>Under stress testing one table per scheme serves every scenario (a pool per scenario would
 * map thousands of pools): the constructor empties it by removing the key range, so every
 * scenario starts from the empty map of {@link SequentialMap}, the specification. Between stress
 * scenarios no operation is in flight, so this is exact. The model checker, however, may end an
 * invocation by unwinding its threads wherever they are (once it has seen enough of an
 * interleaving), which can leave a pool lock held; a table shared across its invocations would
 * then block the next one. {@link #freshTables} therefore gives every instance a new small
 * volatile table and closes the previous one.
 *
 * <p>{@code size()} is exact only when no operation is in flight ({@link LongHashTable#size()});
 * it is therefore not a Lincheck operation but checked after every scenario by {@link
 * #sizeMatchesContents()}, against a {@code get} of every key of the range.
 */
@Param(name = "key", gen = IntGen.class, conf = "1:" + MapOperations.KEYS)
@Param(name = "value", gen = IntGen.class, conf = "1:3")
public class MapOperations {
  /** Keys are 1..KEYS. */
  static final int KEYS = 4;

  /** What {@code get} returns for an absent key (values are 1..3). */
  static final long ABSENT = -1;

  /** The suffix of a scheme name that asks for the scheme's pointer mode. */
  static final String POINTER = "/pointer";

  private static final Map<String, LinMap> TABLES = new ConcurrentHashMap<>();
  private static volatile String scheme;
  private static volatile boolean fresh;
  private static LinMap last;

  /** Pool size of a fresh table: room for a few segments of every scheme. */
  private static final long FRESH_POOL_BYTES = 4L << 20;

  /** The table of this scenario. */
  final LinMap table;

  /** A scenario's instance: the scheme's table, emptied. */
  public MapOperations() {
    table = scenarioTable();
  }

  /**
   * The table a new scenario instance works on: of the scheme {@link #use} named, empty.
   *
   * @return a fresh table ({@link #freshTables}) or the scheme's shared table, emptied
   */
  static LinMap scenarioTable() {
    if (fresh) {
      return freshTable(scheme);
    }
    LinMap shared = table(scheme);
    for (int k = 1; k <= KEYS; k++) {
      shared.remove(k);
    }
    return shared;
  }

  /**
   * Whether each instance gets a new table ({@code true}, for the model checker) or the
   * scheme's shared table, emptied ({@code false}, the default, for stress testing).
   *
   * @param on the mode
   */
  static void freshTables(boolean on) {
    fresh = on;
  }

  private static synchronized LinMap freshTable(String name) {
    LinMap previous = last;
    last = LinMap.create(name, PoolOptions.defaults().withInitialSize(FRESH_POOL_BYTES));
    if (previous != null) {
      previous.close();
    }
    return last;
  }

  /**
   * Names the scheme the next scenarios run on.
   *
   * @param name a scheme of {@link PmHash#schemes()}
   */
  static void use(String name) {
    scheme = name;
  }

  static LinMap table(String name) {
    return TABLES.computeIfAbsent(name, n -> LinMap.create(n, PoolOptions.defaults()));
  }

  /** Closes every table built so far. */
  static synchronized void closeAll() {
    TABLES.values().forEach(LinMap::close);
    TABLES.clear();
    if (last != null) {
      last.close();
      last = null;
    }
  }

  /**
   * @param key the key
   * @return its value or {@link #ABSENT}
   */
  @Operation
  public long get(@Param(name = "key") int key) {
    return table.get(key);
  }

  /**
   * @param key the key
   * @return whether it is present
   */
  @Operation
  public boolean containsKey(@Param(name = "key") int key) {
    return table.containsKey(key);
  }

  /**
   * @param key the key
   * @param value the value
   * @return whether the key was absent
   */
  @Operation
  public boolean put(@Param(name = "key") int key, @Param(name = "value") int value) {
    return table.put(key, value);
  }

  /**
   * @param key the key
   * @param value the value
   * @return whether it was inserted
   */
  @Operation
  public boolean putIfAbsent(@Param(name = "key") int key, @Param(name = "value") int value) {
    return table.putIfAbsent(key, value);
  }

  /**
   * @param key the key
   * @param value the new value
   * @return whether the key was present
   */
  @Operation
  public boolean replace(@Param(name = "key") int key, @Param(name = "value") int value) {
    return table.replace(key, value);
  }

  /**
   * @param key the key
   * @param expected the value it must have
   * @param value the new value
   * @return whether it was replaced
   */
  @Operation
  public boolean replaceIf(
      @Param(name = "key") int key, @Param(name = "value") int expected, @Param(name = "value") int value) {
    return table.replaceIf(key, expected, value);
  }

  /**
   * @param key the key
   * @return whether it was removed
   */
  @Operation
  public boolean remove(@Param(name = "key") int key) {
    return table.remove(key);
  }

  /**
   * @param key the key
   * @param expected the value it must have
   * @return whether it was removed
   */
  @Operation
  public boolean removeIf(@Param(name = "key") int key, @Param(name = "value") int expected) {
    return table.removeIf(key, expected);
  }

  /** After a scenario (quiescent): {@code size()} equals the number of keys present. */
  @Validate
  public void sizeMatchesContents() {
    long present = 0;
    for (int k = 1; k <= KEYS; k++) {
      if (table.get(k) != ABSENT) {
        present++;
      }
    }
    if (table.size() != present) {
      throw new IllegalStateException(
          table.scheme() + ": size() is " + table.size() + " but " + present + " keys of the range are present");
    }
  }

  /** The operations under test, on an inline table or on a pointer-mode map. */
  interface LinMap extends AutoCloseable {
    long get(int key);

    boolean containsKey(int key);

    boolean put(int key, int value);

    boolean putIfAbsent(int key, int value);

    boolean replace(int key, int value);

    boolean replaceIf(int key, int expected, int value);

    boolean remove(int key);

    boolean removeIf(int key, int expected);

    long size();

    String scheme();

    @Override
    void close();

    /** A new volatile map of {@code name} (a scheme, or a scheme + {@link #POINTER}). */
    static LinMap create(String name, PoolOptions pool) {
      if (name.endsWith(POINTER)) {
        String base = name.substring(0, name.length() - POINTER.length());
        return new Pointer(PmHash.createVolatileMap(Codec.utf8(), Codec.utf8(), TableOptions.scheme(base).withPoolOptions(pool)));
      }
      return new Inline(PmHash.createVolatile(TableOptions.scheme(name).withPoolOptions(pool)));
    }
  }

  /** A {@link LongHashTable}: keys and values as they are. */
  record Inline(LongHashTable t) implements LinMap {
    public long get(int key) {
      return t.get(key, ABSENT);
    }

    public boolean containsKey(int key) {
      return t.containsKey(key);
    }

    public boolean put(int key, int value) {
      return t.put(key, value);
    }

    public boolean putIfAbsent(int key, int value) {
      return t.putIfAbsent(key, value);
    }

    public boolean replace(int key, int value) {
      return t.replace(key, value);
    }

    public boolean replaceIf(int key, int expected, int value) {
      return t.replace(key, expected, value);
    }

    public boolean remove(int key) {
      return t.remove(key);
    }

    public boolean removeIf(int key, int expected) {
      return t.remove(key, expected);
    }

    public long size() {
      return t.size();
    }

    public String scheme() {
      return t.scheme();
    }

    public void close() {
      t.close();
    }
  }

  /** A pointer-mode {@link PmHashMap}: {@code "key k"} to {@code "value v"}, out of line. */
  record Pointer(PmHashMap<String, String> m) implements LinMap {
    private static String key(int k) {
      return "key " + k;
    }

    private static String value(int v) {
      return "value " + v;
    }

    public long get(int key) {
      String v = m.get(key(key));
      return v == null ? ABSENT : Long.parseLong(v.substring("value ".length()));
    }

    public boolean containsKey(int key) {
      return m.containsKey(key(key));
    }

    public boolean put(int key, int value) {
      return m.put(key(key), value(value)) == null;
    }

    public boolean putIfAbsent(int key, int value) {
      return m.putIfAbsent(key(key), value(value)) == null;
    }

    public boolean replace(int key, int value) {
      return m.replace(key(key), value(value)) != null;
    }

    public boolean replaceIf(int key, int expected, int value) {
      return m.replace(key(key), value(expected), value(value));
    }

    public boolean remove(int key) {
      return m.remove(key(key)) != null;
    }

    public boolean removeIf(int key, int expected) {
      return m.remove(key(key), value(expected));
    }

    public long size() {
      return m.longSize();
    }

    public String scheme() {
      return m.scheme() + POINTER;
    }

    public void close() {
      m.close();
    }
  }
}
