package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashBucket.*;
import static io.pmhash.schemes.dash.DashLayout.*;
import static io.pmhash.schemes.dash.DashSegment.bucket;

import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.concurrent.VersionLock;
import io.pmhash.schemes.internal.ExtendibleDirectory;
import java.lang.foreign.MemorySegment;

/**
 * Segment split and directory doubling (Dash §4.7), every step citing the paper.
 *
 * <p>A split of segment S (local depth d, pattern p) into S (d + 1, 2p) and N (d + 1, 2p + 1),
 * with every bucket of S locked:
 *
 * <ol>
 *   <li>If d equals the global depth, the directory is doubled first (below).
 *   <li>N is reserved (not yet owned: a crash leaks nothing) and built completely: S's buckets
 *       are copied and each bucket keeps exactly the records whose hash bit d (from the top) is
 *       1, in the same slot, so N's placement is S's and always fits; locks are zeroed and N's
 *       overflow metadata is rebuilt. Its header says (d + 1, NEW, 2p + 1), side link = S's.
 *       N is flushed. <em>Deviation:</em> the paper links N first and rehashes after, redoing
 *       the rehash in recovery; building N before anything links it needs no redo.
 *   <li>One redo step (the allocator's {@link SchemeAllocator.Step}): N becomes owned, S's side link
 *       becomes N, and S's shape word becomes (d + 1, SPLITTING, 2p), all or nothing. From here
 *       a key of the right half that reaches S is forwarded to N through the side link.
 *   <li>S drops the moved records (each bucket's bitmap restricted, one release store) and its
 *       overflow metadata is rebuilt; persisted.
 *   <li>Under the directory lock, the directory entries of N's half that still name S are set to
 *       N; persisted.
 *   <li>S's and N's states become NORMAL; persisted. (NEW on N is diagnostic: N is complete
 *       from step 3 on.)
 * </ol>
 *
 * A crash after step 3 leaves S in SPLITTING: its lazy recovery ({@link DashRecovery}) repeats
 * steps 4–6, each idempotent. Directory entries are written only under the directory lock,
 * so a split's entry updates never race with a doubling's copy.
 *
 * <p>Doubling, under the directory lock: a new directory of {@code 2^(g+1)} entries is reserved,
 * filled (entry i of the old one becomes entries 2i and 2i + 1) and flushed, then published into
 * the table header and the old one freed in one redo step; the old one is reused only after
 * the epoch grace period. The new directory is durable before it is published (CCEH published
 * first, see papers/README.md), and no local depth exceeds the global depth durably: the
 * doubling's redo step completes before the split's step 3 can raise S's depth.
 */
final class DashSplit {
  private final DashEhTable table;
  private final Pool pool;
  private final Persistence p;
  private final DashSegment segs;

  DashSplit(DashEhTable table) {
    this.table = table;
    this.pool = table.pool;
    this.p = table.persistence;
    this.segs = table.segments;
  }

  /**
   * Splits a full segment, unless its shape is no longer {@code expected} (another thread split
   * it first).
   */
  void split(long seg, long expected) {
    MemorySegment m = pool.memory();
    segs.lockAll(m, seg);
    try {
      int[] moved;
      long shape = DashSegment.shapeAcquire(m, seg);
      if (shape != expected) {
        return;
      }
      int d = depthOf(shape);
      long pattern = patternOf(shape);
      if (d >= MAX_GLOBAL_DEPTH) {
        throw new IllegalStateException("dash-eh: segment at depth " + d + " is full and cannot split further: too many keys share a " + d + "-bit hash prefix");
      }
      // the directory lock is held from the depth check until S's depth is raised, so that no
      // halving can slip between them
      table.directoryLock.lock();
      try {
        if (table.globalDepth() == d) {
          doubleDirectory();
          table.segmentsAtGlobalDepth = 0;
        }
        moved = buildAndLink(seg, shape, d, pattern);
        if (d + 1 == table.globalDepth() && table.segmentsAtGlobalDepth >= 0) {
          table.segmentsAtGlobalDepth += 2;
        }
      } finally {
        table.directoryLock.unlock();
      }
      m = pool.memory();
      // step 4: S keeps its half, the slots N did not take: every record of a NORMAL segment is
      // covered by its shape, so these are the records (d + 1, 2p) covers, which recovery's
      // dropUncovered keeps, without hashing every key a second time
      segs.dropSlots(m, seg, moved);
      segs.rebuildOverflow(m, seg);
      segs.flushAllMeta(seg);
      // PERSIST(§4.7 split step 2, "records moved to N are deleted in S"): S holds only its half before its state leaves SPLITTING
      p.drain();
      finish(m, seg, (long) LONG.getAcquire(m, seg + SEG_SIDE), d + 1, pattern << 1);
      table.splits.incrementAndGet();
    } finally {
      segs.unlockAll(m, seg);
    }
  }

