package io.pmhash.schemes.nvlh;

import io.pmhash.core.Pool;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.map.spi.SchemeProvider;
import java.util.Map;

/**
 * The {@code nvdh} scheme for {@link io.pmhash.map.PmHash}: NVLH's double-hashing baseline
 * ({@link NvdhTable}). No parameters; {@link TableOptions#initialCapacity()} sizes the first
 * table.
 */
public final class NvdhProvider implements SchemeProvider {
  /** The scheme name in pool headers. */
  public static final String NAME = "nvdh";

  /** For {@link java.util.ServiceLoader}. */
  public NvdhProvider() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int layoutVersion() {
    return NvdhLayout.LAYOUT_VERSION;
  }

  @Override
  public Map<String, Long> defaultParams() {
    return Map.of();
  }

  @Override
  public long[] headerParams(TableOptions options) {
    return new long[0];
  }

  @Override
  public LongHashTable create(Pool pool, TableOptions options) {
    return NvdhTable.create(pool, options.initialCapacity());
  }

  @Override
  public LongHashTable open(Pool pool, TableOptions options) {
    return NvdhTable.open(pool);
  }
}
