package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashLayout.*;

import io.pmhash.core.Persistence;
import io.pmhash.core.concurrent.UncheckedMemory;
import io.pmhash.core.hash.ByteMatch;
import io.pmhash.map.spi.OutOfLineRecord;
import java.lang.foreign.MemorySegment;

/**
 * The bucket of Dash §4.1–§4.3 as a flyweight of static methods over {@code (MemorySegment,
 * bucket offset)}: fingerprint probing, slot bookkeeping in the bitmap word, record writes and
 * the overflow metadata. Nothing here locks, drains or allocates; {@link DashSegment} composes
 * these into operations with their persist order.
 *
 * <p>Memory order: the bitmap is the commit word of a bucket. It is written only by the holder
 * of the bucket's version lock, with a release store ({@link #setBitmapRelease}); readers read it
 * between a version snapshot and its validation. Everything else in the bucket is written with
 * plain stores under the lock and published by the bitmap's release store or by the unlock.
 */
final class DashBucket {
  private DashBucket() {}

  /** The u64 at 24 ({@link #overflowWord}): overflow fingerprints 2 and 3, bitmap, index, membership, count. */
  private static final long OVERFLOW_WORD = OVF_FP + 2;

  // ---------------------------------------------------------------- bitmap

  static int bitmap(MemorySegment m, long b) {
    return (int) INT.get(m, b + BITMAP);
  }

  static int bitmapAcquire(MemorySegment m, long b) {
    return (int) INT.getAcquire(m, b + BITMAP);
  }

  static void setBitmapRelease(MemorySegment m, long b, int bitmap) {
    INT.setRelease(m, b + BITMAP, bitmap);
  }

  static int count(int bitmap) {
    return bitmap & COUNT_MASK;
  }

  static int allocated(int bitmap) {
    return (bitmap >>> ALLOC_SHIFT) & SLOT_MASK;
  }

  static int members(int bitmap) {
    return (bitmap >>> MEMBER_SHIFT) & SLOT_MASK;
  }

  /** @return the lowest free slot of a bucket that is not full */
  static int freeSlot(int bitmap) {
    return Integer.numberOfTrailingZeros(~allocated(bitmap) & SLOT_MASK);
  }

  /** @return {@code bitmap} with {@code slot} allocated, its membership bit as given, count + 1 */
  static int withSlot(int bitmap, int slot, boolean probing) {
    int b = bitmap | 1 << (ALLOC_SHIFT + slot);
    if (probing) {
      b |= 1 << (MEMBER_SHIFT + slot);
    }
    return b + 1;
  }

  /** @return {@code bitmap} with {@code slot} free, its membership bit clear, count - 1 */
  static int withoutSlot(int bitmap, int slot) {
    return (bitmap & ~(1 << (ALLOC_SHIFT + slot)) & ~(1 << (MEMBER_SHIFT + slot))) - 1;
  }

  /** @return a bitmap holding exactly the slots of {@code keep} (alloc and membership bits) */
  static int restrictTo(int bitmap, int keep) {
    int alloc = allocated(bitmap) & keep;
    int member = members(bitmap) & keep;
    return alloc << ALLOC_SHIFT | member << MEMBER_SHIFT | Integer.bitCount(alloc);
  }

  // ---------------------------------------------------------------- fingerprints

  /**
   * Fingerprint probing (Dash §4.2): the slots whose fingerprint equals {@code fp}, allocated or
   * not, by a SWAR compare ({@link ByteMatch}) of the 16 fingerprint bytes at 8..23 (two u64
   * loads).
   *
   * @return a 14-bit slot mask
   */
  static int matches(MemorySegment m, long b, int fp) {
    long pattern = ByteMatch.broadcast(fp);
    int lo = ByteMatch.match((long) LONG.get(m, b + FP), pattern);
    int hi = ByteMatch.match((long) LONG.get(m, b + FP + 8), pattern);
    return (lo | hi << 8) & SLOT_MASK;
  }

  static int fingerprint(MemorySegment m, long b, int slot) {
    return (byte) BYTE.get(m, b + FP + slot) & 0xFF;
  }

  // ---------------------------------------------------------------- records

  static long pair(long b, int slot) {
    return b + PAIRS + PAIR_BYTES * slot;
  }

  static long key(MemorySegment m, long b, int slot) {
    return (long) LONG.get(m, pair(b, slot));
  }