  /**
   * Steps 2–3: build N and link it; S's shape becomes (d + 1, SPLITTING, 2p).
   *
   * @return per bucket of S, the slots whose records N took (hash bit d from the top set)
   */
  private int[] buildAndLink(long seg, long shape, int d, long pattern) {
    SchemeAllocator.Reserved r = pool.schemeAllocator().reserve(segs.bytes);
    MemorySegment m = pool.memory();
    long n = r.offset();
    int buckets = segs.normal + segs.stash;
    MemorySegment.copy(m, seg + SEG_BUCKETS, m, n + SEG_BUCKETS, buckets * BUCKET_BYTES);
    m.asSlice(n, SEG_BUCKETS).fill((byte) 0);
    LONG.set(m, n + SEG_SHAPE, shape(d + 1, NEW, 2 * pattern + 1));
    LONG.set(m, n + SEG_SIDE, (long) LONG.get(m, seg + SEG_SIDE));
    LONG.set(m, n + SEG_VERSION, table.globalVersion);
    int[] moved = new int[buckets];
    for (int i = 0; i < buckets; i++) {
      long sb = bucket(seg, i);
      long nb = bucket(n, i);
      int bm = bitmap(m, sb);
      moved[i] = slotsWithHashBit(segs, m, sb, bm, 1L << (63 - d));
      INT.set(m, nb + LOCK, 0);
      INT.set(m, nb + BITMAP, restrictTo(bm, moved[i]));
    }
    segs.rebuildOverflow(m, n);
    p.flush(n, segs.bytes);
    // step 3: link N, S becomes SPLITTING at depth d + 1, atomically
    try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
      pub.publish(r, seg + SEG_SIDE);
      pub.set(seg + SEG_SHAPE, shape(d + 1, SPLITTING, 2 * pattern));
      // PERSIST(§4.7 split steps 1-2): N is complete and durable (flushed above, ordered by the redo entries' drain) before the step that owns and links it commits
      pub.commit();
    }
    return moved;
  }

  /**
   * Steps 5–6 of a split whose S already holds only its half: point N's directory entries at N,
   * then leave SPLITTING. Idempotent; also run by recovery.
   */
  void finish(MemorySegment mapping, long seg, long n, int depth, long leftPattern) {
    MemorySegment m = pool.memory(); // may be newer than the caller's: covers a directory published after it
    table.directoryLock.lock();
    try {
      long dir = (long) LONG.getAcquire(m, table.header + HDR_DIRECTORY);
      ExtendibleDirectory.redirect(m, p, dir, seg, n, depth, leftPattern | 1);
      // PERSIST(§4.7 split step 3, directory update): N's entries name N before S leaves SPLITTING (until then recovery redoes this)
      p.drain();
    } finally {
      table.directoryLock.unlock();
    }
    LONG.setRelease(m, seg + SEG_SHAPE, shape(depth, NORMAL, leftPattern));
    // N may already be in use (and split again) if it was reached before S was recovered:
    // only a NEW right half becomes NORMAL here
    LONG.compareAndSet(m, n + SEG_SHAPE, shape(depth, NEW, leftPattern | 1), shape(depth, NORMAL, leftPattern | 1));
    p.flush(seg + SEG_SHAPE, 8);
    p.flush(n + SEG_SHAPE, 8);
    // PERSIST(§4.7 split done): both segments NORMAL; nothing is left for recovery
    p.drain();
  }

  /** Doubles the directory ({@link ExtendibleDirectory#doubleInto}); the caller holds the directory lock. */
  void doubleDirectory() {
    ExtendibleDirectory.doubleInto(pool, pool.schemeAllocator(), table.route, DashEhProvider.NAME);
    table.doublings.incrementAndGet();
  }

  /**
   * The allocated slots of a bucket whose key's hash has {@code hashBit} set: the records a
   * split moves (Dash-EH: bit d from the top; Dash-LH: bit 14 + d from the bottom).
   *
   * @return a 14-bit slot mask
   */
  static int slotsWithHashBit(DashSegment segs, MemorySegment m, long b, int bitmap, long hashBit) {
    int bit = Long.numberOfTrailingZeros(hashBit);
    int out = 0;
    for (int a = allocated(bitmap); a != 0; a &= a - 1) {
      int slot = Integer.numberOfTrailingZeros(a);
      out |= (int) (segs.hashAt(m, b, slot) >>> bit & 1) << slot; // no branch: the bit is a coin toss
    }
    return out;
  }

  /** For tests: whether every lock of a segment is free. */
  boolean allUnlocked(MemorySegment m, long seg) {
    for (int i = 0; i < segs.normal + segs.stash; i++) {
      if (VersionLock.isLocked(m, bucket(seg, i) + LOCK)) {
        return false;
      }
    }
    return true;
  }
}
