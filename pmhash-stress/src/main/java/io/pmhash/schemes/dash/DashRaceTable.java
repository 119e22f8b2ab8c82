package io.pmhash.schemes.dash;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.concurrent.VersionLock;
import io.pmhash.core.hash.Hashing;
import io.pmhash.stress.QuietPools;
import java.lang.foreign.MemorySegment;

/**
 * A one-segment dash-eh table (global depth 0, 64 normal buckets, 2 stash buckets) on a small
 * volatile pool, for the jcstress tests of {@link DashOptimisticRead}: one per jcstress state,
 * closed by the state's arbiter. It lives in the dash package (pmhash-stress runs on the class
 * path, where that is the same runtime package as pmhash-schemes') to reach the package-private
 * bucket code without adding API to pmhash-schemes: its setup reads bucket counts, and the
 * negative control reads a bucket without validating.
 */
final class DashRaceTable {
  /** The target bucket every race is about. */
  static final int Y = 10;

  final Pool pool;
  final DashEhTable table;
  final long seg;

  DashRaceTable() {
    QuietPools.install();
    pool = Pool.createVolatile(PoolOptions.defaults().withScheme(DashEhProvider.NAME, DashLayout.LAYOUT_VERSION, 2)
        .withInitialSize(1 << 20).withMaxSize(4 << 20));
    table = DashEhTable.create(pool, 2, 0);
    seg = table.locate(pool.memory(), 0);
  }

  /** The records in normal bucket {@code i} (mod 64). */
  int count(int i) {
    return DashBucket.count(DashBucket.bitmap(pool.memory(), DashSegment.bucket(seg, i & (DashLayout.NORMAL_BUCKETS - 1))));
  }

  /** The key in slot {@code slot} of normal bucket {@code i}. */
  long keyAt(int i, int slot) {
    return DashBucket.key(pool.memory(), DashSegment.bucket(seg, i & (DashLayout.NORMAL_BUCKETS - 1)), slot);
  }

  /** The bitmap of normal bucket {@code i}. */
  int bitmapOf(int i) {
    return DashBucket.bitmap(pool.memory(), DashSegment.bucket(seg, i & (DashLayout.NORMAL_BUCKETS - 1)));
  }

  void close() {
    table.close();
  }

  /** The target bucket of a key. */
  static int target(long key) {
    return DashSegment.bucketIndex(Hashing.hash(key), DashLayout.NORMAL_BUCKETS - 1);
  }

  /** The {@code n}-th key (from 1 up) whose target bucket is {@code y}. */
  static long keyFor(int y, int n) {
    int seen = 0;
    for (long k = 1; ; k++) {
      if (target(k) == (y & (DashLayout.NORMAL_BUCKETS - 1)) && ++seen == n) {
        return k;
      }
    }
  }

  /**
   * The negative control's read: Dash Algorithm 3 as {@link DashEhTable#get} runs it (the
   * target and probing bucket, then the stash) but with no version snapshot, no wait for a
   * writer and no validation. Returns {@code absent} if not found.
   */
  long getUnvalidated(long key, long absent) {
    long h = Hashing.hash(key);
    int fp = DashSegment.fingerprintOf(h);
    int y = table.segments.bucketIndex(h);
    MemorySegment m = pool.memory();
    long b1 = DashSegment.bucket(seg, y);
    long b2 = DashSegment.bucket(seg, (y + 1) & (DashLayout.NORMAL_BUCKETS - 1));
    int slot = DashBucket.find(m, b1, DashBucket.bitmap(m, b1), key, fp);
    if (slot >= 0) {
      return DashBucket.value(m, b1, slot);
    }
    slot = DashBucket.find(m, b2, DashBucket.bitmap(m, b2), key, fp);
    if (slot >= 0) {
      return DashBucket.value(m, b2, slot);
    }
    long loc = table.segments.findInStash(m, seg, b1, b2, key, fp);
    return loc < 0 ? absent : DashBucket.value(m, loc & ~63L, (int) loc & 63);
  }
}