  static long value(MemorySegment m, long b, int slot) {
    return (long) LONG.get(m, pair(b, slot) + 8);
  }

  /**
   * The slot holding {@code key} among the allocated slots of {@code bitmap} whose fingerprint
   * matches, or -1. Keys are compared only where fingerprints match.
   */
  static int find(MemorySegment m, long b, int bitmap, long key, int fp) {
    int candidates = matches(m, b, fp) & allocated(bitmap);
    while (candidates != 0) {
      int slot = Integer.numberOfTrailingZeros(candidates);
      if (key(m, b, slot) == key) {
        return slot;
      }
      candidates &= candidates - 1;
    }
    return -1;
  }

  /**
   * The key in its target bucket {@code a1}, then its probing bucket {@code a2}, for an optimistic
   * reader through {@link UncheckedMemory}: the buckets at absolute addresses, which the caller has
   * checked lie inside a live mapping; the loads of {@link #find} (the 16 fingerprint bytes, the
   * bitmap and keys where fingerprints match), none checked.
   *
   * <p>The fingerprint probe (Dash §4.2) in two steps, so that a bucket without a match costs a
   * few instructions: {@link #lowFlags} and {@link #highFlags} flag the slots whose fingerprint may
   * equal the one sought, allocated or not ({@link ByteMatch#lowestZeroByteFlags}: three
   * instructions a word, no bitmap, no gather); when both are 0 no slot holds it, which is how
   * most buckets of an absent key end; else {@link #findAmongAt} compares the allocated
   * candidates' keys. A search's length decides whether the next search's cache misses start
   * before its own end (docs/persistence.md, "A shorter fingerprint probe").
   *
   * @return {@code bucket address | slot} (buckets are 64-byte aligned), or -1
   */
  static long findInEitherAt(long a1, long a2, long key, int fp) {
    long pattern = ByteMatch.broadcast(fp);
    long low = lowFlags(a1, pattern);
    long high = highFlags(a1, pattern);
    long at = (low | high) != 0 ? findAmongAt(a1, low, high, key) : -1;
    if (at < 0) {
      low = lowFlags(a2, pattern);
      high = highFlags(a2, pattern);
      at = (low | high) != 0 ? findAmongAt(a2, low, high, key) : -1;
    }
    return at;
  }

  /** Bytes 0..5 of a bucket's second fingerprint word: slots 8..13. */
  private static final long HIGH_WORD_SLOT_BYTES = 0x0000_8080_8080_8080L;

  /**
   * @param a the bucket's address
   * @param pattern {@link ByteMatch#broadcast} of the fingerprint
   * @return slots 0..7 (bytes 8..15 of the bucket) whose fingerprint may match, flagged in place
   *     ({@link ByteMatch#lowestZeroByteFlags}); 0 if none does
   */
  private static long lowFlags(long a, long pattern) {
    return ByteMatch.lowestZeroByteFlags(UncheckedMemory.getLong(a + FP) ^ pattern);
  }

  /**
   * {@link #lowFlags} for slots 8..13 (bytes 16..21); bytes 22 and 23, overflow fingerprints 0 and
   * 1, are masked off. Exact for "none": the masked bytes are the word's lowest six.
   */
  private static long highFlags(long a, long pattern) {
    return ByteMatch.lowestZeroByteFlags(UncheckedMemory.getLong(a + FP + 8) ^ pattern) & HIGH_WORD_SLOT_BYTES;
  }

  /**
   * The key among the bucket's allocated slots that {@link #lowFlags} and {@link #highFlags}
   * flagged. A false flag (about one in 256) is a key compared for nothing: a slot holding the key
   * holds its fingerprint too, and a slot a writer is changing fails the caller's validation.
   *
   * @return {@code a | slot}, or -1
   */
  private static long findAmongAt(long a, long low, long high, long key) {
    int candidates = (ByteMatch.gather(low) | ByteMatch.gather(high) << 8) & allocated(UncheckedMemory.getInt(a + BITMAP));
    while (candidates != 0) {
      int slot = Integer.numberOfTrailingZeros(candidates);
      if (UncheckedMemory.getLong(pair(a, slot)) == key) {
        return a | slot;
      }
      candidates &= candidates - 1;
    }
    return -1;
  }

  /** @return the value at a location {@link #findInEitherAt} returned */
  static long valueAt(long location) {
    return UncheckedMemory.getLong(pair(location & ~63L, (int) location & 63) + 8);
  }

