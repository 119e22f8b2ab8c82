package io.pmhash.schemes.dash;

import io.pmhash.core.Pool;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.map.spi.BytesTable;
import io.pmhash.map.spi.SchemeProvider;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code dash-eh} scheme for {@link io.pmhash.map.PmHash}. One parameter, {@code
 * stashBuckets} (2..4, default 2), recorded as pool header parameter 0 and in the table
 * header; {@link TableOptions#initialCapacity()} sizes the first directory.
 */
public final class DashEhProvider implements SchemeProvider {
  /** The scheme name in pool headers. */
  public static final String NAME = "dash-eh";
  /** The stash-size parameter. */
  public static final String STASH_BUCKETS = "stashBuckets";
  /** Its default (Dash §6.2). */
  public static final int DEFAULT_STASH_BUCKETS = 2;

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

  @Override
  public Map<String, Long> defaultParams() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put(STASH_BUCKETS, (long) DEFAULT_STASH_BUCKETS);
    return m;
  }

  @Override
  public long[] headerParams(TableOptions options) {
    long stash = options.param(STASH_BUCKETS, DEFAULT_STASH_BUCKETS);
    if (stash < DashLayout.MIN_STASH || stash > DashLayout.MAX_STASH) {
      throw new IllegalArgumentException("dash-eh parameter stashBuckets must be 2..4, got " + stash);
    }
    return new long[] {stash};
  }

  @Override
  public LongHashTable create(Pool pool, TableOptions options) {
    return DashEhTable.create(pool, (int) headerParams(options)[0], options.initialCapacity());
  }

  @Override
  public LongHashTable open(Pool pool, TableOptions options) {
    return DashEhTable.open(pool);
  }

  @Override
  public boolean pointerMode() {
    return true;
  }

  @Override
  public BytesTable createBytes(Pool pool, TableOptions options) {
    return new DashPointerTable(DashEhTable.create(pool, (int) headerParams(options)[0], options.initialCapacity(), true));
  }

  @Override
  public BytesTable openBytes(Pool pool, TableOptions options) {
    return new DashPointerTable(DashEhTable.open(pool, true));
  }
}
