package io.pmhash.schemes.cceh;

import static io.pmhash.schemes.cceh.CcehLayout.*;

import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.hash.Hashing;
import io.pmhash.schemes.internal.ExtendibleDirectory;
import java.lang.foreign.MemorySegment;

/**
 * Segment split and directory doubling (CCEH §3.4, Fig. 5 and 6), derived from two invariants
 * rather than from the published flush sequence (which broke both, see {@code
 * papers/README.md}):
 *
 * <ol type="I">
 *   <li><b>A directory entry always names a segment whose durable shape covers the entry.</b> A
 *       segment's local depth and pattern are raised only after every directory entry of the
 *       half it gives up durably names the new segment, and a local depth never exceeds the
 *       durable global depth.
 *   <li><b>Nothing is reachable before it is durable, and nothing durable is unreachable.</b> A
 *       new segment or directory is complete and flushed before the allocator step that makes it
 *       owned and reachable commits; that step is atomic (a redo record), so a crash never leaks
 *       a block.
 * </ol>
 *
 * <h2>Split of segment S (depth d, pattern p) into S (d + 1, 2p) and N (d + 1, 2p + 1)</h2>
 *
 * S's write lock is held throughout; the directory lock from step 2 to the end.
 *
 * <ol>
 *   <li>N is reserved (not yet owned) and built: S's pairs copied, N's bitmap holds the slots of
 *       the records whose hash prefix is 2p + 1 (same slots: the probe window is the same), shape
 *       (d + 1, 2p + 1), lock and split child 0. All of N is flushed.
 *   <li>If d equals the global depth, the directory is doubled first (below), so the global depth
 *       is durably at least d + 1 before anything of the split is.
 *   <li>One redo step: N becomes owned and S's split child names it. From here a crash rolls the
 *       split forward ({@link CcehRecovery}); S still holds and covers every record.
 *   <li>The directory entries of N's half (those naming S) are set to N, flushed, drained. N's
 *       records are reachable through N; S's copies of them are not reached any more.
 *   <li>S's bits of N's records are cleared and S's shape becomes (d + 1, 2p); flushed, one drain.
 *   <li>S's split child is cleared; flushed, drained: the split is done.
 * </ol>
 *
 * Drains: 4 (redo step) + 3 = 7, plus 4 for a doubling. Steps 4–6 are idempotent and recovery
 * repeats them while the split child is set. CCEH's code raised S's depth and both patterns
 * before the directory update; a crash in a doubling split then left local depth &gt; global
 * depth and keys unreachable. Here step 5 follows step 4's drain.
 *
 * <h2>Doubling (CCEH §3.4 Fig. 6), under the directory lock</h2>
 *
 * A directory of 2^(g+1) entries is reserved, filled (entry i of the old one becomes entries 2i
 * and 2i + 1) and flushed; one redo step publishes it into the table header and frees the old one
 * (reused only after the epoch grace period: a reader may still hold it). Readers see the new
 * directory only when the step applies, after its entries are durable; CCEH published first.
 */
final class CcehSplit {
  private final CcehTable table;
  private final Pool pool;
  private final Persistence p;

  CcehSplit(CcehTable table) {
    this.table = table;
    this.pool = table.pool;
    this.p = table.persistence;
  }

