package io.pmhash.map;

import io.pmhash.core.Pool;
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
 * }</pre>
 */
public final class PmHash {
  private PmHash() {}

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
    String scheme = options.scheme() != null ? options.scheme() : Pool.inspect(path).scheme();
    SchemeProvider provider = find(scheme);
    if (provider == null) {
      if (options.scheme() != null) {
        provider(scheme); // throws: unknown scheme asked for
      }
      throw new SchemeMismatchException(path + " holds scheme '" + scheme
          + "', which this build of pmhash does not provide (available: " + schemes().keySet() + ")");
    }
    Pool pool = Pool.open(path, options.poolOptions().withScheme(provider.name(), provider.layoutVersion()));
    SchemeProvider chosen = provider;
    return buildOrClose(pool, () -> chosen.open(pool, options));
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
    Map<String, Long> known = provider.defaultParams();
    for (String name : options.params().keySet()) {
      if (!known.containsKey(name)) {
        throw new IllegalArgumentException("scheme '" + provider.name() + "' has no parameter '" + name
            + "'; " + (known.isEmpty() ? "it takes none" : "its parameters and defaults: " + known));
      }
    }
    return options.poolOptions().withScheme(provider.name(), provider.layoutVersion(), provider.headerParams(options));
  }

  private interface Builder {
    LongHashTable build();
  }

  private static LongHashTable buildOrClose(Pool pool, Builder builder) throws IOException {
    try {
      return builder.build();
    } catch (java.io.UncheckedIOException e) {
      // A provider reports a bad table (e.g. CorruptPoolException) wrapped; callers get the cause.
      IOException cause = e.getCause();
      try {
        pool.close();
      } catch (IOException suppressed) {
        cause.addSuppressed(suppressed);
      }
      throw cause;
    } catch (RuntimeException | Error e) {
      try {
        pool.close();
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
