package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashBucket.*;
import static io.pmhash.schemes.dash.DashLayout.*;

import io.pmhash.core.Persistence;
import io.pmhash.core.concurrent.VersionLock;
import java.lang.foreign.MemorySegment;

/**
 * Record operations inside one segment (Dash §4.3, §4.6; Algorithms 1–3): probing, balanced
 * insert, displacement, stashing with overflow metadata, in-place update and delete, each with
 * its persist order. One instance per table (the persistence backend and the stash size are
 * fixed at construction); every method takes {@code (memory, segment offset)}.
 *
 * <p>Locking (Dash §4.4): the caller of every {@code *Locked} method holds the version locks of
 * the key's target bucket {@code y} and probing bucket {@code y + 1} (mod 64). Methods here take
 * further locks only in a deadlock-free way: stash buckets (whose indexes are above every normal
 * bucket's) with a blocking lock, taken in index order one at a time, and the extra bucket of a
 * displacement ({@code y + 2} or {@code y - 1}) with {@link VersionLock#tryLock} only.
 *
 * <p><b>Uniqueness.</b> Every writer of key {@code k} (insert, update, delete, displacement of
 * {@code k}, stash insert or delete of {@code k}) holds the locks of both {@code y} and {@code
 * y + 1}: displacement moves a record only between its own target and probing buckets, and an
 * overflow record's metadata lives in those two buckets too. So under those two locks {@code k}
 * cannot appear or disappear anywhere, the stash included; the uniqueness check reads the stash
 * without locking stash buckets, since the slots it compares against {@code k} can change only
 * to or from other keys, and an 8-byte key is read whole.
 */
final class DashSegment {
  /** Result of {@link #insertLocked}: the segment has no room; split it. */
  static final int FULL = 0;
  /** Result of {@link #insertLocked}: inserted. */
  static final int INSERTED = 1;

  final Persistence persistence;
  final int stash;
  final long bytes;
  final long stashBase;

  DashSegment(Persistence persistence, int stash) {
    this.persistence = persistence;
    this.stash = stash;
    this.bytes = segmentBytes(stash);
    this.stashBase = SEG_BUCKETS + NORMAL_BUCKETS * BUCKET_BYTES;
  }

  static long bucket(long seg, int index) {
    return seg + SEG_BUCKETS + index * BUCKET_BYTES;
  }

  static int bucketIndex(long h) {
    return (int) (h >>> 8) & (NORMAL_BUCKETS - 1);
  }

  static int fingerprintOf(long h) {
    return (int) h & 0xFF;
  }

  static long shapeAcquire(MemorySegment m, long seg) {
    return (long) LONG.getAcquire(m, seg + SEG_SHAPE);
  }

  static boolean covers(long shape, long h) {
    return prefix(h, depthOf(shape)) == patternOf(shape);
  }

  // ---------------------------------------------------------------- search

  /**
   * Finds {@code key} with the locks of its two buckets held.
   *
   * @return {@code bucket offset | slot} (a bucket offset is a multiple of 64), or -1
   */
  long findLocked(MemorySegment m, long seg, long b1, long b2, long key, int fp) {
    int slot = find(m, b1, bitmap(m, b1), key, fp);
    if (slot >= 0) {
      return b1 | slot;
    }
    slot = find(m, b2, bitmap(m, b2), key, fp);
    if (slot >= 0) {
      return b2 | slot;
    }
    return findInStash(m, seg, b1, b2, key, fp);
  }

  /**
   * The stash part of a search (Algorithm 3 lines 31–37): every stash bucket when the target's
   * overflow count is positive, else only those the matching overflow fingerprints name.
   *
   * @return {@code bucket offset | slot}, or -1
   */
  long findInStash(MemorySegment m, long seg, long b1, long b2, long key, int fp) {
    long w1 = overflowWord(m, b1);
    int candidates;
    if ((ovfBitmap(w1) & STASH_FLAG) != 0) {
      candidates = (1 << stash) - 1;
    } else {
      long w2 = overflowWord(m, b2);
      if ((ovfBitmap(w1) & OVF_VALID_MASK) == 0 && (ovfBitmap(w2) & ovfMember(w2) & OVF_VALID_MASK) == 0) {
        return -1;
      }
      candidates = stashCandidates(m, b1, w1, fp, 0) | stashCandidates(m, b2, w2, fp, 1);
    }
    return probeStash(m, seg, candidates, key, fp);
  }