  /** @return the overflow word ({@link #overflowWord}) of the bucket at address {@code a} */
  static long overflowWordAt(long a) {
    return UncheckedMemory.getLong(a + OVERFLOW_WORD);
  }

  /**
   * Pointer mode (Dash §4.5): the slot whose fingerprint, full hash (the pair's value word) and
   * record key all match, or -1; {@link #STALE_MAPPING} if a candidate's record lies beyond
   * {@code m} (the pool grew after the caller read its mapping). Records are loaded only where
   * fingerprint and hash match. Safe for optimistic readers: a stale offset reads as no match.
   */
  static int findRecord(MemorySegment m, long b, int bitmap, long h, int fp, MemorySegment key) {
    int candidates = matches(m, b, fp) & allocated(bitmap);
    while (candidates != 0) {
      int slot = Integer.numberOfTrailingZeros(candidates);
      if (value(m, b, slot) == h) {
        long rec = key(m, b, slot);
        if (rec > m.byteSize() - OutOfLineRecord.DATA) {
          return STALE_MAPPING;
        }
        if (OutOfLineRecord.keyEquals(m, rec, key)) {
          return slot;
        }
      }
      candidates &= candidates - 1;
    }
    return -1;
  }

  /** {@link #findRecord}: a record lies beyond the caller's mapping; read it again and retry. */
  static final int STALE_MAPPING = -2;

  /** Plain stores of a record and its fingerprint into a free slot (not yet published). */
  static void writeRecord(MemorySegment m, long b, int slot, long key, long value, int fp) {
    long p = pair(b, slot);
    LONG.set(m, p, key);
    LONG.set(m, p + 8, value);
    BYTE.set(m, b + FP + slot, (byte) fp);
  }

  /**
   * Flushes a slot's pair (16 bytes, never across a line). The fingerprint is not flushed here:
   * it shares the metadata line with the bitmap, is flushed with it, and is rebuilt from the
   * key by recovery if a crash kept the bitmap but not the fingerprint (Dash §4.8).
   */
  static void flushPair(Persistence p, long b, int slot) {
    p.flush(pair(b, slot), PAIR_BYTES);
  }

  /** Flushes the 32 bytes of metadata (one line). */
  static void flushMeta(Persistence p, long b) {
    p.flush(b, 32);
  }

  // ---------------------------------------------------------------- overflow metadata

  /** The u64 at 24: overflow fingerprints 2 and 3, overflow bitmap, index, membership, count. */
  static long overflowWord(MemorySegment m, long b) {
    return (long) LONG.get(m, b + OVERFLOW_WORD);
  }

  static int ovfBitmap(long word) {
    return (int) (word >>> 16) & 0xFF;
  }

  static int ovfIndex(long word) {
    return (int) (word >>> 24) & 0xFF;
  }

  static int ovfMember(long word) {
    return (int) (word >>> 32) & 0xFF;
  }

  static int ovfCount(long word) {
    return (int) (word >>> 40) & 0xFF;
  }

  static int ovfFingerprint(MemorySegment m, long b, int j) {
    return (byte) BYTE.get(m, b + OVF_FP + j) & 0xFF;
  }

  /**
   * The stash buckets an overflow record with this fingerprint may be in, according to this
   * bucket's overflow fingerprints of the given membership (0: the record's target is this
   * bucket; 1: the bucket before).
   *
   * @return a mask over stash bucket indexes
   */
  static int stashCandidates(MemorySegment m, long b, long word, int fp, int member) {
    int valid = ovfBitmap(word) & OVF_VALID_MASK;
    int mem = ovfMember(word);
    int index = ovfIndex(word);
    int out = 0;
    while (valid != 0) {
      int j = Integer.numberOfTrailingZeros(valid);
      valid &= valid - 1;
      if (((mem >>> j) & 1) == member && ovfFingerprint(m, b, j) == fp) {
        out |= 1 << ((index >>> (2 * j)) & 3);
      }
    }
    return out;
  }

