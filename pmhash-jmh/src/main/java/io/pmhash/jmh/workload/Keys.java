package io.pmhash.jmh.workload;

/**
 * The workload's keys: key {@code i} of a seed is the SplitMix64 finalizer of {@code seed * φ +
 * i}, a bijection of {@code i}, so keys with different indexes never collide and look uniformly
 * random. Phases use disjoint index ranges (preload, insert, negative search). The JMH
 * benchmarks draw their keys from the same function, so both harnesses use the same key sets.
 */
public final class Keys {
  private Keys() {}

  /**
   * Key {@code index} of a seed.
   *
   * @param seed the seed of the key set
   * @param index the key's index; distinct indexes give distinct keys
   * @return the key
   */
  public static long key(long seed, long index) {
    long z = seed * 0x9E3779B97F4A7C15L + index;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /**
   * Keys {@code [from, to)} precomputed, so that generating them is not measured.
   *
   * @param seed the seed of the key set
   * @param from the first index
   * @param to one past the last index
   * @return the keys, {@code to - from} of them
   */
  public static long[] range(long seed, long from, long to) {
    if (to - from > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("at most 2^31 keys per phase");
    }
    long[] keys = new long[(int) (to - from)];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = key(seed, from + i);
    }
    return keys;
  }

  /**
   * A long widened to {@code length} bytes (the workload's {@code --key-bytes} and the pointer-mode
   * benchmark's keys): its 8 bytes little-endian, then 8 bytes of {@code key(k, i)} at each further
   * offset {@code i}; distinct longs give distinct arrays. {@code length} 8 gives the long's bytes.
   *
   * @param k the long
   * @param length bytes, at least 8
   * @return a new array
   */
  public static byte[] widen(long k, int length) {
    byte[] b = new byte[length];
    long f = k;
    for (int i = 0; i < length; i++) {
      if (i >= 8 && (i & 7) == 0) {
        f = key(k, i);
      }
      b[i] = (byte) (f >>> (8 * (i & 7)));
    }
    return b;
  }

  /**
   * The long of an array's first 8 bytes, little-endian (the inverse of {@link #widen}).
   *
   * @param b at least 8 bytes
   * @return the long
   */
  public static long narrow(byte[] b) {
    long x = 0;
    for (int i = 7; i >= 0; i--) {
      x = x << 8 | (b[i] & 0xFF);
    }
    return x;
  }
}
