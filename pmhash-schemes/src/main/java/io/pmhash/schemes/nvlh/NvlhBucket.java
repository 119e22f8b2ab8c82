package io.pmhash.schemes.nvlh;

import static io.pmhash.schemes.nvlh.NvlhLayout.ALL_SLOTS;
import static io.pmhash.schemes.nvlh.NvlhLayout.LONG;
import static io.pmhash.schemes.nvlh.NvlhLayout.META;
import static io.pmhash.schemes.nvlh.NvlhLayout.NEXT;
import static io.pmhash.schemes.nvlh.NvlhLayout.PAIR_BYTES;
import static io.pmhash.schemes.nvlh.NvlhLayout.PAIR_VALUE;
import static io.pmhash.schemes.nvlh.NvlhLayout.slotOffset;

import io.pmhash.core.Persistence;
import io.pmhash.core.hash.ByteMatch;
import java.lang.foreign.MemorySegment;

/**
 * The hot path over one 128-byte bucket and its chain ({@link NvlhLayout}): static methods over
 * {@code (memory, bucket offset)}. The caller holds the chain's lock.
 */
final class NvlhBucket {
  private NvlhBucket() {}

  static long meta(MemorySegment m, long bucket) {
    return (long) LONG.getAcquire(m, bucket + META);
  }

  static void setMetaRelease(MemorySegment m, long bucket, long meta) {
    LONG.setRelease(m, bucket + META, meta);
  }

  static long next(MemorySegment m, long bucket) {
    return (long) LONG.getAcquire(m, bucket + NEXT);
  }

  static long key(MemorySegment m, long bucket, int slot) {
    return (long) LONG.get(m, slotOffset(bucket, slot));
  }

  static long value(MemorySegment m, long bucket, int slot) {
    return (long) LONG.get(m, slotOffset(bucket, slot) + PAIR_VALUE);
  }

  /**
   * Walks a chain for a key.
   *
   * @param pattern {@link ByteMatch#broadcast} of the key's {@link NvlhLayout#fingerprint}
   * @return the bucket holding it with the slot in the low 3 bits (buckets are 64-byte aligned),
   *     or -1
   */
  static long find(MemorySegment m, long head, long key, long pattern) {
    for (long b = head; b != 0; b = next(m, b)) {
      int s = slotOf(m, b, key, meta(m, b), pattern);
      if (s >= 0) {
        return b | s;
      }
    }
    return -1;
  }

  /**
   * The slot of bucket {@code b} holding {@code key}: only the occupied slots whose fingerprint
   * byte matches are loaded (one in 256 of the others, by chance).
   *
   * @param meta the bucket's meta word
   * @param pattern {@link ByteMatch#broadcast} of the key's {@link NvlhLayout#fingerprint}
   * @return the slot, or -1
   */
  static int slotOf(MemorySegment m, long b, long key, long meta, long pattern) {
    // byte 0 of meta holds the slot bits and the flag: match's bit i + 1 is slot i's byte
    for (int c = ByteMatch.match(meta, pattern) >>> 1 & (int) (meta & ALL_SLOTS); c != 0; c &= c - 1) {
      int s = Integer.numberOfTrailingZeros(c);
      if (key(m, b, s) == key) {
        return s;
      }
    }
    return -1;
  }

  /**
   * Log-free insert into a free slot: one 8-byte meta store commits it.
   *
   * <ol>
   *   <li>PERSIST(insert 1): the pair is durable before the meta bit that publishes it (a crash
   *       before leaves a free slot with garbage no one reads).
   *   <li>PERSIST(insert 2): the meta bit with the slot's fingerprint byte, one atomic 8-byte
   *       store, is the commit point (a durable bit always has its fingerprint).
   * </ol>
   */
  static void insert(MemorySegment m, Persistence p, long bucket, long key, long value, int fp) {
    long meta = meta(m, bucket);
    int s = Long.numberOfTrailingZeros(~meta & ALL_SLOTS);
    long at = slotOffset(bucket, s);
    LONG.set(m, at, key);
    LONG.set(m, at + PAIR_VALUE, value);
    p.persist(at, PAIR_BYTES);
    setMetaRelease(m, bucket, meta | NvlhLayout.slotBits(s, fp));
    p.persist(bucket + META, 8);
  }

  /** PERSIST(update): an 8-byte value store in place, one atomic word: no log. */
  static void update(MemorySegment m, Persistence p, long bucket, int slot, long value) {
    long at = slotOffset(bucket, slot) + PAIR_VALUE;
    LONG.setRelease(m, at, value);
    p.persist(at, 8);
  }

  /** PERSIST(delete): the slot's meta bit and fingerprint cleared, one atomic word: no log. */
  static void delete(MemorySegment m, Persistence p, long bucket, int slot) {
    setMetaRelease(m, bucket, NvlhLayout.withoutSlots(meta(m, bucket), 1L << slot));
    p.persist(bucket + META, 8);
  }

  /** @return records in the bucket */
  static int count(MemorySegment m, long bucket) {
    return Long.bitCount(meta(m, bucket) & ALL_SLOTS);
  }
}
