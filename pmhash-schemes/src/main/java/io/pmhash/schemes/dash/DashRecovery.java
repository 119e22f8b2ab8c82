package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashBucket.*;
import static io.pmhash.schemes.dash.DashLayout.*;
import static io.pmhash.schemes.dash.DashSegment.bucket;

import io.pmhash.core.Persistence;
import io.pmhash.core.concurrent.VersionLock;
import io.pmhash.schemes.internal.Damage;
import java.lang.foreign.MemorySegment;

/**
 * Lazy segment recovery (Dash §4.8). Opening a table recovers nothing ({@link DashEhTable#open}); a
 * segment whose recovery version differs from the table's global version is recovered by the
 * first thread that touches it, under the segment's recovery lock, before that thread (or any
 * other) uses it:
 *
 * <ol>
 *   <li>clear every bucket lock (a lock held at the crash stays set in the image);
 *   <li>finish an interrupted split (state SPLITTING): drop every record the segment's shape no
 *       longer covers (they are in the side-linked N, which was complete before it was linked),
 *       then {@link DashSplit#finish} (directory entries, states); finish an interrupted merge
 *       (MERGING with a victim: {@link DashMerge#finish}) or roll it back (MERGING without:
 *       drop the copies); leave a MERGED segment alone;
 *   <li>recompute the fingerprint of every record from its key (an insert persists the
 *       fingerprint with the bitmap's line, not before it);
 *   <li>remove duplicates left by an interrupted displacement: a key in both bucket y and y + 1
 *       (fingerprints first, keys only where they match); the copy in y + 1 goes;
 *   <li>recount each bucket and rebuild the overflow metadata from the stash records (it is
 *       not crash-consistent by design, §4.6);
 *   <li>persist all of it, then persist the segment's version = global version.
 * </ol>
 *
 * Every step is idempotent, so a crash during recovery only repeats it at the next open (with a
 * new global version). The recovery lock is a word holding {@code 2 * version + 1} while held in
 * that version; a value left by an earlier version is free, so a lock held at a crash never
 * blocks. The C++ code never persisted the segment version after recovery; ours does.
 */
final class DashRecovery {
  private final DashEhTable table;
  private final Persistence p;
  private final DashSegment segs;

  DashRecovery(DashEhTable table) {
    this.table = table;
    this.p = table.persistence;
    this.segs = table.segments;
  }

  /** Recovers {@code seg} unless another thread did or does. */
  void recover(MemorySegment m, long seg) {
    long gv = table.globalVersion;
    if (!lockForRecovery(m, seg, gv)) {
      return;
    }
    try {
      if ((long) LONG.getAcquire(m, seg + SEG_VERSION) != gv) {
        repair(m, seg);
        markRecovered(m, p, seg, gv);
        table.recoveredSegments.incrementAndGet();
      }
    } finally {
      unlockRecovery(m, seg, gv);
    }
  }

  /**
   * Takes a segment's recovery lock ({@code 2 * gv + 1} while held in version {@code gv}; a
   * value left by an earlier version is free, so a lock held at a crash never blocks). Shared
   * by Dash-EH and Dash-LH, whose segment headers keep the version and the lock at the same
   * offsets.
   *
   * @return false if the segment is already recovered to {@code gv} (nothing locked)
   */
  static boolean lockForRecovery(MemorySegment m, long seg, long gv) {
    long held = 2 * gv + 1;
    for (;;) {
      if ((long) LONG.getAcquire(m, seg + SEG_VERSION) == gv) {
        return false;
      }
      long w = (long) LONG.getAcquire(m, seg + SEG_RECOVERY_LOCK);
      if (w == held) {
        // bounded: a word that says "held in this version" with no thread recovering is damage
        Damage.awaitWordChange(m, seg + SEG_RECOVERY_LOCK, held, o -> (long) LONG.getAcquire(m, o), "dash segment recovery lock");
        continue;
      }
      if (LONG.compareAndSet(m, seg + SEG_RECOVERY_LOCK, w, held)) {
        return true;
      }
    }
  }

  /** Releases the recovery lock taken by {@link #lockForRecovery}. */
  static void unlockRecovery(MemorySegment m, long seg, long gv) {
    LONG.setRelease(m, seg + SEG_RECOVERY_LOCK, 2 * gv);
  }

  /** Persists the segment's version = {@code gv}; the caller has drained its repair. */
  static void markRecovered(MemorySegment m, Persistence p, long seg, long gv) {
    LONG.setRelease(m, seg + SEG_VERSION, gv);
    p.flush(seg + SEG_VERSION, 8);
    // PERSIST(§4.8): the segment's version says "recovered" only after the repair is durable (drained in repair)
    p.drain();
  }

