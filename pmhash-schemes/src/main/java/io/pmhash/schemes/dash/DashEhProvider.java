package io.pmhash.schemes.dash;

import io.pmhash.core.Pool;
import io.pmhash.core.SchemeMismatchException;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.map.spi.BytesTable;
import io.pmhash.map.spi.SchemeProvider;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code dash-eh} scheme for {@link io.pmhash.map.PmHash}. Two parameters, each recorded in
 * the pool header and in the table header: {@code stashBuckets} (2..4, default 2; pool header
 * parameter 0) and {@code normalBuckets} (normal buckets per segment, a power of two 4..512,
 * default 64, the 16 KB segment of Dash §6.2; parameter 1; Dash §6.6, Fig. 11 varies it). {@link
 * TableOptions#initialCapacity()} sizes the first directory. Opening with a parameter set
 * explicitly ({@link TableOptions#withParam}) that differs from the pool's is refused with a
 * {@link SchemeMismatchException}.
 *
 * <p>A third parameter, {@code insertTechniques} (0..4, default 4), exists for Dash §6.6's
 * Fig. 11 experiment and is not recorded: it limits where this handle's inserts may place a
 * record, cumulatively: 0 the target bucket only ("bucketized"), 1 also the probing bucket when
 * the target is full ("+probing"), 2 balanced insert, 3 also displacement, 4 also the stash (Dash;
 * the default). A table filled with fewer techniques splits sooner; it stays a valid table that
 * any handle reads and writes.
 */
public final class DashEhProvider implements SchemeProvider {
  /** The scheme name in pool headers. */
  public static final String NAME = "dash-eh";
  /** The stash-size parameter. */
  public static final String STASH_BUCKETS = "stashBuckets";
  /** Its default (Dash §6.2). */
  public static final int DEFAULT_STASH_BUCKETS = 2;
  /** The segment-size parameter: normal buckets per segment. */
  public static final String NORMAL_BUCKETS = "normalBuckets";
  /** Its default, {@link DashLayout#NORMAL_BUCKETS} (Dash §6.2: 16 KB segments). */
  public static final int DEFAULT_NORMAL_BUCKETS = DashLayout.NORMAL_BUCKETS;
  /** The Fig. 11 experiment's parameter: which insert techniques a handle uses (not recorded). */
  public static final String INSERT_TECHNIQUES = "insertTechniques";
  /** Its default: all of Dash's. */
  public static final int DEFAULT_INSERT_TECHNIQUES = DashSegment.TECHNIQUES_ALL;

  /** For {@link java.util.ServiceLoader}. */
  public DashEhProvider() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int layoutVersion() {
    return DashLayout.LAYOUT_VERSION;
  }

  /**
   * Its blocks come from {@link Pool#schemeAllocator()} (PMDK's objects on an llpl pool), frees
   * after the epoch grace period its optimistic readers need.
   */
  @Override
  public boolean usesSchemeAllocator() {
    return true;
  }

  @Override
  public Map<String, Long> defaultParams() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put(STASH_BUCKETS, (long) DEFAULT_STASH_BUCKETS);
    m.put(NORMAL_BUCKETS, (long) DEFAULT_NORMAL_BUCKETS);
    m.put(INSERT_TECHNIQUES, (long) DEFAULT_INSERT_TECHNIQUES);
    return m;
  }

  @Override
  public long[] headerParams(TableOptions options) {
    long stash = options.param(STASH_BUCKETS, DEFAULT_STASH_BUCKETS);
    DashEhTable.checkStash(stash);
    long normal = options.param(NORMAL_BUCKETS, DEFAULT_NORMAL_BUCKETS);
    DashEhTable.checkNormal(normal);
    techniques(options);
    return new long[] {stash, normal};
  }

  @Override
  public LongHashTable create(Pool pool, TableOptions options) {
    long[] p = headerParams(options);
    return DashEhTable.create(pool, (int) p[1], (int) p[0], options.initialCapacity(), false, techniques(options));
  }

  @Override
  public LongHashTable open(Pool pool, TableOptions options) {
    return DashEhTable.open(checkParams(pool, options), false, techniques(options));
  }

  @Override
  public boolean pointerMode() {
    return true;
  }

  @Override
  public BytesTable createBytes(Pool pool, TableOptions options) {
    long[] p = headerParams(options);
    return new DashPointerTable(DashEhTable.create(pool, (int) p[1], (int) p[0], options.initialCapacity(), true,
        techniques(options)));
  }

  @Override
  public BytesTable openBytes(Pool pool, TableOptions options) {
    return new DashPointerTable(DashEhTable.open(checkParams(pool, options), true, techniques(options)));
  }

  /** The {@code insertTechniques} parameter, checked. */
  private static int techniques(TableOptions options) {
    long t = options.param(INSERT_TECHNIQUES, DEFAULT_INSERT_TECHNIQUES);
    DashEhTable.checkTechniques(t);
    return (int) t;
  }

  /**
   * Refuses a pool whose stash or normal bucket count (its header's parameters 0 and 1) differs
   * from one the options set explicitly, before the table is opened (nothing is written; the
   * caller gives the file back as it was); parameters left unset take the pool's.
   */
  private static Pool checkParams(Pool pool, TableOptions options) {
    long[] recorded = pool.schemeParams();
    Map<String, Long> asked = options.params();
    String wrong = differs(asked, STASH_BUCKETS, recorded.length < 1 ? 0 : recorded[0])
        + differs(asked, NORMAL_BUCKETS, DashEhTable.normalOf(recorded.length < 2 ? 0 : recorded[1]));
    if (!wrong.isEmpty()) {
      String where = pool.path() == null ? "volatile pool" : pool.path().toString();
      throw new UncheckedIOException(new SchemeMismatchException(where + ": the dash-eh table was created with" + wrong
          + ": open it without these parameters, or with the values it was created with"));
    }
    return pool;
  }

  private static String differs(Map<String, Long> asked, String name, long recorded) {
    Long v = asked.get(name);
    return v == null || v == recorded ? "" : " " + name + " = " + recorded + " (asked for " + v + ")";
  }
}
