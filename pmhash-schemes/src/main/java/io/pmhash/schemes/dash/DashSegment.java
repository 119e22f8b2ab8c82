package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashBucket.*;
import static io.pmhash.schemes.dash.DashLayout.*;

import io.pmhash.core.Persistence;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.alloc.SchemeAllocator.Reserved;
import io.pmhash.core.concurrent.VersionLock;
import io.pmhash.core.hash.Hashing;
import io.pmhash.schemes.internal.Damage;
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
 *
 * <p><b>Pointer mode</b> (Dash §4.5, {@link #pointer}): a pair is {@code {record offset, hash}}.
 * Placement, displacement, stashing, splits, merges and recovery are the same code: they move
 * pairs and rehash from {@link #hashOf}, never touching a record. Only the three operations that
 * change which records the table owns differ, each one redo step of the allocator (see {@link
 * #link}, {@link #replaceRecordLocked}, {@link #deleteRecordLocked}) that changes ownership and
 * reachability together. <b>Invariant:</b> outside such a step, a record is owned by the
 * allocator if and only if an allocated slot of a segment names it; structural changes may make
 * two slots name one record (a displacement's or split's copy, removed by recovery or by the
 * change's end), never none, and never free a record.
 */
final class DashSegment {
  /** Result of {@link #insertLocked}: the segment has no room; split it. */
  static final int FULL = 0;
  /** Result of {@link #insertLocked}: inserted. */
  static final int INSERTED = 1;

  /*
   * Insert techniques (Dash §6.6, Fig. 11), cumulative: each level adds one technique to the one
   * below. Dash is TECHNIQUES_ALL; the others exist for the Fig. 11 experiment only, which
   * measures how much load factor each technique buys. They change where a user's insert may
   * place a record, never how a record is found (search always probes both buckets and, when
   * the overflow metadata says so, the stash), so a table filled under any of them is a valid
   * Dash table. Splits copy slots in place and merges move records with every technique.
   */
  /** Only the target bucket. */
  static final int TECHNIQUES_BUCKETIZED = 0;
  /** The target, then the probing bucket when the target is full (one step of linear probing). */
  static final int TECHNIQUES_PROBING = 1;
  /** Balanced insert: the less full of the target and probing bucket (Dash §4.3). */
  static final int TECHNIQUES_BALANCED = 2;
  /** Balanced insert and displacement (Dash §4.3). */
  static final int TECHNIQUES_DISPLACEMENT = 3;
  /** Dash: balanced insert, displacement and stashing. */
  static final int TECHNIQUES_ALL = 4;

  final Persistence persistence;
  final int stash;
  /** Normal buckets per segment: a power of two, {@link DashLayout#MIN_NORMAL_BUCKETS}..{@link DashLayout#MAX_NORMAL_BUCKETS}. */
  final int normal;
  /** {@code normal - 1}: the bucket index mask, and the probing neighbour's wrap. */
  final int mask;
  final long bytes;
  final long stashBase;
  /** Pointer mode: pairs are {record offset, hash}; fixed at construction. */
  final boolean pointer;
  private final SchemeAllocator allocator;
  /** Which insert techniques a user's insert uses: {@link #TECHNIQUES_ALL} but in the Fig. 11 experiment. */
  final int techniques;

  /** Dash-LH's segments: {@link DashLayout#NORMAL_BUCKETS} normal buckets, inline. */
  DashSegment(Persistence persistence, int stash) {
    this(persistence, NORMAL_BUCKETS, stash, false, null, TECHNIQUES_ALL);
  }

  DashSegment(Persistence persistence, int normal, int stash, boolean pointer, SchemeAllocator allocator, int techniques) {
    this.persistence = persistence;
    this.techniques = techniques;
    this.normal = normal;
    this.mask = normal - 1;
    this.stash = stash;
    this.pointer = pointer;
    this.allocator = allocator;
    this.bytes = segmentBytes(normal, stash);
    this.stashBase = SEG_BUCKETS + normal * BUCKET_BYTES;
  }

  static long bucket(long seg, int index) {
    return seg + SEG_BUCKETS + index * BUCKET_BYTES;
  }

  /** The target bucket of hash {@code h} in this table's segments. */
  int bucketIndex(long h) {
    return bucketIndex(h, mask);
  }

  /** The target bucket of hash {@code h} in segments of {@code mask + 1} normal buckets. */
  static int bucketIndex(long h, int mask) {
    return (int) (h >>> 8) & mask;
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

  /** The hash of a pair: in pointer mode its value word, else the hash of its key. */
  long hashOf(long key, long value) {
    return pointer ? value : Hashing.hash(key);
  }

  /** The hash of the pair in a slot (structural changes and recovery, never a record load). */
  long hashAt(MemorySegment m, long b, int slot) {
    return pointer ? value(m, b, slot) : Hashing.hash(key(m, b, slot));
  }

  /**
   * Locks a key's target and probing bucket in index order (Dash §4.4: writers never deadlock).
   *
   * @return the two held lock words ({@link VersionLock#held}), b1's in the low half, for {@link #unlockPair}
   */
  static long lockPair(MemorySegment m, long b1, long b2, boolean targetFirst) {
    Damage.lock(m, (targetFirst ? b1 : b2) + LOCK, "dash bucket lock");
    Damage.lock(m, (targetFirst ? b2 : b1) + LOCK, "dash bucket lock");
    return VersionLock.held(m, b1 + LOCK) & 0xFFFF_FFFFL | (long) VersionLock.held(m, b2 + LOCK) << 32;
  }

  /**
   * Unlocks what {@link #lockPair} locked, in reverse order, from the words it returned: no load
   * of the bucket lines the critical section persisted ({@link VersionLock#unlock(MemorySegment,
   * long, int)}).
   */
  static void unlockPair(MemorySegment m, long b1, long b2, boolean targetFirst, long held) {
    if (targetFirst) {
      VersionLock.unlock(m, b2 + LOCK, (int) (held >>> 32));
      VersionLock.unlock(m, b1 + LOCK, (int) held);
    } else {
      VersionLock.unlock(m, b1 + LOCK, (int) held);
      VersionLock.unlock(m, b2 + LOCK, (int) (held >>> 32));
    }
  }

  // ---------------------------------------------------------------- search

  /**
   * Finds {@code key} with the locks of its two buckets held.
   *
   * @return {@code bucket offset | slot} (a bucket offset is a multiple of 64), or -1
   */
  long findLocked(MemorySegment m, long seg, long b1, long b2, long key, int fp) {
    long loc = findInBuckets(m, b1, b2, key, fp);
    return loc >= 0 ? loc : findInStash(m, seg, b1, b2, key, fp);
  }

  /**
   * {@link #findLocked} in the key's target and probing buckets only (reads only: safe unlocked).
   *
   * @return {@code bucket offset | slot}, or -1
   */
  long findInBuckets(MemorySegment m, long b1, long b2, long key, int fp) {
    int slot = find(m, b1, bitmap(m, b1), key, fp);
    if (slot >= 0) {
      return b1 | slot;
    }
    slot = find(m, b2, bitmap(m, b2), key, fp);
    return slot >= 0 ? b2 | slot : -1;
  }

  /**
   * The stash part of a search (Algorithm 3 lines 31–37): every stash bucket when the target's
   * overflow count is positive, else only those the matching overflow fingerprints name.
   *
   * @return {@code bucket offset | slot}, or -1
   */
  long findInStash(MemorySegment m, long seg, long b1, long b2, long key, int fp) {
    return findInStash(m, seg, b1, overflowWord(m, b1), b2, overflowWord(m, b2), key, fp);
  }

  /**
   * {@link #findInStash(MemorySegment, long, long, long, long, int)} with the two buckets'
   * overflow words already read (by an optimistic reader: the result is validated by its caller).
   *
   * @return {@code bucket offset | slot}, or -1
   */
  long findInStash(MemorySegment m, long seg, long b1, long w1, long b2, long w2, long key, int fp) {
    return mayBeInStash(w1, w2) ? probeStash(m, seg, overflowCandidates(m, b1, w1, b2, w2, fp), key, fp) : -1;
  }

  /** Whether the overflow words of a key's two buckets leave the stash to be searched at all. */
  static boolean mayBeInStash(long w1, long w2) {
    return (ovfBitmap(w1) & (STASH_FLAG | OVF_VALID_MASK)) != 0 || (ovfBitmap(w2) & ovfMember(w2) & OVF_VALID_MASK) != 0;
  }

  /**
   * The overflow indexes a record of fingerprint {@code fp} may be under (a mask over index
   * values; 0: none): every stash bucket when the target's flag is set, else those the two
   * buckets' matching overflow fingerprints name. In Dash-LH the mask may also hold the chain's
   * index {@code stash} ({@link DashLhSegment#chainIndex}), which names no stash bucket: the
   * probes below stop at the first index at or past {@code stash}.
   */
  int overflowCandidates(MemorySegment m, long b1, long w1, long b2, long w2, int fp) {
    if ((ovfBitmap(w1) & STASH_FLAG) != 0) {
      return (1 << stash) - 1;
    }
    return DashBucket.stashCandidates(m, b1, w1, fp, 0) | DashBucket.stashCandidates(m, b2, w2, fp, 1);
  }

  private int stashCandidates(MemorySegment m, long b1, long b2, int fp) {
    long w1 = overflowWord(m, b1);
    long w2 = overflowWord(m, b2);
    return mayBeInStash(w1, w2) ? overflowCandidates(m, b1, w1, b2, w2, fp) : 0;
  }

  /**
   * Pointer mode: finds the key of hash {@code h} in its two buckets and the stash (with the
   * locks held, or optimistically: see {@link DashBucket#findRecord}).
   *
   * @return {@code bucket offset | slot}, -1, or {@link DashBucket#STALE_MAPPING}
   */
  long findRecord(MemorySegment m, long seg, long b1, long b2, long h, int fp, MemorySegment key) {
    int slot = DashBucket.findRecord(m, b1, bitmap(m, b1), h, fp, key);
    if (slot != -1) {
      return slot < 0 ? slot : b1 | slot;
    }
    slot = DashBucket.findRecord(m, b2, bitmap(m, b2), h, fp, key);
    if (slot != -1) {
      return slot < 0 ? slot : b2 | slot;
    }
    int candidates = stashCandidates(m, b1, b2, fp);
    while (candidates != 0) {
      int i = Integer.numberOfTrailingZeros(candidates);
      candidates &= candidates - 1;
      if (i >= stash) {
        break;
      }
      long sb = bucket(seg, normal + i);
      slot = DashBucket.findRecord(m, sb, bitmapAcquire(m, sb), h, fp, key);
      if (slot != -1) {
        return slot < 0 ? slot : sb | slot;
      }
    }
    return -1;
  }

  /**
   * Searches the stash buckets of {@code candidates} ({@link #overflowCandidates}) for {@code key}.
   *
   * @return {@code bucket offset | slot}, or -1
   */
  long probeStash(MemorySegment m, long seg, int candidates, long key, int fp) {
    while (candidates != 0) {
      int i = Integer.numberOfTrailingZeros(candidates);
      candidates &= candidates - 1;
      if (i >= stash) {
        break;
      }
      long sb = bucket(seg, normal + i);
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
    return insert(m, seg, y, b1, b2, key, value, fp, false, null);
  }

  /**
   * Pointer mode: inserts the reserved record {@code r} of hash {@code h}, known to be absent,
   * with the same placement as {@link #insertLocked}; the step that sets the slot's bitmap bit
   * also makes {@code r} owned ({@link #link}).
   *
   * @return {@link #INSERTED} ({@code r} is published), or {@link #FULL} with nothing changed
   */
  int insertRecordLocked(MemorySegment m, long seg, int y, long b1, long b2, Reserved r, long h, int fp) {
    return insert(m, seg, y, b1, b2, r.offset(), h, fp, false, r);
  }

  /**
   * Inserts a key known to be absent while the caller holds every lock of the segment (a merge
   * moving records in): the same placement, no further locking.
   *
   * @return {@link #INSERTED}, or {@link #FULL} with nothing changed
   */
  int insertSegmentLocked(MemorySegment m, long seg, long key, long value) {
    long h = hashOf(key, value);
    int y = bucketIndex(h);
    return insert(m, seg, y, bucket(seg, y), bucket(seg, (y + 1) & mask), key, value, fingerprintOf(h), true, null);
  }

  /** {@code r}: null for a pair that needs no ownership change, else the record being linked. */
  private int insert(MemorySegment m, long seg, int y, long b1, long b2, long key, long value, int fp, boolean all, Reserved r) {
    if (techniques != TECHNIQUES_ALL && !all) {
      return insertWithFewerTechniques(m, seg, y, b1, b2, key, value, fp, r);
    }
    int bm1 = bitmap(m, b1);
    int bm2 = bitmap(m, b2);
    int c1 = count(bm1);
    int c2 = count(bm2);
    if (c1 < SLOTS || c2 < SLOTS) {
      putBalanced(m, b1, bm1, b2, bm2, key, value, fp, r);
      return INSERTED;
    }
    return insertSlow(m, seg, y, b1, b2, key, value, fp, all, r);
  }

  /** Balanced insert (Dash §4.3): into the less full of two buckets, the target on a tie; one has room. */
  private void putBalanced(MemorySegment m, long b1, int bm1, long b2, int bm2, long key, long value, int fp, Reserved r) {
    if (count(bm1) <= count(bm2)) {
      put(m, b1, bm1, key, value, fp, false, r);
    } else {
      put(m, b2, bm2, key, value, fp, true, r);
    }
  }

  /**
   * Writes a record into a free slot of a bucket that is not full and publishes it; with a
   * reservation (pointer mode) through {@link #link}.
   */
  void put(MemorySegment m, long b, int bitmap, long key, long value, int fp, boolean probing, Reserved r) {
    int slot = freeSlot(bitmap);
    writeRecord(m, b, slot, key, value, fp);
    flushPair(persistence, b, slot);
    if (r != null) {
      link(m, b, withSlot(bitmap, slot, probing), r);
      return;
    }
    // PERSIST(§4.6 insert, Alg. 2 lines 3-4): the pair is durable before the bitmap bit that makes it a record (the fingerprint rides with the bitmap's line; recovery rebuilds it)
    persistence.drain();
    setBitmapRelease(m, b, withSlot(bitmap, slot, probing));
    flushMeta(persistence, b);
    // PERSIST(§4.6 insert, Alg. 2 line 16): allocation bit, membership and count (one word) durable: the insert is complete
    persistence.drain();
  }

  private int insertSlow(MemorySegment m, long seg, int y, long b1, long b2, long key, long value, int fp, boolean all, Reserved r) {
    if (displaceAndPut(m, seg, y, b1, b2, key, value, fp, all, r) == INSERTED) {
      return INSERTED;
    }
    return stashInsert(m, seg, b1, b2, key, value, fp, all, r);
  }

  /**
   * The Fig. 11 experiment's placement ({@link #techniques} below {@link #TECHNIQUES_ALL}): the
   * same writes as Dash's, from fewer places. The persist orders are {@link #put}'s and {@link
   * #displaceAndPut}'s.
   */
  private int insertWithFewerTechniques(MemorySegment m, long seg, int y, long b1, long b2, long key, long value, int fp, Reserved r) {
    int bm1 = bitmap(m, b1);
    int c1 = count(bm1);
    if (techniques == TECHNIQUES_BUCKETIZED || (techniques == TECHNIQUES_PROBING && c1 < SLOTS)) {
      if (c1 == SLOTS) {
        return FULL;
      }
      put(m, b1, bm1, key, value, fp, false, r);
      return INSERTED;
    }
    int bm2 = bitmap(m, b2);
    int c2 = count(bm2);
    if (techniques == TECHNIQUES_PROBING) { // the target is full
      if (c2 == SLOTS) {
        return FULL;
      }
      put(m, b2, bm2, key, value, fp, true, r);
      return INSERTED;
    }
    if (c1 < SLOTS || c2 < SLOTS) {
      putBalanced(m, b1, bm1, b2, bm2, key, value, fp, r);
      return INSERTED;
    }
    if (techniques == TECHNIQUES_DISPLACEMENT) {
      return displaceAndPut(m, seg, y, b1, b2, key, value, fp, false, r);
    }
    return FULL;
  }

  /**
   * Displacement, then the insert into the slot it freed; {@link #FULL} with nothing changed if
   * neither neighbour can take a record.
   */
  private int displaceAndPut(MemorySegment m, long seg, int y, long b1, long b2, long key, long value, int fp, boolean all, Reserved r) {
    // displacement (Dash §4.3, Alg. 1 lines 23-26): move a record of b2 whose target is b2 to
    // its probing bucket y + 2, or a record of b1 whose target is y - 1 back to y - 1
    long b3 = bucket(seg, (y + 2) & mask);
    if (all || VersionLock.tryLock(m, b3 + LOCK)) {
      try {
        int bm2 = bitmap(m, b2);
        int movable = allocated(bm2) & ~members(bm2);
        if (movable != 0 && count(bitmap(m, b3)) < SLOTS) {
          int s = Integer.numberOfTrailingZeros(movable);
          move(m, b2, s, b3, true);
          put(m, b2, bitmap(m, b2), key, value, fp, true, r);
          return INSERTED;
        }
      } finally {
        if (!all) {
          VersionLock.unlock(m, b3 + LOCK);
        }
      }
    }
    long b0 = bucket(seg, (y - 1) & mask);
    if (all || VersionLock.tryLock(m, b0 + LOCK)) {
      try {
        int bm1 = bitmap(m, b1);
        int movable = allocated(bm1) & members(bm1);
        if (movable != 0 && count(bitmap(m, b0)) < SLOTS) {
          int s = Integer.numberOfTrailingZeros(movable);
          move(m, b1, s, b0, false);
          put(m, b1, bitmap(m, b1), key, value, fp, false, r);
          return INSERTED;
        }
      } finally {
        if (!all) {
          VersionLock.unlock(m, b0 + LOCK);
        }
      }
    }
    return FULL;
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
  private int stashInsert(MemorySegment m, long seg, long b1, long b2, long key, long value, int fp, boolean all, Reserved r) {
    for (int i = 0; i < stash; i++) {
      long sb = bucket(seg, normal + i);
      if (!all) {
        Damage.lock(m, sb + LOCK, "dash bucket lock");
      }
      try {
        int bm = bitmap(m, sb);
        if (count(bm) < SLOTS) {
          int slot = freeSlot(bm);
          writeRecord(m, sb, slot, key, value, fp);
          flushPair(persistence, sb, slot);
          int linked = withSlot(bm, slot, false);
          if (r == null) {
            // PERSIST(§4.6 insert, Alg. 2 lines 3-4): the stash pair is durable before the bitmap bit
            persistence.drain();
            setBitmapRelease(m, sb, linked);
          }
          recordOverflow(m, b1, b2, fp, i);
          flushMeta(persistence, sb);
          flushMeta(persistence, b1);
          flushMeta(persistence, b2);
          if (r != null) {
            link(m, sb, linked, r); // overflow metadata first: rebuilt by recovery if it is wrong
            return INSERTED;
          }
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

  /**
   * Whether deleting the record at {@code location} leaves the target bucket {@code b1} empty (the
   * writer then offers the segment to a merge). Asked before the delete: b1's line is in the cache
   * then, and may not be after the delete persisted it ({@link VersionLock#unlock(MemorySegment,
   * long, int)}).
   */
  static boolean deleteEmpties(MemorySegment m, long b1, long location) {
    return count(bitmap(m, b1)) == ((location & ~63L) == b1 ? 1 : 0);
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
    Damage.lock(m, b + LOCK, "dash bucket lock");
    try {
      setBitmapRelease(m, b, withoutSlot(bitmap(m, b), slot));
      removeOverflow(m, seg, b1, b2, b, fp);
      flushMeta(persistence, b);
      flushMeta(persistence, b1);
      flushMeta(persistence, b2);
      // PERSIST(§4.6 delete): the stash bit is cleared durably; overflow metadata rides along (rebuilt by §4.8 recovery)
      persistence.drain();
    } finally {
      VersionLock.unlock(m, b + LOCK);
    }
  }

  /** Removes the overflow metadata of a stash record of fingerprint {@code fp} in stash bucket {@code sb}. */
  private void removeOverflow(MemorySegment m, long seg, long b1, long b2, long sb, int fp) {
    int i = (int) ((sb - seg - stashBase) / BUCKET_BYTES);
    forgetOverflow(m, b1, b2, fp, i);
  }

  // ---------------------------------------------------------------- pointer mode (Dash §4.5)

  /** The u64 at a bucket's offset 0: its version lock (held by the caller) and a new bitmap. */
  private static long lockAndBitmap(MemorySegment m, long b, int bitmap) {
    return ((int) INT.get(m, b + LOCK) & 0xFFFF_FFFFL) | (long) bitmap << 32;
  }

  /**
   * Pointer-mode insert, after the pair {record offset, hash} and its fingerprint are written to
   * a free slot and flushed: one redo step ORs the record's owned bit and stores the bucket's
   * lock-and-bitmap word (the lock word unchanged: the caller holds it; recovery clears it if a
   * replay writes it back after a crash). Four drains, the redo step's.
   */
  private void link(MemorySegment m, long b, int bitmap, Reserved r) {
    try (SchemeAllocator.Step pub = allocator.begin()) {
      pub.publish(r).set(b + LOCK, lockAndBitmap(m, b, bitmap));
      // PERSIST(§4.5 insert): the record (flushed by the caller) and the pair are durable before the step's entries (its first drain); the record becomes owned in the same atomic step as the bitmap bit that makes it reachable
      pub.commit();
    }
  }

  /**
   * Pointer-mode update (Dash §4.5): the new record {@code r} (written and flushed by the caller)
   * replaces the slot's record in one redo step: the slot's key word becomes {@code r}'s offset
   * (one 8-byte release store), {@code r} becomes owned and the old record free, all or nothing.
   * The old record is reused only after the epoch grace period, so a reader that followed the old
   * offset still reads it whole. Four drains.
   */
  void replaceRecordLocked(MemorySegment m, long location, Reserved r) {
    long b = location & ~63L;
    int slot = (int) location & 63;
    long old = key(m, b, slot);
    try (SchemeAllocator.Step pub = allocator.begin()) {
      pub.publish(r, pair(b, slot)).deferFree(old);
      // PERSIST(§4.5 update): the new record is durable (ordered by the step's first drain) before the step that swaps the slot word and moves ownership commits
      pub.commit();
    }
  }

  /**
   * Pointer-mode delete: one redo step clears the slot's bitmap bit (the lock-and-bitmap word) and
   * frees the record, reused after the epoch grace period. Four drains.
   */
  void deleteRecordLocked(MemorySegment m, long seg, long b1, long b2, long location, int fp) {
    long b = location & ~63L;
    int slot = (int) location & 63;
    long rec = key(m, b, slot);
    if (b < seg + stashBase) {
      unlink(m, b, withoutSlot(bitmap(m, b), slot), rec);
      return;
    }
    Damage.lock(m, b + LOCK, "dash bucket lock");
    try {
      removeOverflow(m, seg, b1, b2, b, fp);
      flushMeta(persistence, b1);
      flushMeta(persistence, b2);
      unlink(m, b, withoutSlot(bitmap(m, b), slot), rec); // overflow metadata first: rebuilt by recovery if it is wrong
    } finally {
      VersionLock.unlock(m, b + LOCK);
    }
  }

  private void unlink(MemorySegment m, long b, int bitmap, long rec) {
    try (SchemeAllocator.Step pub = allocator.begin()) {
      pub.set(b + LOCK, lockAndBitmap(m, b, bitmap)).deferFree(rec);
      // PERSIST(§4.5 delete): the cleared bitmap bit and the record's free are one atomic step: never a reachable free record, never an unreachable owned one
      pub.commit();
    }
  }

  // ---------------------------------------------------------------- whole-segment helpers

  /**
   * Rebuilds the overflow metadata of every normal bucket from the stash records (Dash §4.8
   * step 3), with plain stores; the caller holds every lock of the segment (or recovers it) and
   * flushes.
   */
  void rebuildOverflow(MemorySegment m, long seg) {
    for (int y = 0; y < normal; y++) {
      clearOverflow(m, bucket(seg, y));
    }
    for (int i = 0; i < stash; i++) {
      long sb = bucket(seg, normal + i);
      int alloc = allocated(bitmap(m, sb));
      while (alloc != 0) {
        int s = Integer.numberOfTrailingZeros(alloc);
        alloc &= alloc - 1;
        long h = hashAt(m, sb, s);
        int y = bucketIndex(h);
        int fp = fingerprintOf(h);
        long b1 = bucket(seg, y);
        long b2 = bucket(seg, (y + 1) & mask);
        recordOverflow(m, b1, b2, fp, i);
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
    int buckets = normal + stash;
    int[] bitmaps = new int[buckets];
    for (int i = 0; i < buckets; i++) {
      bitmaps[i] = bitmap(m, bucket(seg, i));
    }
    for (int r = 0; r < n; r++) {
      long h = hashOf(keys[r], values[r]);
      int y = bucketIndex(h);
      int y2 = (y + 1) & mask;
      int target;
      boolean probing = false;
      if (count(bitmaps[y]) < SLOTS || count(bitmaps[y2]) < SLOTS) {
        probing = count(bitmaps[y]) > count(bitmaps[y2]);
        target = probing ? y2 : y;
      } else {
        target = -1;
        for (int i = normal; i < buckets; i++) {
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
    for (int i = 0; i < normal + stash; i++) {
      long b = bucket(seg, i);
      int bm = bitmap(m, b);
      int keep = 0;
      for (int a = allocated(bm); a != 0; a &= a - 1) {
        int slot = Integer.numberOfTrailingZeros(a);
        if (covers(shape, hashAt(m, b, slot))) {
          keep |= 1 << slot;
        }
      }
      if (keep != allocated(bm)) {
        setBitmapRelease(m, b, restrictTo(bm, keep));
      }
    }
  }

  /**
   * Drops the records in the given slots of every bucket (release stores of bitmaps, no flush):
   * a split's half that its new segment took. The caller rebuilds the overflow metadata and
   * persists.
   *
   * @param slots per bucket index, a 14-bit mask of the slots to drop
   */
  void dropSlots(MemorySegment m, long seg, int[] slots) {
    for (int i = 0; i < normal + stash; i++) {
      if (slots[i] != 0) {
        long b = bucket(seg, i);
        setBitmapRelease(m, b, restrictTo(bitmap(m, b), ~slots[i]));
      }
    }
  }

  /** Flushes the metadata line of every bucket of a segment (no drain). */
  void flushAllMeta(long seg) {
    for (int i = 0; i < normal + stash; i++) {
      flushMeta(persistence, bucket(seg, i));
    }
  }

  /** Locks every bucket of a segment, in index order (SMOs, Dash §4.4). */
  void lockAll(MemorySegment m, long seg) {
    for (int i = 0; i < normal + stash; i++) {
      Damage.lock(m, bucket(seg, i) + LOCK, "dash bucket lock");
    }
  }

  /** Unlocks every bucket of a segment. */
  void unlockAll(MemorySegment m, long seg) {
    for (int i = normal + stash - 1; i >= 0; i--) {
      VersionLock.unlock(m, bucket(seg, i) + LOCK);
    }
  }

  /** @return the records in the segment (sum of bucket counts) */
  long records(MemorySegment m, long seg) {
    return records(m, seg, Long.MAX_VALUE);
  }

  /**
   * The records in the segment, counted only until they pass {@code limit}: a merge's question
   * ("at most this many?") reads a loaded segment's first few buckets, not all of them.
   *
   * @return the sum of the bucket counts if it is at most {@code limit}, else a partial sum above it
   */
  long records(MemorySegment m, long seg, long limit) {
    long n = 0;
    for (int i = 0; i < normal + stash && n <= limit; i++) {
      n += DashBucket.count(bitmapAcquire(m, bucket(seg, i)));
    }
    return n;
  }
}