  private long probeStash(MemorySegment m, long seg, int candidates, long key, int fp) {
    while (candidates != 0) {
      int i = Integer.numberOfTrailingZeros(candidates);
      candidates &= candidates - 1;
      if (i >= stash) {
        break;
      }
      long sb = bucket(seg, NORMAL_BUCKETS + i);
      int slot = find(m, sb, bitmapAcquire(m, sb), key, fp);
      if (slot >= 0) {
        return sb | slot;
      }
    }
    return -1;
  }

  // ---------------------------------------------------------------- insert

  /**
   * Inserts a key known to be absent (Algorithm 1 lines 17–29): the less full of the target and
   * probing bucket; else displacement; else a stash bucket. Two drains unless displacement runs.
   *
   * @return {@link #INSERTED}, or {@link #FULL} with nothing changed
   */
  int insertLocked(MemorySegment m, long seg, int y, long b1, long b2, long key, long value, int fp) {
    return insert(m, seg, y, b1, b2, key, value, fp, false);
  }

  /**
   * Inserts a key known to be absent while the caller holds every lock of the segment (a merge
   * moving records in): the same placement, no further locking.
   *
   * @return {@link #INSERTED}, or {@link #FULL} with nothing changed
   */
  int insertSegmentLocked(MemorySegment m, long seg, long key, long value) {
    long h = io.pmhash.core.hash.Hashing.hash(key);
    int y = bucketIndex(h);
    return insert(m, seg, y, bucket(seg, y), bucket(seg, (y + 1) & (NORMAL_BUCKETS - 1)), key, value, fingerprintOf(h), true);
  }

  private int insert(MemorySegment m, long seg, int y, long b1, long b2, long key, long value, int fp, boolean all) {
    int bm1 = bitmap(m, b1);
    int bm2 = bitmap(m, b2);
    int c1 = count(bm1);
    int c2 = count(bm2);
    if (c1 < SLOTS || c2 < SLOTS) {
      // balanced insert (Dash §4.3): the less full bucket, the target on a tie
      if (c1 <= c2) {
        put(m, b1, bm1, key, value, fp, false);
      } else {
        put(m, b2, bm2, key, value, fp, true);
      }
      return INSERTED;
    }
    return insertSlow(m, seg, y, b1, b2, key, value, fp, all);
  }

  /** Writes a record into a free slot of a bucket that is not full and publishes it. */
  void put(MemorySegment m, long b, int bitmap, long key, long value, int fp, boolean probing) {
    int slot = freeSlot(bitmap);
    writeRecord(m, b, slot, key, value, fp);
    flushPair(persistence, b, slot);
    // PERSIST(§4.6 insert, Alg. 2 lines 3-4): the pair is durable before the bitmap bit that makes it a record (the fingerprint rides with the bitmap's line; recovery rebuilds it)
    persistence.drain();
    setBitmapRelease(m, b, withSlot(bitmap, slot, probing));
    flushMeta(persistence, b);
    // PERSIST(§4.6 insert, Alg. 2 line 16): allocation bit, membership and count (one word) durable: the insert is complete
    persistence.drain();
  }

