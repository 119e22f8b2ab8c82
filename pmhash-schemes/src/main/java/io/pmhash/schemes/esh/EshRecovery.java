package io.pmhash.schemes.esh;

import static io.pmhash.schemes.esh.EshLayout.*;

import io.pmhash.core.Persistence;
import io.pmhash.core.concurrent.VersionLock;
import io.pmhash.schemes.internal.Damage;
import io.pmhash.schemes.internal.ExtendibleDirectory;
import java.lang.foreign.MemorySegment;

/**
 * Lazy recovery driven by the per-bucket state (ESH §4.3.2 "State", §4.3.7, Table 4.1). Opening a
 * table recovers nothing (it reads O(directory) to validate the directory): after an unclean shutdown the table's global version becomes the pool's new
 * recovery epoch, so every bucket's state (the epoch in which it was last made consistent) is
 * stale, the paper's state = 1. The first thread that touches a bucket whose state is stale
 * (Algorithm 4.1 line 9, Algorithm 4.2 line 8) recovers the bucket's whole segment, because a
 * bucket's overflow metadata describes records in the other buckets of the segment:
 *
 * <ol>
 *   <li>every bucket lock is cleared (a lock held at the crash may be durable);
 *   <li>if the segment is the new half of a split whose old half still names it as split child,
 *       the old half is recovered first (which finishes the split); a parent word left over from
 *       a finished split is cleared;
 *   <li>an interrupted split of this segment (split child set) is rolled forward ({@link
 *       EshSplit#finish}); otherwise the metadata is rebuilt from the records ({@link
 *       EshSegment#rebuild}: fingerprints, MC, OB, and OC and OFRB exact again where a crash left
 *       them over-approximated);
 *   <li>drained; then every bucket's state is set to the global version, last bucket last.
 * </ol>
 *
 * Insert, update and delete need nothing else: each commits with one 8-byte store. Every step is
 * idempotent, so a crash during recovery repeats it at the next open. The states are not flushed:
 * after another crash a new epoch makes them stale anyway, and after a clean shutdown a state that
 * did not reach the media only repeats this recovery. The recovery lock is a word holding {@code
 * 2 * version + 1} while held in that version; a value left by an earlier version is free.
 */
final class EshRecovery {
  private final EshTable table;
  private final Persistence p;
  private final EshSegment segs;

  EshRecovery(EshTable table) {
    this.table = table;
    this.p = table.persistence;
    this.segs = table.segments;
  }

  /** @return whether every bucket of {@code seg} is in the current epoch */
  boolean recovered(MemorySegment m, long seg) {
    return EshSegment.state(m, segs.bucket(seg, segs.buckets - 1)) == table.stateTag;
  }

  /**
   * Recovers {@code seg} for a thread that found bucket {@code hb} of it stale. Recovery sets the
   * states of every bucket before the last one's, which {@link #recovered} reads; a bucket still
   * stale after it was damaged (otherwise the caller would retry for ever).
   */
  void recover(MemorySegment m, long seg, long hb) {
    recover(m, seg);
    if (EshSegment.state(m, hb) != table.stateTag) {
      throw Damage.corrupt(Damage.where(table.pool) + ": esh bucket at " + hb + " has state "
          + EshSegment.state(m, hb) + " in a segment recovered to " + table.stateTag
          + ": the bucket's state word was damaged; restore the pool from a copy");
    }
  }

  /** Recovers {@code seg} unless another thread did or does. */
  void recover(MemorySegment m, long seg) {
    long gv = table.globalVersion;
    long held = 2 * gv + 1;
    for (;;) {
      if (recovered(m, seg)) {
        return;
      }
      long w = (long) LONG.getAcquire(m, seg + SEG_RECOVERY_LOCK);
      if (w == held) {
        // bounded: a word that says "held in this version" with no thread recovering is damage
        Damage.awaitWordChange(m, seg + SEG_RECOVERY_LOCK, held, o -> (long) LONG.getAcquire(m, o), "esh segment recovery lock");
        continue;
      }
      if (LONG.compareAndSet(m, seg + SEG_RECOVERY_LOCK, w, held)) {
        break;
      }
    }
    try {
      if (!recovered(m, seg)) {
        repair(seg);
        table.recoveredSegments.incrementAndGet();
      }
    } finally {
      LONG.setRelease(m, seg + SEG_RECOVERY_LOCK, 2 * gv);
    }
  }

  private void repair(long seg) {
    MemorySegment m = table.pool.memory();
    // (1) locks held at the crash
    for (int i = 0; i < segs.buckets; i++) {
      VersionLock.reset(m, segs.bucket(seg, i) + LOCK);
    }
    // (2) the new half of an unfinished split: its old half finishes it first
    long parent = (long) LONG.getAcquire(m, seg + SEG_PARENT);
    if (parent != 0) {
      // split links are followed only here: checked first (issue 9)
      Damage.requireBlock(table.pool, table.pool.schemeAllocator(), parent, segs.bytes, 64, "esh split parent of the segment at " + seg);
      if ((long) LONG.getAcquire(m, parent + SEG_CHILD) == seg) {
        recover(m, parent);
      }
      LONG.setRelease(m, seg + SEG_PARENT, 0L);
      p.flush(seg + SEG_PARENT, 8);
    }
    // (3) an interrupted split of this segment, or the metadata of a crash
    long child = (long) LONG.getAcquire(m, seg + SEG_CHILD);
    if (child != 0) {
      Damage.requireBlock(table.pool, table.pool.schemeAllocator(), child, segs.bytes, 64, "esh split child of the segment at " + seg);
      long childShape = (long) LONG.get(m, child + SEG_SHAPE);
      long shape = EshSegment.shapeAcquire(m, seg);
      int cd = depthOf(childShape);
      long cp = patternOf(childShape);
      // S is (d, p) before split step 5 and (d + 1, 2p) after it; N is (d + 1, 2p + 1)
      boolean rightHalf = cd >= 1 && cd <= ExtendibleDirectory.MAX_DEPTH && (cp & 1) == 1 && (cp >>> cd) == 0
          && ((depthOf(shape) == cd - 1 && patternOf(shape) == cp >>> 1) || (depthOf(shape) == cd && patternOf(shape) == cp - 1));
      if (!rightHalf) {
        throw Damage.corrupt(Damage.where(table.pool) + ": esh segment at " + seg + " (depth " + depthOf(shape)
            + ", pattern " + patternOf(shape) + ") names a split child at " + child + " of depth "
            + depthOf(childShape) + " and pattern " + patternOf(childShape) + ", not its right half: the pool"
            + " was damaged; restore it from a copy");
      }
      table.directoryLock.lock();
      try {
        table.split.finish(seg, child, depthOf(childShape) - 1, patternOf(childShape) >>> 1, null, null);
      } finally {
        table.directoryLock.unlock();
      }
    } else {
      long shape = EshSegment.shapeAcquire(m, seg);
      segs.rebuild(m, seg, depthOf(shape), patternOf(shape));
    }
    // PERSIST(§4.3.7): the repaired metadata is durable before the states say the buckets are consistent
    p.drain();
    // (4) states, the last bucket last: its state is what recovered() reads
    for (int i = 0; i < segs.buckets; i++) {
      INT.setRelease(m, segs.bucket(seg, i) + STATE, table.stateTag);
    }
  }
}
