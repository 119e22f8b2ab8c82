package io.pmhash.core.hash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class HashingTest {

  /** The bytes (i * 37 + 11) mod 256, i = 0, 1, ... used for the variable-length vectors. */
  private static byte[] pattern(int length) {
    byte[] b = new byte[length];
    for (int i = 0; i < length; i++) {
      b[i] = (byte) (i * 37 + 11);
    }
    return b;
  }

  private static byte[] littleEndian(long key) {
    byte[] b = new byte[8];
    for (int i = 0; i < 8; i++) {
      b[i] = (byte) (key >>> (8 * i));
    }
    return b;
  }

  @Test
  void eightByteKeysMatchTheDashVectors() {
    assertEquals(0xc7e834dfe9778643L, Hashing.hash(0L));
    assertEquals(0x59338fd0956c55bdL, Hashing.hash(1L));
    assertEquals(0x7af26893b7e15f04L, Hashing.hash(2L));
    assertEquals(0x4c60d11342c38e05L, Hashing.hash(42L));
    assertEquals(0xdd742329be86b2c4L, Hashing.hash(0xdeadbeefL));
    assertEquals(0x0f8dcb1772df2c17L, Hashing.hash(0xffffffffffffffffL));
    assertEquals(0x55b87840b25bd7d7L, Hashing.hash(0x123456789abcdef0L));
  }

  @Test
  void defaultSeedIsDashs() {
    assertEquals(0xc70697L, Hashing.DEFAULT_SEED);
    assertEquals(Hashing.hash(42L, 0xc70697L), Hashing.hash(42L));
  }

  /**
   * Vectors from the real libstdc++: produced once (g++ 12.2, x86-64) by
   *
   * <pre>
   *   namespace std { size_t _Hash_bytes(const void*, size_t, size_t); }
   *   unsigned char buf[32]; for (int i = 0; i &lt; 32; i++) buf[i] = i * 37 + 11;
   *   printf("%016zx\n", std::_Hash_bytes(buf, n, 0xc70697));   // n = 0..24
   *   printf("%016zx\n", std::_Hash_bytes("hello", 5, seed));    // seeds 0xc70697, 0, 0xc70f6907
   * </pre>
   *
   * and hard-coded here, so that the test needs no C++ compiler.
   */
  @Test
  void variableLengthKeysMatchLibstdcxx() {
    long[] expected = {
      0x4a98ac3ea71dd1d2L, 0xc01eadfc6806c452L, 0xcfc4599e65ba6c55L, 0xb70ed417fa74fd0fL,
      0xed7de1564d20cb06L, 0x2743e44dab86f2c2L, 0x9b838386709dd08aL, 0xc8b53b9480d95384L,
      0x43518a84a55479c6L, 0xa22089249fe812c1L, 0x21e3fefdbbdf1277L, 0xcd01690ed56ba816L,
      0x06857f45c562978fL, 0x426743449945dd73L, 0x2f340e22470f3261L, 0xff7666aa6edfcb94L,
      0x1c1c0d0a4115e141L, 0xd6a11befe6b6226cL, 0x714971d77fa12843L, 0xf735762e744b52aeL,
      0x8e3ade0afb9046f6L, 0xbf3b29c13be6ead3L, 0xb918e6b662796e6aL, 0x9f276afa64c7587dL,
      0x696e9e7e5a2adabcL,
    };
    for (int n = 0; n < expected.length; n++) {
      byte[] key = pattern(n);
      assertEquals(expected[n], Hashing.hash(key), "length " + n);
      assertEquals(
          expected[n],
          Hashing.hash(MemorySegment.ofArray(key), 0, n, Hashing.DEFAULT_SEED),
          "segment, length " + n);
    }
    byte[] hello = "hello".getBytes(StandardCharsets.US_ASCII);
    assertEquals(0x2b375924696d12dbL, Hashing.hash(hello));
    assertEquals(0x1e68d17c457bf117L, Hashing.hash(hello, 0, 5, 0L));
    assertEquals(0x26553298fdbe39c8L, Hashing.hash(hello, 0, 5, 0xc70f6907L));
    assertEquals(
        0x3e8a218595366f80L,
        Hashing.hash(
            "The quick brown fox jumps over the lazy dog".getBytes(StandardCharsets.US_ASCII)));
  }

  @Test
  void longKeyEqualsItsLittleEndianBytes() {
    SplittableRandom random = new SplittableRandom(0x5eed);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment segment = arena.allocate(16, 8);
      for (int i = 0; i < 10_000; i++) {
        long key = i < 64 ? 1L << i : random.nextLong();
        long seed = i % 2 == 0 ? Hashing.DEFAULT_SEED : random.nextLong();
        byte[] bytes = littleEndian(key);
        long expected = Hashing.hash(bytes, 0, 8, seed);
        assertEquals(expected, Hashing.hash(key, seed), "key " + Long.toHexString(key));
        // Unaligned, in native memory.
        segment.set(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 3, key);
        assertEquals(expected, Hashing.hash(segment, 3, 8, seed));
      }
    }
  }

  @Test
  void arrayAndSegmentFormsAgreeOnEveryTailLengthAndOffset() {
    SplittableRandom random = new SplittableRandom(42);
    byte[] buffer = new byte[64];
    random.nextBytes(buffer);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment nativeCopy =
          arena.allocate(buffer.length).copyFrom(MemorySegment.ofArray(buffer));
      MemorySegment heap = MemorySegment.ofArray(buffer);
      for (int length = 0; length <= 40; length++) {
        for (int offset = 0; offset < 8; offset++) {
          long seed = random.nextLong();
          long expected = Hashing.hash(buffer, offset, length, seed);
          assertEquals(expected, Hashing.hash(heap, offset, length, seed));
          assertEquals(expected, Hashing.hash(nativeCopy, offset, length, seed));
          byte[] copy = Arrays.copyOfRange(buffer, offset, offset + length);
          assertEquals(expected, Hashing.hash(copy, 0, length, seed));
        }
        byte[] whole = Arrays.copyOf(buffer, length);
        assertEquals(
            Hashing.hash(whole, 0, length, Hashing.DEFAULT_SEED),
            Hashing.hash(whole),
            "tail " + length);
      }
    }
  }

  @Test
  void tailBytesAreReadLittleEndian() {
    // A 3-byte key {1, 2, 3} contributes the integer 0x030201: changing the last byte
    // must change the hash, and the hash must equal the hand-computed value.
    byte[] key = {1, 2, 3};
    long mul = 0xc6a4a7935bd1e995L;
    long h = Hashing.DEFAULT_SEED ^ (3 * mul);
    h ^= 0x030201L;
    h *= mul;
    h ^= h >>> 47;
    h *= mul;
    h ^= h >>> 47;
    assertEquals(h, Hashing.hash(key));
  }

  @Test
  void rangesAreChecked() {
    byte[] bytes = new byte[8];
    MemorySegment segment = MemorySegment.ofArray(bytes);
    assertThrows(IndexOutOfBoundsException.class, () -> Hashing.hash(bytes, 4, 5, 0));
    assertThrows(IndexOutOfBoundsException.class, () -> Hashing.hash(bytes, -1, 2, 0));
    assertThrows(IndexOutOfBoundsException.class, () -> Hashing.hash(bytes, 0, -1, 0));
    assertThrows(IndexOutOfBoundsException.class, () -> Hashing.hash(segment, 4, 5, 0));
    assertThrows(IndexOutOfBoundsException.class, () -> Hashing.hash(segment, 0, -8, 0));
  }
}
