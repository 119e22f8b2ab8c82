package io.pmhash.map.spi;

import io.pmhash.core.Pool;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import java.util.Map;

/**
 * A hashing scheme, found by {@link java.util.ServiceLoader}. {@link io.pmhash.map.PmHash}
 * creates the pool with the scheme's name, layout version and header parameters, then hands it
 * to {@link #create}; on open it checks the header and hands the pool to {@link #open}.
 */
public interface SchemeProvider {
  /** @return the name recorded in pool headers, e.g. {@code "dash-eh"} (1 to 16 ASCII chars) */
  String name();

  /** @return the layout version recorded in pool headers; bumped on any format change */
  int layoutVersion();

  /**
   * Whether the scheme takes its blocks through {@link Pool#schemeAllocator()}. On a backend with
   * an allocator of its own (llpl: PMDK), {@link io.pmhash.map.PmHash} then gives that allocator
   * the pool's initial size and the pool itself only its header, lanes and one chunk.
   *
   * @return true for every built-in scheme; false (the default) for a scheme that uses {@link
   *     Pool#allocator()}
   */
  default boolean usesSchemeAllocator() {
    return false;
  }

  /**
   * The parameters this scheme accepts with their defaults, for error messages and {@code
   * --help}.
   *
   * @return parameter name to default value, in a stable order
   */
  Map<String, Long> defaultParams();

  /**
   * Validates the options' parameter values and returns the values to record in the pool header
   * (at most 5: header parameters 5 to 7 belong to the map API, see {@link io.pmhash.map.PmHash}). {@link io.pmhash.map.PmHash} has already refused parameter names that {@link
   * #defaultParams()} does not list; an out-of-range value throws {@link
   * IllegalArgumentException} naming the parameter, the range and the scheme.
   *
   * @param options the table options
   * @return header parameters
   */
  long[] headerParams(TableOptions options);

  /**
   * Builds a new, empty table in a freshly created pool.
   *
   * @param pool the pool, its header already naming this scheme
   * @param options the options it was created with
   * @return the table
   */
  LongHashTable create(Pool pool, TableOptions options);

  /**
   * Opens the table of an existing pool: validates what the header and roots say, and recovers
   * after a crash ({@link Pool#lastShutdownClean()}). A table that fails validation is reported
   * as an {@link java.io.UncheckedIOException} wrapping a {@link io.pmhash.core.PoolException}
   * (usually {@link io.pmhash.core.CorruptPoolException}); {@link io.pmhash.map.PmHash#open}
   * closes the pool and throws the wrapped exception.
   *
   * @param pool the opened pool, its header naming this scheme
   * @param options the options it was opened with
   * @return the table
   */
  LongHashTable open(Pool pool, TableOptions options);

  /**
   * Whether this scheme has a pointer mode ({@link BytesTable}: variable-length keys and values
   * out of line, Dash §4.5), which a {@link io.pmhash.map.PmHashMap} of other than fixed-width
   * integer codecs needs.
   *
   * @return true if {@link #createBytes} and {@link #openBytes} work
   */
  default boolean pointerMode() {
    return false;
  }

  /**
   * Builds a new, empty pointer-mode table in a freshly created pool.
   *
   * @param pool the pool, its header already naming this scheme
   * @param options the options it was created with
   * @return the table
   * @throws UnsupportedOperationException if the scheme has no pointer mode
   */
  default BytesTable createBytes(Pool pool, TableOptions options) {
    throw new UnsupportedOperationException("scheme '" + name() + "' has no pointer mode");
  }

  /**
   * Opens the pointer-mode table of an existing pool, as {@link #open} does an inline one.
   *
   * @param pool the opened pool, its header naming this scheme
   * @param options the options it was opened with
   * @return the table
   * @throws UnsupportedOperationException if the scheme has no pointer mode
   */
  default BytesTable openBytes(Pool pool, TableOptions options) {
    throw new UnsupportedOperationException("scheme '" + name() + "' has no pointer mode");
  }
}