  private int insertSlow(MemorySegment m, long seg, int y, long b1, long b2, long key, long value, int fp, boolean all) {
    // displacement (Dash §4.3, Alg. 1 lines 23-26): move a record of b2 whose target is b2 to
    // its probing bucket y + 2, or a record of b1 whose target is y - 1 back to y - 1
    long b3 = bucket(seg, (y + 2) & (NORMAL_BUCKETS - 1));
    if (all || VersionLock.tryLock(m, b3 + LOCK)) {
      try {
        int bm2 = bitmap(m, b2);
        int movable = allocated(bm2) & ~members(bm2);
        if (movable != 0 && count(bitmap(m, b3)) < SLOTS) {
          int s = Integer.numberOfTrailingZeros(movable);
          move(m, b2, s, b3, true);
          put(m, b2, bitmap(m, b2), key, value, fp, true);
          return INSERTED;
        }
      } finally {
        if (!all) {
          VersionLock.unlock(m, b3 + LOCK);
        }
      }
    }
    long b0 = bucket(seg, (y - 1) & (NORMAL_BUCKETS - 1));
    if (all || VersionLock.tryLock(m, b0 + LOCK)) {
      try {
        int bm1 = bitmap(m, b1);
        int movable = allocated(bm1) & members(bm1);
        if (movable != 0 && count(bitmap(m, b0)) < SLOTS) {
          int s = Integer.numberOfTrailingZeros(movable);
          move(m, b1, s, b0, false);
          put(m, b1, bitmap(m, b1), key, value, fp, false);
          return INSERTED;
        }
      } finally {
        if (!all) {
          VersionLock.unlock(m, b0 + LOCK);
        }
      }
    }
    return stashInsert(m, seg, b1, b2, key, value, fp, all);
  }

  /**
   * Displacement (Dash §4.6, Algorithm 2 "displace"): copies the record into the other bucket,
   * then frees its old slot. Three drains; a crash between the second and third leaves the key
   * in both buckets, which segment recovery removes (§4.8 step 2).
   */
  void move(MemorySegment m, long from, int slot, long to, boolean probingInTo) {
    long k = key(m, from, slot);
    long v = value(m, from, slot);
    int f = fingerprint(m, from, slot);
    int bmTo = bitmap(m, to);
    int t = freeSlot(bmTo);
    writeRecord(m, to, t, k, v, f);
    flushPair(persistence, to, t);
    // PERSIST(§4.6 displacement step 1): the copy's pair is durable before its bitmap bit
    persistence.drain();
    setBitmapRelease(m, to, withSlot(bmTo, t, probingInTo));
    flushMeta(persistence, to);
    // PERSIST(§4.6 displacement step 1): the copy is a record (the key is now in both buckets) before the original goes
    persistence.drain();
    setBitmapRelease(m, from, withoutSlot(bitmap(m, from), slot));
    flushMeta(persistence, from);
    // PERSIST(§4.6 displacement step 2): the original's slot is free, durably, before a new record is written into it
    persistence.drain();
  }

  /**
   * Stashing (Dash §4.3, Alg. 1 lines 27–29): the first stash bucket with room, then the
   * overflow metadata: an overflow fingerprint in the target bucket, else in the probing bucket,
   * else the target's overflow count. The metadata is not crash-consistent (§4.6): it is flushed
   * with the record's bitmap, so a clean shutdown leaves it durable, and rebuilt by recovery.
   */
  private int stashInsert(MemorySegment m, long seg, long b1, long b2, long key, long value, int fp, boolean all) {
    for (int i = 0; i < stash; i++) {
      long sb = bucket(seg, NORMAL_BUCKETS + i);
      if (!all) {
        VersionLock.lock(m, sb + LOCK);
      }
      try {
        int bm = bitmap(m, sb);
        if (count(bm) < SLOTS) {
          int slot = freeSlot(bm);
          writeRecord(m, sb, slot, key, value, fp);
          flushPair(persistence, sb, slot);
          // PERSIST(§4.6 insert, Alg. 2 lines 3-4): the stash pair is durable before the bitmap bit
          persistence.drain();
          setBitmapRelease(m, sb, withSlot(bm, slot, false));
          if (!addOverflow(m, b1, fp, i, 0) && !addOverflow(m, b2, fp, i, 1)) {
            incrementOverflowCount(m, b1);
          }
          flushMeta(persistence, sb);
          flushMeta(persistence, b1);
          flushMeta(persistence, b2);
          // PERSIST(§4.6 insert, Alg. 2 line 16): the stash bitmap makes the record; overflow metadata rides along (rebuilt by §4.8 recovery)
          persistence.drain();
          return INSERTED;
        }
      } finally {
        if (!all) {
          VersionLock.unlock(m, sb + LOCK);
        }
      }
    }
    return FULL;
  }