  /**
   * The record steps of the repair (3: fingerprints, 4: duplicates, 5: counts) over the first {@code buckets} buckets of a segment (normal
   * then stash): fingerprints from keys, displacement duplicates, counts. Plain stores; the
   * caller rebuilds the overflow metadata, flushes and drains. Shared with Dash-LH.
   */
  static void repairRecords(DashSegment segs, MemorySegment m, long seg, int buckets) {
    // (3, first) fingerprints: an insert persists the pair before the bitmap, and the
    // fingerprint only with the bitmap's line, so a crash may keep a record without its
    // fingerprint; every allocated slot gets its fingerprint back from its key
    for (int i = 0; i < buckets; i++) {
      refreshFingerprints(segs, m, bucket(seg, i));
    }
    // (2) duplicates from an interrupted displacement: the same key in buckets y and y + 1
    for (int y = 0; y < segs.normal; y++) {
      long b = bucket(seg, y);
      long next = bucket(seg, (y + 1) & segs.mask);
      int bm = bitmap(m, b);
      for (int a = allocated(bm); a != 0; a &= a - 1) {
        int slot = Integer.numberOfTrailingZeros(a);
        int nbm = bitmap(m, next);
        int dup = find(m, next, nbm, key(m, b, slot), fingerprint(m, b, slot));
        if (dup >= 0) {
          setBitmapRelease(m, next, withoutSlot(nbm, dup));
        }
      }
    }
    // (3) counts
    for (int i = 0; i < buckets; i++) {
      recount(m, bucket(seg, i));
    }
  }

  /** Recomputes the fingerprint of every allocated slot of a bucket from its hash (never a record load). */
  static void refreshFingerprints(DashSegment segs, MemorySegment m, long b) {
    for (int a = allocated(bitmap(m, b)); a != 0; a &= a - 1) {
      int slot = Integer.numberOfTrailingZeros(a);
      BYTE.set(m, b + FP + slot, (byte) DashSegment.fingerprintOf(segs.hashAt(m, b, slot)));
    }
  }

  /** Rewrites a bucket's count (and clears membership bits of free slots) from its allocation bits. */
  static void recount(MemorySegment m, long b) {
    int bm = bitmap(m, b);
    setBitmapRelease(m, b, restrictTo(bm, allocated(bm)));
  }

  private void repair(MemorySegment m, long seg) {
    int buckets = segs.normal + segs.stash;
    // (1) clear bucket locks
    for (int i = 0; i < buckets; i++) {
      VersionLock.reset(m, bucket(seg, i) + LOCK);
    }
    long shape = DashSegment.shapeAcquire(m, seg);
    int state = stateOf(shape);
    if (state == MERGED) {
      return; // the dead right buddy of a merge: its left buddy's recovery finishes the merge
    }
    boolean splitting = state == SPLITTING;
    long victim = (long) LONG.get(m, seg + SEG_VICTIM);
    if (state == MERGING && victim != 0) {
      // the victim word is followed only here: checked before it is (issue 9); the side link a
      // SPLITTING segment follows was checked at open
      Damage.requireBlock(table.pool, table.pool.schemeAllocator(), victim, segs.bytes, 64, "dash-eh merge victim of the segment at " + seg);
    }
    int d = depthOf(shape);
    if ((splitting && (d < 1 || d > table.globalDepth())) || (state == MERGING && victim != 0 && d >= table.globalDepth())) {
      // finishing would index the directory with this depth
      throw Damage.corrupt(Damage.where(table.pool) + ": dash-eh segment at " + seg + " is in SMO state " + state
          + " at local depth " + d + ", impossible at global depth " + table.globalDepth()
          + ": the pool was damaged; restore it from a copy");
    }
    // (4, first half) an interrupted split: S drops what N holds; an interrupted merge before
    // its redo step: L drops the copies of R's records
    if (splitting || (state == MERGING && victim == 0)) {
      segs.dropUncovered(m, seg, shape);
    }
    repairRecords(segs, m, seg, buckets);
    segs.rebuildOverflow(m, seg);
    segs.flushAllMeta(seg);
    // PERSIST(§4.8 steps 1-3): locks clear, duplicates gone, metadata rebuilt, durably, before the split is finished or the version set
    p.drain();
    if (splitting) {
      long n = (long) LONG.getAcquire(m, seg + SEG_SIDE);
      table.split.finish(m, seg, n, depthOf(shape), patternOf(shape));
    } else if (state == MERGING && victim != 0) {
      table.merge.finish(m, seg, victim, depthOf(shape), patternOf(shape));
    } else if (state == MERGING) {
      LONG.setRelease(m, seg + SEG_SHAPE, shape(depthOf(shape), NORMAL, patternOf(shape)));
      p.flush(seg + SEG_SHAPE, 8);
      // PERSIST(§4.8 step 4): the merge is rolled back (copies dropped, drained above) before L is NORMAL
      p.drain();
    } else if (state != NORMAL) {
      // NEW (a split's right half whose final state store was lost) is complete: just NORMAL
      LONG.compareAndSet(m, seg + SEG_SHAPE, shape, shape(depthOf(shape), NORMAL, patternOf(shape)));
      p.flush(seg + SEG_SHAPE, 8);
      // PERSIST(§4.8 step 4): the state is durable before the version says recovered
      p.drain();
    }
  }
}
