package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashLayout.*;
import static io.pmhash.schemes.dash.DashSegment.shapeAcquire;

import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import java.lang.foreign.MemorySegment;

/**
 * Segment merge and directory halving when the load falls (Dash §4.7 mentions merge; the
 * paper gives no protocol, so this one is ours). Buddies L (depth D, pattern 2q) and R (D,
 * 2q + 1, L's side link) merge into L (D − 1, q) when together they hold at most a quarter of
 * a segment's slots. With every bucket of L, then of R, and then the directory lock held:
 *
 * <ol>
 *   <li>L's state becomes MERGING; persisted (recovery now knows L may hold R's records).
 *   <li>R's records are copied into free slots of L ({@link DashSegment#bulkInsert}: every pair,
 *       a drain, every bitmap, a drain); they are invisible, L's shape does not cover them. If
 *       one does not fit, no bitmap has changed and L returns to NORMAL: no merge.
 *   <li>One redo step: L's shape (D − 1, MERGING, q), L's side link = R's, L's merge victim =
 *       R, R's shape (D, MERGED, none): from here L covers R's range and R covers nothing.
 *   <li>Directory entries naming R now name L; persisted.
 *   <li>One redo step: R freed (reused after the epoch grace period), L's victim cleared and
 *       its state NORMAL.
 *   <li>If every segment's depth is now below the global depth, the directory is halved: a new
 *       one of half the entries (entry i = old entry 2i) is filled, flushed, published and the
 *       old one freed in one redo step.
 * </ol>
 *
 * Recovery of a MERGING segment rolls step 2 back when there is no victim (drops what the
 * shape does not cover) and rolls steps 4–5 forward when there is. A reader that reaches a
 * MERGED segment through a stale entry helps: it recovers the left buddy (the segment of the
 * first directory entry of the merged range, never stale) and retries.
 */
final class DashMerge {
  private final DashEhTable table;
  private final Pool pool;
  private final Persistence p;
  private final DashSegment segs;

  DashMerge(DashEhTable table) {
    this.table = table;
    this.pool = table.pool;
    this.p = table.persistence;
    this.segs = table.segments;
  }

  long threshold() {
    return table.slots(1) / 4;
  }

  /** Merges {@code seg} with its buddy if both are NORMAL and together lightly loaded. */
  void maybeMerge(long seg) {
    MemorySegment m = pool.memory();
    long shape = shapeAcquire(m, seg);
    int d = depthOf(shape);
    if (d == 0 || stateOf(shape) != NORMAL) {
      return;
    }
    long pattern = patternOf(shape);
    long left;
    long right;
    if ((pattern & 1) == 0) {
      left = seg;
      right = (long) LONG.getAcquire(m, seg + SEG_SIDE);
    } else {
      long dir = (long) LONG.getAcquire(m, table.header + HDR_DIRECTORY);
      int g = (int) INT.get(m, dir + DIR_DEPTH);
      if (g < d) {
        return;
      }
      left = (long) LONG.getAcquire(m, dir + DIR_ENTRIES + 8 * ((pattern & ~1L) << (g - d)));
      right = seg;
    }
    if (left == 0 || right == 0 || left == right) {
      return;
    }
    m = pool.memory();
    for (long s : new long[] {left, right}) {
      if ((long) LONG.getAcquire(m, s + SEG_VERSION) != table.globalVersion) {
        table.recovery.recover(m, s);
      }
    }
    if (!light(m, seg, seg == left ? right : left)) {
      return;
    }
    segs.lockAll(m, left);
    try {
      segs.lockAll(m, right);
      try {
        long ls = shapeAcquire(m, left);
        long rs = shapeAcquire(m, right);
        long q = patternOf(ls) >>> 1;
        if (ls != shape(d, NORMAL, q << 1) || rs != shape(d, NORMAL, (q << 1) | 1)
            || (long) LONG.get(m, left + SEG_SIDE) != right
            || !light(m, left, right)) {
          return;
        }
        table.directoryLock.lock();
        try {
          if (merge(m, left, right, d, q)) {
            if (d == table.globalDepth() && table.segmentsAtGlobalDepth >= 0) {
              table.segmentsAtGlobalDepth -= 2;
            }
            halveIfPossible();
          }
        } finally {
          table.directoryLock.unlock();
        }
      } finally {
        segs.unlockAll(m, right);
      }
    } finally {
      segs.unlockAll(m, left);
    }
  }

  /**
   * Whether two buddies together hold at most {@link #threshold()} records. Each count stops
   * once it passes what is left of the threshold, so a loaded segment costs a few bucket lines,
   * not all of them. Every delete that empties a bucket asks (62,333 of the workload's 5M deletes
   * with 1M preloaded keys); counting the emptied segment and then both buddies in full took
   * 180–220 ms of its 2.0–2.2 s delete phase, this 150–170 ms: most of the questions come late,
   * when the segments are light and every bucket has to be counted.
   */
  private boolean light(MemorySegment m, long first, long second) {
    long limit = threshold();
    long n = segs.records(m, first, limit);
    return n <= limit && n + segs.records(m, second, limit - n) <= limit;
  }