  // ---------------------------------------------------------------- update, delete

  /** Updates a value in place: one aligned 8-byte release store, persisted (one drain). */
  void updateLocked(MemorySegment m, long location, long value) {
    long b = location & ~63L;
    int slot = (int) location & 63;
    long v = pair(b, slot) + 8;
    LONG.setRelease(m, v, value);
    persistence.flush(v, 8);
    // PERSIST(§4.6 update): the new value is one 8-byte word, durable whole or not at all
    persistence.drain();
  }

  /** Deletes the record at {@code location} (Dash §4.6 delete): one drain. */
  void deleteLocked(MemorySegment m, long seg, long b1, long b2, long location, int fp) {
    long b = location & ~63L;
    int slot = (int) location & 63;
    if (b < seg + stashBase) {
      setBitmapRelease(m, b, withoutSlot(bitmap(m, b), slot));
      flushMeta(persistence, b);
      // PERSIST(§4.6 delete): the cleared allocation bit (and count) is durable: the record is gone
      persistence.drain();
      return;
    }
    int i = (int) ((b - seg - stashBase) / BUCKET_BYTES);
    VersionLock.lock(m, b + LOCK);
    try {
      setBitmapRelease(m, b, withoutSlot(bitmap(m, b), slot));
      if (!removeOverflow(m, b1, fp, i, 0) && !removeOverflow(m, b2, fp, i, 1)) {
        decrementOverflowCount(m, b1);
      }
      flushMeta(persistence, b);
      flushMeta(persistence, b1);
      flushMeta(persistence, b2);
      // PERSIST(§4.6 delete): the stash bit is cleared durably; overflow metadata rides along (rebuilt by §4.8 recovery)
      persistence.drain();
    } finally {
      VersionLock.unlock(m, b + LOCK);
    }
  }

  // ---------------------------------------------------------------- whole-segment helpers

  /**
   * Rebuilds the overflow metadata of every normal bucket from the stash records (Dash §4.8
   * step 3), with plain stores; the caller holds every lock of the segment (or recovers it) and
   * flushes.
   */
  void rebuildOverflow(MemorySegment m, long seg) {
    for (int y = 0; y < NORMAL_BUCKETS; y++) {
      clearOverflow(m, bucket(seg, y));
    }
    for (int i = 0; i < stash; i++) {
      long sb = bucket(seg, NORMAL_BUCKETS + i);
      int alloc = allocated(bitmap(m, sb));
      while (alloc != 0) {
        int s = Integer.numberOfTrailingZeros(alloc);
        alloc &= alloc - 1;
        long h = io.pmhash.core.hash.Hashing.hash(key(m, sb, s));
        int y = bucketIndex(h);
        int fp = fingerprintOf(h);
        long b1 = bucket(seg, y);
        long b2 = bucket(seg, (y + 1) & (NORMAL_BUCKETS - 1));
        if (!addOverflow(m, b1, fp, i, 0) && !addOverflow(m, b2, fp, i, 1)) {
          incrementOverflowCount(m, b1);
        }
      }
    }
  }

