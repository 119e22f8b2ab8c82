package io.pmhash.map;

import io.pmhash.core.Durability;
import io.pmhash.core.PoolOptions;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * How to create or open a table: the scheme, its parameters, the durability mode and the pool
 * options. Immutable; every {@code withX} returns a copy.
 *
 * <pre>{@code
 * TableOptions options = TableOptions.scheme("dash-eh")
 *     .withParam("stashBuckets", 4)
 *     .withDurability(Durability.PMEM_EMULATED)
 *     .withInitialCapacity(1_000_000);
 * }</pre>
 */
public final class TableOptions {
  private final String scheme;
  private final Map<String, Long> params;
  private final long initialCapacity;
  private final PoolOptions pool;

  private TableOptions(String scheme, Map<String, Long> params, long initialCapacity, PoolOptions pool) {
    this.scheme = scheme;
    this.params = params;
    this.initialCapacity = initialCapacity;
    this.pool = pool;
  }

  /**
   * Options for a scheme, with its default parameters.
   *
   * @param name the scheme name, e.g. {@code "dash-eh"}; {@link PmHash#schemes()} lists them
   * @return the options
   */
  public static TableOptions scheme(String name) {
    Objects.requireNonNull(name, "scheme name");
    return new TableOptions(name, Map.of(), 0, PoolOptions.defaults());
  }

  /**
   * Options for opening an existing table whatever its scheme (the header says which).
   *
   * @return the options
   */
  public static TableOptions any() {
    return new TableOptions(null, Map.of(), 0, PoolOptions.defaults());
  }

  /**
   * Sets a scheme parameter; each scheme documents its own and rejects unknown names.
   *
   * @param name the parameter, e.g. {@code "stashBuckets"}
   * @param value its value
   * @return a copy with the parameter set
   */
  public TableOptions withParam(String name, long value) {
    Objects.requireNonNull(name, "parameter name");
    Map<String, Long> copy = new LinkedHashMap<>(params);
    copy.put(name, value);
    return new TableOptions(scheme, Collections.unmodifiableMap(copy), initialCapacity, pool);
  }

  /**
   * @param mode the durability mode of the pool
   * @return a copy with it
   */
  public TableOptions withDurability(Durability mode) {
    return new TableOptions(scheme, params, initialCapacity, pool.withDurability(mode));
  }

  /**
   * Chooses the pool backend of a new table ({@link PoolOptions#withBackend}): {@code "ffm"} (the
   * default) or {@code "llpl"} (a PMDK pool through llpl, module {@code pmhash-llpl}).
   *
   * @param name the backend
   * @return a copy that uses it
   */
  public TableOptions withBackend(String name) {
    return new TableOptions(scheme, params, initialCapacity, pool.withBackend(name));
  }

  /**
   * Records the table should hold without a structural change; schemes size their first
   * directory and pool from it. 0 (the default) starts small.
   *
   * @param records expected records
   * @return a copy with it
   */
  public TableOptions withInitialCapacity(long records) {
    if (records < 0) {
      throw new IllegalArgumentException("initial capacity must not be negative, got " + records);
    }
    return new TableOptions(scheme, params, records, pool);
  }

  /**
   * Replaces the pool options (sizes, geometry, durability, a persistence for tests). The
   * scheme fields of {@code options} are ignored: the scheme provider sets them.
   *
   * @param options pool options
   * @return a copy with them
   */
  public TableOptions withPoolOptions(PoolOptions options) {
    return new TableOptions(scheme, params, initialCapacity, Objects.requireNonNull(options, "pool options"));
  }

  /** @return the scheme name, or null for {@link #any()} */
  public String scheme() {
    return scheme;
  }

  /** @return the parameters set, by name, in the order set */
  public Map<String, Long> params() {
    return params;
  }

  /**
   * @param name a parameter name
   * @param defaultValue what to return when it is not set
   * @return its value or the default
   */
  public long param(String name, long defaultValue) {
    Long v = params.get(name);
    return v == null ? defaultValue : v;
  }

  /** @return the initial capacity in records */
  public long initialCapacity() {
    return initialCapacity;
  }

  /** @return the pool options */
  public PoolOptions poolOptions() {
    return pool;
  }

  @Override
  public String toString() {
    return "TableOptions[scheme=" + scheme + ", params=" + params + ", initialCapacity="
        + initialCapacity + ", " + pool + "]";
  }
}
