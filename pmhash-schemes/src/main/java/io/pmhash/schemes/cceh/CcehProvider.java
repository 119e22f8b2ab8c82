package io.pmhash.schemes.cceh;

import io.pmhash.core.Pool;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.map.spi.SchemeProvider;
import java.util.Map;

/**
 * The {@code cceh} scheme for {@link io.pmhash.map.PmHash}. No parameters: the geometry is the
 * one Dash evaluated (§6.2), fixed by {@link CcehLayout}; {@link TableOptions#initialCapacity()}
 * sizes the first directory.
 */
public final class CcehProvider implements SchemeProvider {
  /** The scheme name in pool headers. */
  public static final String NAME = "cceh";

  /** For {@link java.util.ServiceLoader}. */
  public CcehProvider() {}

  /**
   * Its blocks come from {@link Pool#schemeAllocator()} (PMDK's objects on an llpl pool), frees
   * after the epoch grace period its optimistic readers need.
   */
  @Override
  public boolean usesSchemeAllocator() {
    return true;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int layoutVersion() {
    return CcehLayout.LAYOUT_VERSION;
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
    headerParams(options);
    return CcehTable.create(pool, options.initialCapacity());
  }

  @Override
  public LongHashTable open(Pool pool, TableOptions options) {
    return CcehTable.open(pool);
  }
}