  /** Splits {@code seg} unless its shape is no longer {@code expected}; takes its write lock. */
  void split(long seg, long expected) {
    MemorySegment m = pool.memory();
    CcehSegment.writeLock(m, seg);
    try {
      long shape = CcehSegment.shapeAcquire(m, seg);
      if (shape != expected) {
        return; // another thread split it first
      }
      int d = depthOf(shape);
      long pattern = patternOf(shape);
      if (d >= MAX_DEPTH) {
        throw new IllegalStateException("cceh: segment at depth " + d + " has a full probe window and cannot split further: too many keys share a " + d + "-bit hash prefix and a bucket");
      }
      // step 1: build N, not yet owned
      SchemeAllocator.Reserved r = pool.schemeAllocator().reserve(SEGMENT_BYTES);
      m = pool.memory();
      long n = r.offset();
      long[] moving = build(m, seg, n, d, pattern);
      table.directoryLock.lock();
      try {
        // step 2: the global depth is durably at least d + 1 before the split shows anywhere
        if (table.globalDepth(m) == d) {
          doubleDirectory();
          m = pool.memory();
        }
        // step 3: N owned and recorded as S's split child, atomically
        try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
          pub.publish(r, seg + SEG_CHILD);
          // PERSIST(§3.4 split, invariant II): N is complete and flushed (ordered by the redo entries' drain) before the step that owns and links it commits
          pub.commit();
        }
        finish(m, seg, n, d, pattern, moving);
      } finally {
        table.directoryLock.unlock();
      }
      table.splits.incrementAndGet();
      table.segmentCount.incrementAndGet();
    } finally {
      CcehSegment.writeUnlock(m, seg);
    }
  }

  /**
   * Step 1: N holds S's records of the right half, in the same slots: those with hash bit d
   * (from the top) set, as every record of S is covered by S's shape (d, pattern) while no split
   * of S is in flight (S's write lock is held, and recovery finished any split at open).
   *
   * @return per bitmap word of S, the slots N took
   */
  private long[] build(MemorySegment m, long seg, long n, int d, long pattern) {
    MemorySegment.copy(m, seg + SEG_PAIRS, m, n + SEG_PAIRS, SEGMENT_BYTES - SEG_PAIRS);
    m.asSlice(n, SEG_PAIRS).fill((byte) 0);
    long[] moving = new long[BITMAP_WORDS];
    int bit = 63 - d;
    for (int w = 0; w < BITMAP_WORDS; w++) {
      long bits = CcehSegment.bitmapWord(m, seg, w);
      long taken = 0;
      for (long b = bits; b != 0; b &= b - 1) {
        int slot = Long.numberOfTrailingZeros(b);
        taken |= (Hashing.hash(CcehSegment.key(m, seg, 64 * w + slot)) >>> bit & 1) << slot; // no branch: a coin toss
      }
      moving[w] = taken;
      LONG.set(m, n + SEG_BITMAP + 8L * w, taken);
    }
    LONG.set(m, n + SEG_SHAPE, shape(d + 1, 2 * pattern + 1));
    p.flush(n, SEGMENT_BYTES);
    return moving;
  }

  /**
   * Steps 4–6 for S (depth d, pattern p before the split) and its split child N. Idempotent:
   * recovery runs it for every segment whose split child is set. The caller holds the directory
   * lock (or is recovery, alone).
   *
   * @param moving the slots {@link #build} gave N, per bitmap word, which S drops; or null
   *     (recovery): S keeps the records whose hash has its new pattern
   */
  void finish(MemorySegment m, long seg, long n, int d, long pattern, long[] moving) {
    ExtendibleDirectory.redirect(m, p, table.directory(m), seg, n, d + 1, 2 * pattern + 1);
    // PERSIST(§3.4 split step 4, invariant I): N's entries name N durably before S's shape gives up N's half
    p.drain();
    long left = 2 * pattern;
    for (int w = 0; w < BITMAP_WORDS; w++) {
      long off = seg + SEG_BITMAP + 8L * w;
      long bits = (long) LONG.get(m, off);
      long keep = moving != null ? bits & ~moving[w] : covered(m, seg, w, bits, d + 1, left);
      if (keep != bits) {
        LONG.setRelease(m, off, keep);
      }
    }
    LONG.setRelease(m, seg + SEG_SHAPE, shape(d + 1, left));
    p.flush(seg, SEG_PAIRS);
    // PERSIST(§3.4 split step 5): S holds only its half at depth d + 1 durably before the split child that makes recovery redo steps 4-5 is cleared
    p.drain();
    LONG.setRelease(m, seg + SEG_CHILD, 0L);
    p.flush(seg + SEG_CHILD, 8);
    // PERSIST(§3.4 split step 6): the split is done; nothing is left for recovery
    p.drain();
  }

  /** @return the slots of bitmap word {@code w} whose records' hashes have {@code pattern} at {@code depth} */
  private static long covered(MemorySegment m, long seg, int w, long bits, int depth, long pattern) {
    long keep = bits;
    for (long b = bits; b != 0; b &= b - 1) {
      int slot = 64 * w + Long.numberOfTrailingZeros(b);
      if (prefix(Hashing.hash(CcehSegment.key(m, seg, slot)), depth) != pattern) {
        keep &= ~(1L << slot);
      }
    }
    return keep;
  }

  /** Doubles the directory ({@link ExtendibleDirectory#doubleInto}); the caller holds the directory lock. */
  void doubleDirectory() {
    ExtendibleDirectory.doubleInto(pool, pool.schemeAllocator(), table.route, CcehProvider.NAME);
    table.doublings.incrementAndGet();
  }
}
