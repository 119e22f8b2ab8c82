package io.pmhash.schemes.level;

import io.pmhash.core.Pool;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.map.spi.SchemeProvider;
import java.util.Map;

/**
 * The {@code level} scheme for {@link io.pmhash.map.PmHash}. No parameters: the geometry is the
 * one Dash evaluated (§6.1: 128-byte buckets), fixed by {@link LevelLayout}; {@link
 * TableOptions#initialCapacity()} sizes the first levels.
 */
public final class LevelProvider implements SchemeProvider {
  /** The scheme name in pool headers. */
  public static final String NAME = "level";

  /** For {@link java.util.ServiceLoader}. */
  public LevelProvider() {}

  /**
   * Its levels and header come from {@link Pool#schemeAllocator()} (PMDK's objects on an llpl
   * pool); a resize's old level is freed after the epoch grace period its optimistic readers need.
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
    return LevelLayout.LAYOUT_VERSION;
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
    return LevelTable.create(pool, options.initialCapacity());
  }

  @Override
  public LongHashTable open(Pool pool, TableOptions options) {
    return LevelTable.open(pool);
  }
}
