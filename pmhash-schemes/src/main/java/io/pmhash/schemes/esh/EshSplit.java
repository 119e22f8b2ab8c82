package io.pmhash.schemes.esh;

import static io.pmhash.schemes.esh.EshLayout.*;

import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.hash.Hashing;
import io.pmhash.schemes.internal.ExtendibleDirectory;
import java.lang.foreign.MemorySegment;

/**
 * Segment split and directory doubling (ESH §4.3.5: "directory doubling and rehashing of records
 * will be initiated when there is no space in all buckets in the same segment"; the directory is
 * CCEH's, Fig. 4.2). The persist order is derived from two invariants, not from published code
 * (there is none):
 *
 * <ol type="I">
 *   <li><b>A directory entry always names a segment whose durable shape covers the entry.</b> A
 *       segment's shape is raised only after every entry of the half it gives up durably names the
 *       new segment, and a local depth never exceeds the durable global depth.
 *   <li><b>Nothing is reachable before it is durable, and nothing durable is unreachable.</b> The
 *       new segment is complete and flushed before the allocator's redo step that makes it owned
 *       and links it as the old segment's split child.
 * </ol>
 *
 * <h2>Split of S (depth d, pattern p) into S (d + 1, 2p) and N (d + 1, 2p + 1)</h2>
 *
 * Every bucket lock of S is held throughout (readers of S retry); the directory lock from step 2.
 *
 * <ol>
 *   <li>N is reserved (not owned) and built: the records of S whose hash prefix is 2p + 1 are
 *       placed afresh, each in its home bucket or the next with room (the paper's "segment split
 *       will rehash all records to their proper buckets"), metadata exact, states current, split
 *       parent = S. All of N is flushed.
 *   <li>If d equals the global depth, the directory is doubled first ({@link
 *       ExtendibleDirectory#doubleInto}).
 *   <li>One redo step: N becomes owned and S's split child names it. From here a crash rolls the
 *       split forward; S still holds and covers every record.
 *   <li>The entries of N's half that name S are set to N; flushed, drained.
 *   <li>S drops N's records and rebuilds its metadata ({@link EshSegment#rebuild}); S's shape
 *       becomes (d + 1, 2p); flushed, drained. S's records keep their slots.
 *   <li>S's split child and N's split parent are cleared; flushed, drained.
 * </ol>
 *
 * Drains: 4 (redo step) + 3 = 7, plus 4 for a doubling. Steps 4–6 are idempotent; the lazy recovery
 * of S (or of N, through its parent word) repeats them ({@link EshRecovery}).
 */
final class EshSplit {
  private final EshTable table;
  private final Pool pool;
  private final Persistence p;
  private final EshSegment segs;

  EshSplit(EshTable table) {
    this.table = table;
    this.pool = table.pool;
    this.p = table.persistence;
    this.segs = table.segments;
  }

