package io.pmhash.core.hash;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * The 64-bit hash of the Dash benchmarks: libstdc++'s {@code std::_Hash_bytes} for a
 * 64-bit {@code size_t} (a MurmurHash64A variant, {@code libsupc++/hash_bytes.cc}),
 * reproduced bit for bit.
 *
 * <pre>
 *   mul  = 0xc6a4a7935bd1e995
 *   hash = seed ^ (len * mul)
 *   for each whole 8-byte word w (little-endian):  hash = (hash ^ shiftMix(w * mul) * mul) * mul
 *   if 1..7 tail bytes remain, t = them as a little-endian integer:  hash = (hash ^ t) * mul
 *   hash = shiftMix(shiftMix(hash) * mul)
 *   shiftMix(v) = v ^ (v &gt;&gt;&gt; 47)
 * </pre>
 *
 * <p>All arithmetic wraps modulo 2<sup>64</sup>, as {@code size_t} does. libstdc++ reads
 * the words in native byte order; pmhash fixes little-endian, which is what libstdc++
 * computes on x86-64 and AArch64, so hashes (and therefore persistent layouts that
 * depend on them) are the same on every platform.
 *
 * <p>An 8-byte key is hashed as its eight little-endian bytes, so {@link #hash(long)}
 * equals {@code std::_Hash_bytes(&key, 8, 0xc70697)} on x86-64. It is the hot path:
 * straight-line arithmetic, no allocation. The fingerprint of Dash §4.2 and the bits
 * that pick a segment or bucket are taken from this value by each scheme.
 *
 * <p>Not a cryptographic hash: keys chosen by an adversary can collide on purpose.
 */
public final class Hashing {

  /**
   * The seed the Dash benchmarks hash with, {@value}: Dash's {@code h(key, len)}
   * calls {@code std::_Hash_bytes(key, len, 0xc70697)}.
   */
  public static final long DEFAULT_SEED = 0xc70697L;

  /** The multiplier of MurmurHash64A and of {@code std::_Hash_bytes}. */
  private static final long MUL = 0xc6a4a7935bd1e995L;

  /** {@code 8 * MUL}, the length term of an 8-byte key. */
  private static final long LEN8_MUL = 8 * MUL;

  private static final ValueLayout.OfLong LONG_LE_UNALIGNED =
      ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  /** Unaligned little-endian {@code long} view of a {@code byte[]}. */
  private static final VarHandle BYTES_AS_LONG_LE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN)
          .withInvokeExactBehavior();

  private Hashing() {}

  /**
   * Hashes an 8-byte key with {@link #DEFAULT_SEED}.
   *
   * @param key the key; its eight little-endian bytes are hashed
   * @return {@code std::_Hash_bytes(&key, 8, 0xc70697)} as computed on a little-endian
   *     machine
   */
  public static long hash(long key) {
    return hash(key, DEFAULT_SEED);
  }

  /**
   * Hashes an 8-byte key with the given seed.
   *
   * @param key the key; its eight little-endian bytes are hashed
   * @param seed the seed
   * @return {@code std::_Hash_bytes(&key, 8, seed)} as computed on a little-endian
   *     machine
   */
  public static long hash(long key, long seed) {
    long h = seed ^ LEN8_MUL;
    h ^= shiftMix(key * MUL) * MUL;
    h *= MUL;
    return finish(h);
  }

  /**
   * Hashes {@code length} bytes of a memory segment, starting at {@code offset}; the
   * variable-length (pointer mode) form.
   *
   * @param bytes the segment holding the key, on or off the heap
   * @param offset the offset of the key's first byte in {@code bytes}
   * @param length the key's length in bytes
   * @param seed the seed ({@link #DEFAULT_SEED} for the schemes' hash)
   * @return {@code std::_Hash_bytes(key, length, seed)} as computed on a little-endian
   *     machine
   * @throws IndexOutOfBoundsException if {@code [offset, offset + length)} is not
   *     within {@code bytes}
   * @throws IllegalStateException if the segment's arena is closed or is confined to
   *     another thread
   */
  public static long hash(MemorySegment bytes, long offset, long length, long seed) {
    Objects.checkFromIndexSize(offset, length, bytes.byteSize());
    final long end = offset + (length & ~7L);
    long h = seed ^ (length * MUL);
    for (long p = offset; p < end; p += 8) {
      h ^= shiftMix(bytes.get(LONG_LE_UNALIGNED, p) * MUL) * MUL;
      h *= MUL;
    }
    final int tail = (int) (length & 7);
    if (tail != 0) {
      long t = 0;
      for (int i = tail - 1; i >= 0; i--) {
        t = (t << 8) | (bytes.get(ValueLayout.JAVA_BYTE, end + i) & 0xffL);
      }
      h ^= t;
      h *= MUL;
    }
    return finish(h);
  }

  /**
   * Hashes a byte array with {@link #DEFAULT_SEED}.
   *
   * @param bytes the key
   * @return {@code std::_Hash_bytes(bytes, bytes.length, 0xc70697)} as computed on a
   *     little-endian machine
   */
  public static long hash(byte[] bytes) {
    return hash(bytes, 0, bytes.length, DEFAULT_SEED);
  }

  /**
   * Hashes {@code length} bytes of an array, starting at {@code offset}.
   *
   * @param bytes the array holding the key
   * @param offset the index of the key's first byte
   * @param length the key's length in bytes
   * @param seed the seed ({@link #DEFAULT_SEED} for the schemes' hash)
   * @return {@code std::_Hash_bytes(bytes + offset, length, seed)} as computed on a
   *     little-endian machine
   * @throws IndexOutOfBoundsException if {@code [offset, offset + length)} is not
   *     within {@code bytes}
   */
  public static long hash(byte[] bytes, int offset, int length, long seed) {
    Objects.checkFromIndexSize(offset, length, bytes.length);
    final int end = offset + (length & ~7);
    long h = seed ^ ((long) length * MUL);
    for (int p = offset; p < end; p += 8) {
      h ^= shiftMix((long) BYTES_AS_LONG_LE.get(bytes, p) * MUL) * MUL;
      h *= MUL;
    }
    final int tail = length & 7;
    if (tail != 0) {
      long t = 0;
      for (int i = tail - 1; i >= 0; i--) {
        t = (t << 8) | (bytes[end + i] & 0xffL);
      }
      h ^= t;
      h *= MUL;
    }
    return finish(h);
  }

  private static long finish(long h) {
    return shiftMix(shiftMix(h) * MUL);
  }

  private static long shiftMix(long v) {
    return v ^ (v >>> 47);
  }
}