  /**
   * Inserts many keys (absent, and not covered by the segment's shape: invisible until the
   * caller changes the shape) with two drains in all, for a merge; the caller holds every lock.
   * Records go to free slots only (balanced insert or stash; no displacement, which would move
   * visible records). Phase 1 writes every pair and fingerprint into a free slot and drains;
   * phase 2 stores the bitmaps (release) and the rebuilt overflow metadata and drains. A crash
   * in between publishes nothing; a crash in phase 2 publishes complete pairs only.
   *
   * @return false (no bitmap changed) if some record does not fit
   */
  boolean bulkInsert(MemorySegment m, long seg, long[] keys, long[] values, int n) {
    int buckets = NORMAL_BUCKETS + stash;
    int[] bitmaps = new int[buckets];
    for (int i = 0; i < buckets; i++) {
      bitmaps[i] = bitmap(m, bucket(seg, i));
    }
    for (int r = 0; r < n; r++) {
      long h = io.pmhash.core.hash.Hashing.hash(keys[r]);
      int y = bucketIndex(h);
      int y2 = (y + 1) & (NORMAL_BUCKETS - 1);
      int target;
      boolean probing = false;
      if (count(bitmaps[y]) < SLOTS || count(bitmaps[y2]) < SLOTS) {
        probing = count(bitmaps[y]) > count(bitmaps[y2]);
        target = probing ? y2 : y;
      } else {
        target = -1;
        for (int i = NORMAL_BUCKETS; i < buckets; i++) {
          if (count(bitmaps[i]) < SLOTS) {
            target = i;
            break;
          }
        }
        if (target < 0) {
          return false;
        }
      }
      long b = bucket(seg, target);
      int slot = freeSlot(bitmaps[target]);
      writeRecord(m, b, slot, keys[r], values[r], fingerprintOf(h));
      flushPair(persistence, b, slot);
      bitmaps[target] = withSlot(bitmaps[target], slot, probing);
    }
    // PERSIST(§4.7 merge step 2, phase 1): every copied pair is durable before any bitmap bit names it
    persistence.drain();
    for (int i = 0; i < buckets; i++) {
      setBitmapRelease(m, bucket(seg, i), bitmaps[i]);
    }
    rebuildOverflow(m, seg);
    flushAllMeta(seg);
    // PERSIST(§4.7 merge step 2, phase 2): the copies exist (still invisible: not covered) before the redo step that makes the segment cover them
    persistence.drain();
    return true;
  }

  /**
   * Drops every record the shape does not cover (plain bitmap release stores, no flush): the
   * rest of an interrupted split or merge (§4.8 step 4). Then the caller rebuilds the overflow
   * metadata and persists.
   */
  void dropUncovered(MemorySegment m, long seg, long shape) {
    for (int i = 0; i < NORMAL_BUCKETS + stash; i++) {
      long b = bucket(seg, i);
      int bm = bitmap(m, b);
      int keep = 0;
      for (int a = allocated(bm); a != 0; a &= a - 1) {
        int slot = Integer.numberOfTrailingZeros(a);
        if (covers(shape, io.pmhash.core.hash.Hashing.hash(key(m, b, slot)))) {
          keep |= 1 << slot;
        }
      }
      if (keep != allocated(bm)) {
        setBitmapRelease(m, b, restrictTo(bm, keep));
      }
    }
  }

  /** Flushes the metadata line of every bucket of a segment (no drain). */
  void flushAllMeta(long seg) {
    for (int i = 0; i < NORMAL_BUCKETS + stash; i++) {
      flushMeta(persistence, bucket(seg, i));
    }
  }

  /** Locks every bucket of a segment, in index order (SMOs, Dash §4.4). */
  void lockAll(MemorySegment m, long seg) {
    for (int i = 0; i < NORMAL_BUCKETS + stash; i++) {
      VersionLock.lock(m, bucket(seg, i) + LOCK);
    }
  }

  /** Unlocks every bucket of a segment. */
  void unlockAll(MemorySegment m, long seg) {
    for (int i = NORMAL_BUCKETS + stash - 1; i >= 0; i--) {
      VersionLock.unlock(m, bucket(seg, i) + LOCK);
    }
  }

  /** @return the records in the segment (sum of bucket counts) */
  long records(MemorySegment m, long seg) {
    long n = 0;
    for (int i = 0; i < NORMAL_BUCKETS + stash; i++) {
      n += DashBucket.count(bitmapAcquire(m, bucket(seg, i)));
    }
    return n;
  }
}