  private boolean merge(MemorySegment m, long left, long right, int d, long q) {
    long leftShape = shape(d, NORMAL, q << 1);
    LONG.setRelease(m, left + SEG_SHAPE, shape(d, MERGING, q << 1));
    // PERSIST(§4.7 merge step 1): L is MERGING before it holds any copy of R's records: the
    // flush is ordered by the drain of the first copy's pair, before any copy's bitmap bit
    p.flush(left + SEG_SHAPE, 8);
    int total = (int) segs.records(m, right);
    long[] keys = new long[total];
    long[] values = new long[total];
    int n = 0;
    for (int i = 0; i < segs.normal + segs.stash; i++) {
      long b = DashSegment.bucket(right, i);
      for (int a = DashBucket.allocated(DashBucket.bitmap(m, b)); a != 0 && n < total; a &= a - 1) {
        int slot = Integer.numberOfTrailingZeros(a);
        keys[n] = DashBucket.key(m, b, slot);
        values[n++] = DashBucket.value(m, b, slot);
      }
    }
    if (!segs.bulkInsert(m, left, keys, values, n)) {
      rollBack(m, left, leftShape);
      return false;
    }
    try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
      pub.set(left + SEG_SHAPE, shape(d - 1, MERGING, q))
          .set(left + SEG_SIDE, (long) LONG.get(m, right + SEG_SIDE))
          .set(left + SEG_VICTIM, right)
          .set(right + SEG_SHAPE, shape(d, MERGED, 0xFFFF_FFFFL));
      // PERSIST(§4.7 merge step 3): R's records are durable in L (each insert drained) before L covers R's range
      pub.commit();
    }
    finish(m, left, right, d - 1, q);
    table.merges.incrementAndGet();
    return true;
  }

  /** Steps 4–5: directory entries of R name L, R freed, L NORMAL. Idempotent; also recovery's. */
  void finish(MemorySegment mapping, long left, long victim, int depth, long q) {
    MemorySegment m = pool.memory(); // may be newer than the caller's: covers a directory published after it
    table.directoryLock.lock();
    try {
      long dir = (long) LONG.getAcquire(m, table.header + HDR_DIRECTORY);
      int g = (int) INT.get(m, dir + DIR_DEPTH);
      long first = ((q << 1) | 1) << (g - depth - 1);
      long count = 1L << (g - depth - 1);
      long e0 = dir + DIR_ENTRIES + 8 * first;
      for (long i = 0; i < count; i++) {
        if ((long) LONG.get(m, e0 + 8 * i) == victim) {
          LONG.setRelease(m, e0 + 8 * i, left);
        }
      }
      p.flush(e0, 8 * count);
      // PERSIST(§4.7 merge step 4): no directory entry names R before R is freed
      p.drain();
      try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
        if (pool.schemeAllocator().owned(victim)) {
          pub.deferFree(victim);
        }
        pub.set(left + SEG_VICTIM, 0).set(left + SEG_SHAPE, shape(depth, NORMAL, q));
        // PERSIST(§4.7 merge step 5): R freed and L NORMAL together: R is neither leaked nor freed twice
        pub.commit();
      }
    } finally {
      table.directoryLock.unlock();
    }
  }

  /** Step 2 failed: L drops the copies and returns to NORMAL. */
  private void rollBack(MemorySegment m, long left, long shape) {
    segs.dropUncovered(m, left, shape);
    segs.rebuildOverflow(m, left);
    segs.flushAllMeta(left);
    // PERSIST(§4.7 merge rollback): the copies are gone before L leaves MERGING
    p.drain();
    LONG.setRelease(m, left + SEG_SHAPE, shape);
    // PERSIST(§4.7 merge rollback): L is NORMAL again
    p.persist(left + SEG_SHAPE, 8);
  }

  /** Halves the directory if no segment needs its last bit; the caller holds the lock. */
  void halveIfPossible() {
    MemorySegment m = pool.memory();
    long old = (long) LONG.getAcquire(m, table.header + HDR_DIRECTORY);
    int g = (int) INT.get(m, old + DIR_DEPTH);
    if (g == 0) {
      return;
    }
    if (table.segmentsAtGlobalDepth < 0) {
      int top = 0;
      for (long seg : table.segmentOffsets()) {
        if (depthOf(shapeAcquire(pool.memory(), seg)) >= g) {
          top++;
        }
      }
      table.segmentsAtGlobalDepth = top;
    }
    if (table.segmentsAtGlobalDepth != 0) {
      return;
    }
    long bytes = directoryBytes(g - 1);
    SchemeAllocator.Reserved r = pool.schemeAllocator().reserve(bytes);
    m = pool.memory();
    long n = r.offset();
    m.asSlice(n, DIR_ENTRIES).fill((byte) 0);
    INT.set(m, n + DIR_DEPTH, g - 1);
    long entries = 1L << (g - 1);
    for (long i = 0; i < entries; i++) {
      LONG.set(m, n + DIR_ENTRIES + 8 * i, (long) LONG.get(m, old + DIR_ENTRIES + 16 * i));
    }
    p.flush(n, bytes);
    table.route.changing(); // before the step frees the current directory (DirectoryRoute)
    try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
      pub.publish(r, table.header + HDR_DIRECTORY).deferFree(old);
      // PERSIST(§4.7 halving): the new directory is filled and durable before the step that publishes it commits
      pub.commit();
    } finally {
      table.route.published(pool.memory());
    }
    table.halvings.incrementAndGet();
    table.segmentsAtGlobalDepth = -1;
  }
}
