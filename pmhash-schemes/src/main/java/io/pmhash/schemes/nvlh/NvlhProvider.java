package io.pmhash.schemes.nvlh;

import io.pmhash.core.Pool;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.map.spi.SchemeProvider;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code nvlh} scheme for {@link io.pmhash.map.PmHash}. Parameters, recorded in the pool
 * header:
 *
 * <ul>
 *   <li>{@value #SPLIT_LOAD} (default 0): 0 splits bucket p on every collision, i.e. whenever an
 *       insert chains a new overflow bucket (the paper, §II Fig. 1); 1..100 instead splits while
 *       the records exceed that percentage of the primary buckets' slots (Litwin's controlled
 *       split).
 *   <li>{@value #MERGE_LOAD} (default 20): the last bucket is merged back while the records are
 *       below that percentage of the primary buckets' slots; 0 never contracts. Must be below the
 *       split bound when there is one.
 *   <li>{@value #SEGMENT_SHIFT} (default 8): log2 of the primary buckets per segment, 1..8.
 *   <li>{@value #INITIAL_BUCKETS} (default 64): the fewest primary buckets of round 0 ({@code
 *       n0}), a power of two, 1..2^20; also the size below which the table never contracts.
 * </ul>
 *
 * {@link TableOptions#initialCapacity()} raises round 0 ({@code n0}) to hold that many records
 * at 75 % load.
 */
public final class NvlhProvider implements SchemeProvider {
  /** The scheme name in pool headers. */
  public static final String NAME = "nvlh";
  /** Parameter: the split policy. */
  public static final String SPLIT_LOAD = "splitLoadPercent";
  /** Parameter: the contraction bound. */
  public static final String MERGE_LOAD = "mergeLoadPercent";
  /** Parameter: the segment size. */
  public static final String SEGMENT_SHIFT = "segmentShift";
  /** Parameter: the fewest buckets of round 0. */
  public static final String INITIAL_BUCKETS = "initialBuckets";
  /** Its default. */
  public static final int DEFAULT_INITIAL_BUCKETS = 64;
  /** Default contraction bound. */
  public static final int DEFAULT_MERGE_LOAD = 20;

  /** For {@link java.util.ServiceLoader}. */
  public NvlhProvider() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int layoutVersion() {
    return NvlhLayout.LAYOUT_VERSION;
  }

  /** Its blocks come from {@link Pool#schemeAllocator()}: every reader and writer holds the table's lock. */
  @Override
  public boolean usesSchemeAllocator() {
    return true;
  }

  @Override
  public Map<String, Long> defaultParams() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put(SPLIT_LOAD, 0L);
    m.put(MERGE_LOAD, (long) DEFAULT_MERGE_LOAD);
    m.put(SEGMENT_SHIFT, (long) NvlhLayout.MAX_SEG_SHIFT);
    m.put(INITIAL_BUCKETS, (long) DEFAULT_INITIAL_BUCKETS);
    return m;
  }

  @Override
  public long[] headerParams(TableOptions options) {
    long split = options.param(SPLIT_LOAD, 0);
    long merge = options.param(MERGE_LOAD, DEFAULT_MERGE_LOAD);
    long shift = options.param(SEGMENT_SHIFT, NvlhLayout.MAX_SEG_SHIFT);
    if (split < 0 || split > 100) {
      throw new IllegalArgumentException("nvlh parameter " + SPLIT_LOAD + " must be 0 (split on collision) or 1..100, got " + split);
    }
    if (merge < 0 || merge > 100 || split > 0 && merge >= split) {
      throw new IllegalArgumentException("nvlh parameter " + MERGE_LOAD + " must be 0..100 and below " + SPLIT_LOAD
          + " when that is set, got " + merge + " (" + SPLIT_LOAD + " " + split + ")");
    }
    if (shift < NvlhLayout.MIN_SEG_SHIFT || shift > NvlhLayout.MAX_SEG_SHIFT) {
      throw new IllegalArgumentException("nvlh parameter " + SEGMENT_SHIFT + " must be " + NvlhLayout.MIN_SEG_SHIFT + ".."
          + NvlhLayout.MAX_SEG_SHIFT + ", got " + shift);
    }
    long buckets = options.param(INITIAL_BUCKETS, DEFAULT_INITIAL_BUCKETS);
    if (buckets < 1 || buckets > 1L << 20 || Long.bitCount(buckets) != 1) {
      throw new IllegalArgumentException("nvlh parameter " + INITIAL_BUCKETS + " must be a power of two in 1..2^20, got " + buckets);
    }
    return new long[] {split, merge, shift, buckets};
  }

  @Override
  public LongHashTable create(Pool pool, TableOptions options) {
    long[] p = headerParams(options);
    return NvlhTable.create(pool, Math.max(p[3], NvlhTable.bucketsFor(options.initialCapacity())), (int) p[2], (int) p[0], (int) p[1]);
  }

  @Override
  public LongHashTable open(Pool pool, TableOptions options) {
    long[] p = pool.schemeParams();
    if (p.length != 4 || p[0] < 0 || p[0] > 100 || p[1] < 0 || p[1] > 100) {
      throw NvlhRecovery.corrupt("nvlh: the pool header's scheme parameters " + java.util.Arrays.toString(p) + " are not " + SPLIT_LOAD + ", " + MERGE_LOAD + ", " + SEGMENT_SHIFT + ", " + INITIAL_BUCKETS);
    }
    return NvlhTable.open(pool, (int) p[0], (int) p[1]);
  }
}
