package io.pmhash.stress.lin;

import io.pmhash.core.PoolOptions;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
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
 * argument.
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

  private static final Map<String, LongHashTable> TABLES = new ConcurrentHashMap<>();
  private static volatile String scheme;
  private static volatile boolean fresh;
  private static LongHashTable last;

  /** Pool size of a fresh table: room for a few segments of every scheme. */
  private static final long FRESH_POOL_BYTES = 4L << 20;

  /** The table of this scenario. */
  final LongHashTable table;

  /** A scenario's instance: the scheme's table, emptied. */
  public MapOperations() {
    table = scenarioTable();
  }

  /**
   * The table a new scenario instance works on: of the scheme {@link #use} named, empty.
   *
   * @return a fresh table ({@link #freshTables}) or the scheme's shared table, emptied
   */
  static LongHashTable scenarioTable() {
    if (fresh) {
      return freshTable(scheme);
    }
    LongHashTable shared = table(scheme);
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

  private static synchronized LongHashTable freshTable(String name) {
    LongHashTable previous = last;
    last = PmHash.createVolatile(TableOptions.scheme(name)
        .withPoolOptions(PoolOptions.defaults().withInitialSize(FRESH_POOL_BYTES)));
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

  static LongHashTable table(String name) {
    return TABLES.computeIfAbsent(name, n -> PmHash.createVolatile(TableOptions.scheme(n)));
  }

  /** Closes every table built so far. */
  static synchronized void closeAll() {
    TABLES.values().forEach(LongHashTable::close);
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
    return table.get(key, ABSENT);
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
    return table.replace(key, expected, value);
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
    return table.remove(key, expected);
  }

  /** After a scenario (quiescent): {@code size()} equals the number of keys present. */
  @Validate
  public void sizeMatchesContents() {
    long present = 0;
    for (int k = 1; k <= KEYS; k++) {
      if (table.get(k, ABSENT) != ABSENT) {
        present++;
      }
    }
    if (table.size() != present) {
      throw new IllegalStateException(
          table.scheme() + ": size() is " + table.size() + " but " + present + " keys of the range are present");
    }
  }
}
