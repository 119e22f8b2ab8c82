package io.pmhash.schemes.esh;

import io.pmhash.core.Pool;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.map.spi.SchemeProvider;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code esh} scheme for {@link io.pmhash.map.PmHash}. Two parameters, recorded as pool header
 * parameters 0 and 1 and in the table header: {@code bucketBytes} (256 by default: ESH's bucket of
 * §4.3.2; 64 gives ACCEH's one-cache-line bucket of chapter 3; 128 and 192 are allowed) and {@code
 * bucketsPerSegment} (a power of two up to 64, default 64: the 16 KB segment of §4.4.1; the
 * dissertation's text also says 4, see {@code docs/format/esh.md}). {@link
 * TableOptions#initialCapacity()} sizes the first directory.
 */
public final class EshProvider implements SchemeProvider {
  /** The scheme name in pool headers. */
  public static final String NAME = "esh";
  /** The bucket-size parameter. */
  public static final String BUCKET_BYTES = "bucketBytes";
  /** The segment-size parameter. */
  public static final String BUCKETS = "bucketsPerSegment";
  /** ESH's bucket size (§4.3.2). */
  public static final int DEFAULT_BUCKET_BYTES = 256;
  /** ACCEH's bucket size (§3.4.1): one cache line. */
  public static final int ACCEH_BUCKET_BYTES = 64;

  /** For {@link java.util.ServiceLoader}. */
  public EshProvider() {}

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
    return EshLayout.LAYOUT_VERSION;
  }

  @Override
  public Map<String, Long> defaultParams() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put(BUCKET_BYTES, (long) DEFAULT_BUCKET_BYTES);
    m.put(BUCKETS, (long) EshLayout.DEFAULT_BUCKETS);
    return m;
  }

  @Override
  public long[] headerParams(TableOptions options) {
    long bytes = options.param(BUCKET_BYTES, DEFAULT_BUCKET_BYTES);
    long buckets = options.param(BUCKETS, EshLayout.DEFAULT_BUCKETS);
    EshTable.checkGeometry(bytes, buckets);
    return new long[] {bytes, buckets};
  }

  @Override
  public LongHashTable create(Pool pool, TableOptions options) {
    long[] g = headerParams(options);
    return EshTable.create(pool, (int) g[0], (int) g[1], options.initialCapacity());
  }

  @Override
  public LongHashTable open(Pool pool, TableOptions options) {
    return EshTable.open(pool);
  }
}
