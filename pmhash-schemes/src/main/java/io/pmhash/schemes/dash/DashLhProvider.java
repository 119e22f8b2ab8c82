package io.pmhash.schemes.dash;

import io.pmhash.core.Pool;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.map.spi.SchemeProvider;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code dash-lh} scheme for {@link io.pmhash.map.PmHash}. Four parameters, recorded as
 * pool header parameters 0..3 and in the table header: {@code stashBuckets} (2..4, default 2),
 * {@code firstArray} (segments in the first segment array, a power of two in 1..1024, default
 * 64) and {@code stride} (fixed-size expansions before each doubling, 1..16, default 8), the
 * defaults being Dash §6.2's; {@code mergeLoadPercent} (0..50, default 25, Dash-EH's quarter):
 * the segment pair split last is merged back when its two segments hold at most that percentage
 * of one segment's slots, 0 never contracts. {@link TableOptions#initialCapacity()} is not used: the table
 * starts with the first array and grows one segment at a time.
 */
public final class DashLhProvider implements SchemeProvider {
  /** The scheme name in pool headers. */
  public static final String NAME = "dash-lh";
  /** The stash-size parameter. */
  public static final String STASH_BUCKETS = "stashBuckets";
  /** The first-array parameter. */
  public static final String FIRST_ARRAY = "firstArray";
  /** The stride parameter. */
  public static final String STRIDE = "stride";
  /** Default stash buckets (Dash §6.2). */
  public static final int DEFAULT_STASH_BUCKETS = 2;
  /** Default first array (Dash §6.2: "its first segment array includes 64 segments"). */
  public static final int DEFAULT_FIRST_ARRAY = 64;
  /** Default stride (Dash §6.2: "a stride of eight"). */
  public static final int DEFAULT_STRIDE = 8;
  /** The merge-bound parameter. */
  public static final String MERGE_LOAD = "mergeLoadPercent";
  /** Default merge bound: Dash-EH's (a pair merges when it holds at most a quarter of a segment). */
  public static final int DEFAULT_MERGE_LOAD = 25;

  /** For {@link java.util.ServiceLoader}. */
  public DashLhProvider() {}

  /**
   * Its header, segment arrays and chained stash buckets come from {@link Pool#schemeAllocator()}
   * (PMDK's objects on an llpl pool); a merge's freed buckets and arrays wait for the epoch grace
   * period its optimistic readers need.
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
    return DashLhLayout.LAYOUT_VERSION;
  }

  @Override
  public Map<String, Long> defaultParams() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put(STASH_BUCKETS, (long) DEFAULT_STASH_BUCKETS);
    m.put(FIRST_ARRAY, (long) DEFAULT_FIRST_ARRAY);
    m.put(STRIDE, (long) DEFAULT_STRIDE);
    m.put(MERGE_LOAD, (long) DEFAULT_MERGE_LOAD);
    return m;
  }

  @Override
  public long[] headerParams(TableOptions options) {
    long stash = options.param(STASH_BUCKETS, DEFAULT_STASH_BUCKETS);
    long first = options.param(FIRST_ARRAY, DEFAULT_FIRST_ARRAY);
    long stride = options.param(STRIDE, DEFAULT_STRIDE);
    long merge = options.param(MERGE_LOAD, DEFAULT_MERGE_LOAD);
    DashLhTable.checkParams(stash, first, stride, merge);
    return new long[] {stash, first, stride, merge};
  }

  @Override
  public LongHashTable create(Pool pool, TableOptions options) {
    long[] p = headerParams(options);
    return DashLhTable.create(pool, (int) p[0], (int) p[1], (int) p[2], (int) p[3]);
  }

  @Override
  public LongHashTable open(Pool pool, TableOptions options) {
    return DashLhTable.open(pool);
  }
}