  /** Splits {@code seg} unless its shape is no longer {@code expected}. */
  void split(long seg, long expected) {
    MemorySegment m = pool.memory();
    segs.lockAll(m, seg);
    try {
      long shape = EshSegment.shapeAcquire(m, seg);
      if (shape != expected) {
        return; // another thread split it first
      }
      int d = depthOf(shape);
      long pattern = patternOf(shape);
      if (d >= ExtendibleDirectory.MAX_DEPTH) {
        throw new IllegalStateException("esh: segment at depth " + d + " is full and cannot split further: too many keys share a " + d + "-bit hash prefix");
      }
      // step 1: build N, not yet owned
      SchemeAllocator.Reserved r = pool.schemeAllocator().reserve(segs.bytes);
      m = pool.memory();
      long n = r.offset();
      int[] moved = new int[segs.buckets];
      long[] hashes = new long[segs.buckets * segs.pairs];
      build(m, seg, n, d, pattern, moved, hashes);
      table.directoryLock.lock();
      try {
        // step 2: the global depth is durably at least d + 1 before the split shows anywhere
        if (table.globalDepth() == d) {
          ExtendibleDirectory.doubleInto(pool, pool.schemeAllocator(), table.route, EshProvider.NAME);
          table.doublings.incrementAndGet();
        }
        // step 3: N owned and recorded as S's split child, atomically
        try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
          pub.publish(r, seg + SEG_CHILD);
          // PERSIST(§4.3.5 split, invariant II): N is complete and flushed (ordered by the redo entries' drain) before the step that owns and links it commits
          pub.commit();
        }
        finish(seg, n, d, pattern, moved, hashes);
      } finally {
        table.directoryLock.unlock();
      }
      table.splits.incrementAndGet();
    } finally {
      segs.unlockAll(m, seg);
    }
  }

  /**
   * Step 1: N holds S's records of the right half, placed afresh. Fills {@code moved} (per
   * bucket of S, the slots of the records N took) and {@code hashes} (slot {@code s} of bucket
   * {@code i}: the hash of its key at {@code i * pairs + s}), so that step 5 hashes no key again.
   */
  private void build(MemorySegment m, long seg, long n, int d, long pattern, int[] moved, long[] hashes) {
    m.asSlice(n, segs.bytes).fill((byte) 0);
    long right = 2 * pattern + 1;
    LONG.set(m, n + SEG_SHAPE, shape(d + 1, right));
    LONG.set(m, n + SEG_PARENT, seg);
    LONG.set(m, n + SEG_RECOVERY_LOCK, 2 * table.globalVersion);
    for (int i = 0; i < segs.buckets; i++) {
      INT.set(m, segs.bucket(n, i) + STATE, table.stateTag);
    }
    // first which records go: the hash bit below S's prefix sends a record to N, a coin toss per
    // record, so it is taken without a branch (as Dash's split does); a branch on it mispredicted
    // half the time, and the key loads behind it started over with it
    int bit = 63 - d;
    for (int i = 0; i < segs.buckets; i++) {
      long b = segs.bucket(seg, i);
      int toN = 0;
      for (int a = alloc(EshSegment.commitAcquire(m, b)); a != 0; a &= a - 1) {
        int slot = Integer.numberOfTrailingZeros(a);
        long h = Hashing.hash(EshSegment.key(m, b, slot));
        assert ExtendibleDirectory.prefix(h, d) == pattern : "a record of S that S's shape does not cover";
        hashes[i * segs.pairs + slot] = h;
        toN |= (int) (h >>> bit & 1) << slot;
      }
      moved[i] = toN;
    }
    for (int i = 0; i < segs.buckets; i++) {
      long b = segs.bucket(seg, i);
      for (int a = moved[i]; a != 0; a &= a - 1) {
        int slot = Integer.numberOfTrailingZeros(a);
        if (!segs.place(m, n, EshSegment.key(m, b, slot), EshSegment.value(m, b, slot), hashes[i * segs.pairs + slot])) {
          throw new IllegalStateException("esh: a split's new half cannot hold the records of its old segment");
        }
      }
    }
    p.flush(n, segs.bytes);
  }

  /**
   * Steps 4–6 for S (depth d, pattern p before the split) and its split child N. Idempotent: the
   * recovery of S runs it when S's split child is set. The caller holds the directory lock (or is
   * recovery, which takes it here) and has S to itself.
   *
   * @param moved what {@link #build} gave N, with {@code hashes}, or both null (recovery): S
   *     then keeps, by their hashes, the records its new shape covers. Every record of S is
   *     covered by S's shape before the split (S was recovered before it filled up, and is
   *     locked), so the two are the same records.
   * @param hashes the hashes of S's records from {@link #build}, or null
   */
  void finish(long seg, long n, int d, long pattern, int[] moved, long[] hashes) {
    MemorySegment m = pool.memory(); // covers a directory published after the caller's mapping
    ExtendibleDirectory.redirect(m, p, table.directory(m), seg, n, d + 1, 2 * pattern + 1);
    // PERSIST(§4.3.5 split step 4, invariant I): N's entries name N durably before S's shape gives up N's half
    p.drain();
    segs.rebuild(m, seg, d + 1, 2 * pattern, moved, hashes);
    LONG.setRelease(m, seg + SEG_SHAPE, shape(d + 1, 2 * pattern));
    p.flush(seg + SEG_SHAPE, 8);
    // PERSIST(§4.3.5 split step 5): S holds only its half at depth d + 1, with exact metadata, durably before the split child that makes recovery redo steps 4-5 is cleared
    p.drain();
    LONG.setRelease(m, seg + SEG_CHILD, 0L);
    LONG.setRelease(m, n + SEG_PARENT, 0L);
    p.flush(seg + SEG_CHILD, 8);
    p.flush(n + SEG_PARENT, 8);
    // PERSIST(§4.3.5 split step 6): the split is done; nothing is left for recovery
    p.drain();
  }
}
