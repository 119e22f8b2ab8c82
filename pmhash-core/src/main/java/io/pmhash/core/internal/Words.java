package io.pmhash.core.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Aligned 8-byte word access to a pool mapping with the memory orders the logs and the allocator
 * need, named with the JDK's vocabulary ({@code getAcquire}, {@code setRelease}, ...), and the
 * 64-bit mixing function their checksums use. Every offset must be 8-byte aligned.
 */
public final class Words {
  private Words() {}

  /** Little-endian u64, aligned: atomic, and CAS-able. */
  public static final ValueLayout.OfLong U64 =
      ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

  private static final VarHandle WORD = U64.varHandle().withInvokeExactBehavior();

  /**
   * @param m the mapping
   * @param offset aligned pool offset
   * @return the word, plain load
   */
  public static long get(MemorySegment m, long offset) {
    return (long) WORD.get(m, offset);
  }

  /**
   * @param m the mapping
   * @param offset aligned pool offset
   * @return the word, acquire load
   */
  public static long getAcquire(MemorySegment m, long offset) {
    return (long) WORD.getAcquire(m, offset);
  }

  /**
   * Plain store (for log entries that a later release store publishes).
   *
   * @param m the mapping
   * @param offset aligned pool offset
   * @param value the word
   */
  public static void set(MemorySegment m, long offset, long value) {
    WORD.set(m, offset, value);
  }

  /**
   * Release store: one atomic 8-byte store ordered after every earlier store.
   *
   * @param m the mapping
   * @param offset aligned pool offset
   * @param value the word
   */
  public static void setRelease(MemorySegment m, long offset, long value) {
    WORD.setRelease(m, offset, value);
  }

  /**
   * Atomic OR.
   *
   * @param m the mapping
   * @param offset aligned pool offset
   * @param mask bits to set
   * @return the previous word
   */
  public static long getAndOr(MemorySegment m, long offset, long mask) {
    return (long) WORD.getAndBitwiseOr(m, offset, mask);
  }

  /**
   * Atomic AND NOT.
   *
   * @param m the mapping
   * @param offset aligned pool offset
   * @param mask bits to clear
   * @return the previous word
   */
  public static long getAndAndNot(MemorySegment m, long offset, long mask) {
    return (long) WORD.getAndBitwiseAnd(m, offset, ~mask);
  }

  /**
   * Atomic compare-and-set.
   *
   * @param m the mapping
   * @param offset aligned pool offset
   * @param expected the word expected
   * @param value the new word
   * @return true if it was stored
   */
  public static boolean cas(MemorySegment m, long offset, long expected, long value) {
    return WORD.compareAndSet(m, offset, expected, value);
  }

  /** Seed of the log checksums. */
  public static final long SEED = 0x706d686173684c47L; // "GLhsahmp"

  /**
   * One step of the log checksum: folds a word into the running hash.
   *
   * @param h running hash
   * @param word the next word
   * @return the new running hash
   */
  public static long mix(long h, long word) {
    h ^= word * 0x9E3779B97F4A7C15L;
    h = Long.rotateLeft(h, 27) * 0xC2B2AE3D27D4EB4FL;
    return h + 0x165667B19E3779F9L;
  }

  /**
   * Final avalanche of the log checksum (MurmurHash3's fmix64).
   *
   * @param h running hash
   * @return the checksum
   */
  public static long finish(long h) {
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    return h ^ (h >>> 33);
  }
}