  /** Tries to record an overflow fingerprint here; plain stores, the caller holds the lock. */
  static boolean addOverflow(MemorySegment m, long b, int fp, int stashIndex, int member) {
    int bitmap = (byte) BYTE.get(m, b + OVF_BITMAP) & 0xFF;
    int free = ~bitmap & OVF_VALID_MASK;
    if (free == 0) {
      return false;
    }
    int j = Integer.numberOfTrailingZeros(free);
    BYTE.set(m, b + OVF_FP + j, (byte) fp);
    int index = (byte) BYTE.get(m, b + OVF_INDEX) & 0xFF;
    index = (index & ~(3 << (2 * j))) | stashIndex << (2 * j);
    BYTE.set(m, b + OVF_INDEX, (byte) index);
    int mem = (byte) BYTE.get(m, b + OVF_MEMBER) & 0xFF;
    mem = (mem & ~(1 << j)) | member << j;
    BYTE.set(m, b + OVF_MEMBER, (byte) mem);
    BYTE.set(m, b + OVF_BITMAP, (byte) (bitmap | 1 << j));
    return true;
  }

  /** Removes one overflow fingerprint matching all three; false if there is none. */
  static boolean removeOverflow(MemorySegment m, long b, int fp, int stashIndex, int member) {
    long word = overflowWord(m, b);
    int valid = ovfBitmap(word) & OVF_VALID_MASK;
    int mem = ovfMember(word);
    int index = ovfIndex(word);
    while (valid != 0) {
      int j = Integer.numberOfTrailingZeros(valid);
      valid &= valid - 1;
      if (((mem >>> j) & 1) == member && ((index >>> (2 * j)) & 3) == stashIndex
          && ovfFingerprint(m, b, j) == fp) {
        BYTE.set(m, b + OVF_BITMAP, (byte) (ovfBitmap(word) & ~(1 << j)));
        return true;
      }
    }
    return false;
  }

  /**
   * Records an overflow record of fingerprint {@code fp} kept in stash bucket {@code index} (or,
   * in Dash-LH, the chain) for its target bucket {@code b1} and probing bucket {@code b2} (Dash
   * §4.3): an overflow fingerprint in {@code b1}, else in {@code b2} (member 1), else {@code b1}'s
   * overflow count and flag. Plain stores; the caller holds both buckets.
   *
   * @throws IllegalStateException if the count would pass 255 (nothing changed)
   */
  static void recordOverflow(MemorySegment m, long b1, long b2, int fp, int index) {
    if (!addOverflow(m, b1, fp, index, 0) && !addOverflow(m, b2, fp, index, 1)) {
      incrementOverflowCount(m, b1);
    }
  }

  /** Undoes {@link #recordOverflow}: a matching overflow fingerprint, else one of {@code b1}'s count. */
  static void forgetOverflow(MemorySegment m, long b1, long b2, int fp, int index) {
    if (!removeOverflow(m, b1, fp, index, 0) && !removeOverflow(m, b2, fp, index, 1)) {
      decrementOverflowCount(m, b1);
    }
  }

  /** Increments the overflow count and sets the "check the stash" flag. */
  static void incrementOverflowCount(MemorySegment m, long b) {
    int c = (byte) BYTE.get(m, b + OVF_COUNT) & 0xFF;
    if (c == 255) {
      throw new IllegalStateException("overflow count of bucket " + b + " would pass 255");
    }
    BYTE.set(m, b + OVF_COUNT, (byte) (c + 1));
    int bitmap = (byte) BYTE.get(m, b + OVF_BITMAP) & 0xFF;
    BYTE.set(m, b + OVF_BITMAP, (byte) (bitmap | STASH_FLAG));
  }

  /** Decrements the overflow count, clearing the flag at zero. */
  static void decrementOverflowCount(MemorySegment m, long b) {
    int c = (byte) BYTE.get(m, b + OVF_COUNT) & 0xFF;
    if (c == 0) {
      return; // recovery rebuilt the metadata without this record: nothing to undo
    }
    BYTE.set(m, b + OVF_COUNT, (byte) (c - 1));
    if (c == 1) {
      int bitmap = (byte) BYTE.get(m, b + OVF_BITMAP) & 0xFF;
      BYTE.set(m, b + OVF_BITMAP, (byte) (bitmap & ~STASH_FLAG));
    }
  }

  /**
   * Clears every overflow fingerprint, the index, membership, count and flag (two plain stores:
   * bytes 22..23, then the overflow word at 24, whose bytes 30..31 are the layout's padding,
   * zero).
   */
  static void clearOverflow(MemorySegment m, long b) {
    SHORT.set(m, b + OVF_FP, (short) 0); // overflow fingerprints 14, 15 at 22..23
    LONG.set(m, b + OVERFLOW_WORD, 0L);
  }
}
