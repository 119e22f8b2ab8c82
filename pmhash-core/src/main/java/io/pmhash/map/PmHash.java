package io.pmhash.map;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolInfo;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.SchemeMismatchException;
import io.pmhash.map.spi.SchemeProvider;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * The one entry point: create and open persistent hash tables by scheme.
 *
 * <pre>{@code
 * try (LongHashTable t = PmHash.create(Path.of("t.pool"), TableOptions.scheme("dash-eh"))) {
 *   t.put(42, 4242);
 * }
 * try (LongHashTable t = PmHash.open(Path.of("t.pool"), TableOptions.any())) {
 *   long v = t.get(42, -1);
 * }
 * try (PmHashMap<String, byte[]> m = PmHash.createMap(Path.of("m.pool"), Codec.utf8(), Codec.bytes(),
 *     TableOptions.scheme("dash-eh"))) {
 *   m.put("key", new byte[] {1, 2, 3});
 * }
 * }</pre>
 *
 * <h2>Maps in the pool header</h2>
 *
 * A map records what it is in pool header parameters 5 to 7 (a scheme's own parameters use 0 to
 * 4, padded with zeros): parameter 5 is the map kind ({@value #INLINE_MAP}: the inline table of
 * a map of fixed-width integer codecs; {@value #POINTER_MAP}: the scheme's pointer mode),
 * parameters 6 and 7 the key and value codec names (ASCII, packed little-endian). {@link
 * #openMap} refuses a pool whose kind or codec names differ from what it is given, and {@link
 * #open} refuses a pointer-mode pool, each with a {@link SchemeMismatchException} and nothing
 * written to the file.
 */
public final class PmHash {
  private PmHash() {}

  /** Header parameter index of the map kind; 6 and 7 hold the codec names. */
  static final int MAP_PARAM = 5;
  /** Map kind: inline (both codecs fixed-width integers). */
  public static final long INLINE_MAP = 1;
  /** Map kind: pointer mode (records out of line). */
  public static final long POINTER_MAP = 2;

  /**
   * Creates a new pool file holding an empty table.
   *
   * @param path the file; must not exist
   * @param options the scheme, its parameters, durability and pool options
   * @return the table
   * @throws IOException if the pool cannot be created (see {@link Pool#create})
   * @throws IllegalArgumentException if the scheme is unknown or a parameter is invalid
   */
  public static LongHashTable create(Path path, TableOptions options) throws IOException {
    SchemeProvider provider = provider(requireScheme(options));
    Pool pool = Pool.create(path, poolOptions(provider, options));
    return buildOrClose(pool, () -> provider.create(pool, options));
  }

  /**
   * Creates a table in anonymous memory ({@link io.pmhash.core.Durability#VOLATILE}).
   *
   * @param options the scheme and its parameters
   * @return the table
   */
  public static LongHashTable createVolatile(TableOptions options) {
    SchemeProvider provider = provider(requireScheme(options));
    Pool pool = Pool.createVolatile(poolOptions(provider, options));
    try {
      return buildOrClose(pool, () -> provider.create(pool, options));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Opens an existing table. With {@link TableOptions#any()} the scheme recorded in the header
   * is used; with a named scheme the header must name the same one.
   *
   * @param path the pool file
   * @param options durability and pool options; the scheme to insist on, if any
   * @return the table, recovered if the last shutdown was not clean
   * @throws IOException if the pool cannot be opened (see {@link Pool#open})
   */
  public static LongHashTable open(Path path, TableOptions options) throws IOException {
    Objects.requireNonNull(options, "options");
    // Choose the provider from the header before anything is written to the file.
    PoolInfo info = Pool.inspect(path);
    long[] params = info.schemeParams();
    if (mapKind(params) == POINTER_MAP) {
      throw new SchemeMismatchException(path + " holds a PmHashMap in pointer mode (codecs '" + codecName(params, 1) + "', '"
          + codecName(params, 2) + "'), not a LongHashTable: open it with PmHash.openMap and those codecs");
    }
    String scheme = options.scheme() != null ? options.scheme() : info.scheme();
    SchemeProvider provider = find(scheme);
    SchemeProvider chosen = openable(path, scheme, options);
    Pool pool = Pool.open(path, options.poolOptions().withScheme(chosen.name(), chosen.layoutVersion()));
    return buildOrClose(pool, () -> chosen.open(pool, options));
  }

  private static SchemeProvider openable(Path path, String scheme, TableOptions options) throws SchemeMismatchException {
    SchemeProvider provider = find(scheme);
    if (provider == null) {
      if (options.scheme() != null) {
        provider(scheme); // throws: unknown scheme asked for
      }
      throw new SchemeMismatchException(path + " holds scheme '" + scheme
          + "', which this build of pmhash does not provide (available: " + schemes().keySet() + ")");
    }
    return provider;
  }

  // ---------------------------------------------------------------- maps

  /**
   * Creates a new pool file holding an empty {@link PmHashMap}. Fixed-width integer codecs on
   * both sides ({@link Codec#longs()}, {@link Codec#ints()}) give an inline table; any other
   * pair needs a scheme with a pointer mode (dash-eh).
   *
   * @param path the file; must not exist
   * @param keys the key codec
   * @param values the value codec
   * @param options the scheme, its parameters, durability and pool options
   * @param <K> the key type
   * @param <V> the value type
   * @return the map
   * @throws IOException if the pool cannot be created (see {@link Pool#create})
   * @throws IllegalArgumentException if the scheme is unknown, a parameter is invalid, or the
   *     codecs need a pointer mode the scheme does not have
   */
  public static <K, V> PmHashMap<K, V> createMap(Path path, Codec<K> keys, Codec<V> values, TableOptions options) throws IOException {
    Objects.requireNonNull(path, "path");
    SchemeProvider provider = provider(requireScheme(options));
    long kind = mapKind(provider, keys, values);
    Pool pool = Pool.create(path, poolOptions(provider, options, mapParams(kind, keys, values)));
    return buildOrClose(pool, () -> newMap(provider, pool, options, kind, keys, values, true));
  }

  /**
   * Creates a {@link PmHashMap} in anonymous memory ({@link io.pmhash.core.Durability#VOLATILE}).
   *
   * @param keys the key codec
   * @param values the value codec
   * @param options the scheme and its parameters
   * @param <K> the key type
   * @param <V> the value type
   * @return the map
   */
  public static <K, V> PmHashMap<K, V> createVolatileMap(Codec<K> keys, Codec<V> values, TableOptions options) {
    SchemeProvider provider = provider(requireScheme(options));
    long kind = mapKind(provider, keys, values);
    Pool pool = Pool.createVolatile(poolOptions(provider, options, mapParams(kind, keys, values)));
    try {
      return buildOrClose(pool, () -> newMap(provider, pool, options, kind, keys, values, true));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Opens an existing {@link PmHashMap}. The header must name a map made with codecs of the same
   * names (and, if {@code options} names a scheme, that scheme).
   *
   * @param path the pool file
   * @param keys the key codec it was created with
   * @param values the value codec it was created with
   * @param options durability and pool options; the scheme to insist on, if any
   * @param <K> the key type
   * @param <V> the value type
   * @return the map, recovered if the last shutdown was not clean
   * @throws SchemeMismatchException if the pool holds no map, or one of other codecs or scheme
   * @throws IOException if the pool cannot be opened (see {@link Pool#open})
   */
  public static <K, V> PmHashMap<K, V> openMap(Path path, Codec<K> keys, Codec<V> values, TableOptions options) throws IOException {
    Objects.requireNonNull(options, "options");
    PoolInfo info = Pool.inspect(path);
    long[] params = info.schemeParams();
    long kind = mapKind(params);
    if (kind == 0) {
      throw new SchemeMismatchException(path + " holds a LongHashTable of scheme '" + info.scheme()
          + "', not a PmHashMap: open it with PmHash.open");
    }
    String k = codecName(params, 1);
    String v = codecName(params, 2);
    if (!k.equals(keys.name()) || !v.equals(values.name())) {
      throw new SchemeMismatchException(path + " holds a PmHashMap of codecs '" + k + "' -> '" + v + "', not '"
          + keys.name() + "' -> '" + values.name() + "': open it with the codecs it was created with");
    }
    String scheme = options.scheme() != null ? options.scheme() : info.scheme();
    SchemeProvider provider = openable(path, scheme, options);
    if (kind != mapKind(provider, keys, values)) {
      throw new SchemeMismatchException(path + " holds a map of kind " + kind + ", which codecs '" + k + "' -> '" + v
          + "' do not make: the file was damaged");
    }
    Pool pool = Pool.open(path, options.poolOptions().withScheme(provider.name(), provider.layoutVersion()));
    return buildOrClose(pool, () -> newMap(provider, pool, options, kind, keys, values, false));
  }

  private static <K, V> PmHashMap<K, V> newMap(SchemeProvider provider, Pool pool, TableOptions options, long kind,
      Codec<K> keys, Codec<V> values, boolean create) {
    if (kind == POINTER_MAP) {
      return new PmHashMap<>(create ? provider.createBytes(pool, options) : provider.openBytes(pool, options), keys, values);
    }
    LongHashTable t = create ? provider.create(pool, options) : provider.open(pool, options);
    return new PmHashMap<>(new LongBytesTable(t, BuiltinCodecs.fixedWidth(keys), BuiltinCodecs.fixedWidth(values)), keys, values);
  }

  private static long mapKind(SchemeProvider provider, Codec<?> keys, Codec<?> values) {
    Objects.requireNonNull(keys, "key codec");
    Objects.requireNonNull(values, "value codec");
    BuiltinCodecs.checkName(keys.name());
    BuiltinCodecs.checkName(values.name());
    if (BuiltinCodecs.fixedWidth(keys) > 0 && BuiltinCodecs.fixedWidth(values) > 0) {
      return INLINE_MAP;
    }
    if (!provider.pointerMode()) {
      throw new IllegalArgumentException("scheme '" + provider.name() + "' has no pointer mode, which codecs '" + keys.name()
          + "' -> '" + values.name() + "' need; use a scheme that has one (dash-eh), or Codec.longs()/Codec.ints() for both");
    }
    return POINTER_MAP;
  }

  private static long[] mapParams(long kind, Codec<?> keys, Codec<?> values) {
    return new long[] {kind, BuiltinCodecs.pack(keys.name()), BuiltinCodecs.pack(values.name())};
  }

  /** @return the map kind a pool's header parameters record, 0 for a plain table */
  static long mapKind(long[] params) {
    return params.length > MAP_PARAM + 2 ? params[MAP_PARAM] : 0;
  }

  private static String codecName(long[] params, int which) {
    return BuiltinCodecs.unpack(params[MAP_PARAM + which]);
  }

  /**
   * The schemes this build provides, with their parameters and defaults.
   *
   * @return scheme name to default parameters, sorted by name
   */
  public static Map<String, Map<String, Long>> schemes() {
    Map<String, Map<String, Long>> all = new TreeMap<>();
    for (SchemeProvider p : providers()) {
      all.put(p.name(), p.defaultParams());
    }
    return all;
  }

  private static String requireScheme(TableOptions options) {
    Objects.requireNonNull(options, "options");
    if (options.scheme() == null) {
      throw new IllegalArgumentException("a new table needs a scheme: TableOptions.scheme(name); available: " + schemes().keySet());
    }
    return options.scheme();
  }

  private static PoolOptions poolOptions(SchemeProvider provider, TableOptions options) {
    return poolOptions(provider, options, new long[0]);
  }

  /** The pool options with the scheme's header parameters, then (for a map) the map's at 5..7. */
  private static PoolOptions poolOptions(SchemeProvider provider, TableOptions options, long[] map) {
    PoolOptions base = options.poolOptions();
    if (provider.usesSchemeAllocator() && PoolOptions.BACKEND_LLPL.equals(base.backend())) {
      // The scheme's blocks are PMDK's, beside the pool (docs/llpl.md): the initial size goes to
      // PMDK; the pool keeps its header, lanes and one chunk.
      base = base.withBackendAllocation(base.initialSize()).withInitialSize(1);
    }
    Map<String, Long> known = provider.defaultParams();
    for (String name : options.params().keySet()) {
      if (!known.containsKey(name)) {
        throw new IllegalArgumentException("scheme '" + provider.name() + "' has no parameter '" + name
            + "'; " + (known.isEmpty() ? "it takes none" : "its parameters and defaults: " + known));
      }
    }
    long[] own = provider.headerParams(options);
    if (map.length == 0) {
      return base.withScheme(provider.name(), provider.layoutVersion(), own);
    }
    if (own.length > MAP_PARAM) {
      throw new IllegalStateException("scheme '" + provider.name() + "' records " + own.length
          + " header parameters; a map needs parameters " + MAP_PARAM + " to " + (MAP_PARAM + 2) + " for itself");
    }
    long[] all = new long[MAP_PARAM + map.length];
    System.arraycopy(own, 0, all, 0, own.length);
    System.arraycopy(map, 0, all, MAP_PARAM, map.length);
    return base.withScheme(provider.name(), provider.layoutVersion(), all);
  }

  private interface Builder<T> {
    T build();
  }

  /**
   * Builds the table over a pool just created or opened; if the scheme refuses, the pool is
   * closed with {@link Pool#closeRefused()}, which gives an opened file back as it was found (a
   * created pool is simply closed).
   */
  private static <T> T buildOrClose(Pool pool, Builder<T> builder) throws IOException {
    try {
      return builder.build();
    } catch (java.io.UncheckedIOException e) {
      // A provider reports a bad table (e.g. CorruptPoolException) wrapped; callers get the cause.
      IOException cause = e.getCause();
      try {
        pool.closeRefused();
      } catch (IOException suppressed) {
        cause.addSuppressed(suppressed);
      }
      throw cause;
    } catch (RuntimeException | Error e) {
      try {
        pool.closeRefused();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  private static SchemeProvider provider(String name) {
    SchemeProvider p = find(name);
    if (p == null) {
      throw new IllegalArgumentException("unknown scheme '" + name + "'; available: " + schemes().keySet()
          + (schemes().isEmpty() ? " (is pmhash-schemes on the class or module path?)" : ""));
    }
    return p;
  }

  private static SchemeProvider find(String name) {
    for (SchemeProvider p : providers()) {
      if (p.name().equals(name)) {
        return p;
      }
    }
    return null;
  }

  private static List<SchemeProvider> providers() {
    List<SchemeProvider> list = new ArrayList<>();
    ServiceLoader.load(SchemeProvider.class, PmHash.class.getClassLoader()).forEach(list::add);
    return list;
  }
}
