package io.pmhash.core.hash;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The SWAR byte match against a byte loop, on words built to provoke carries and borrows. */
class ByteMatchTest {

  /** The reference: bit i set iff byte i (little-endian) of word equals b. */
  private static int loop(long word, int b) {
    int m = 0;
    for (int i = 0; i < 8; i++) {
      if (((word >>> (8 * i)) & 0xFF) == (b & 0xFF)) {
        m |= 1 << i;
      }
    }
    return m;
  }

  /** Spreads an 8-bit mask to the in-place form: bit i to bit 8 i + 7. */
  private static long spread(int mask) {
    long f = 0;
    for (int i = 0; i < 8; i++) {
      if ((mask >>> i & 1) != 0) {
        f |= 0x80L << (8 * i);
      }
    }
    return f;
  }

  @Test
  void zeroBytesHasNoBorrowFalsePositives() {
    // a zero byte below a 0x01 byte: the short form (x - 0x01..01) & ~x & 0x80..80 reports both
    assertEquals(0b1000_0001, ByteMatch.zeroBytes(0x0001_0101_0101_0100L));
    assertEquals(0xFF, ByteMatch.zeroBytes(0));
    assertEquals(0, ByteMatch.zeroBytes(-1L));
    assertEquals(0b10, ByteMatch.zeroBytes(0x0101_0101_0101_0001L));
    assertEquals(0b1000_0000, ByteMatch.zeroBytes(0x0080_8080_8080_8080L));
    assertEquals(0x8000_0000_0000_0000L, ByteMatch.zeroByteFlags(0x0001_0101_0101_0101L));
    assertEquals(0x8080_8080_8080_8080L, ByteMatch.zeroByteFlags(0));
  }

  @Test
  void everySingleByteValueInEveryPosition() {
    for (int pos = 0; pos < 8; pos++) {
      for (int v = 0; v < 256; v++) {
        for (long fill : new long[] {0, 0x0101_0101_0101_0101L, 0x8080_8080_8080_8080L, -1L, 0x7F7F_7F7F_7F7F_7F7FL}) {
          long word = fill & ~(0xFFL << (8 * pos)) | (long) v << (8 * pos);
          for (int b : new int[] {0, 1, 0x7F, 0x80, 0xFF, v, v ^ 1}) {
            check(word, b);
          }
        }
      }
    }
  }

  @Test
  void randomWordsAgreeWithAByteLoop() {
    SplittableRandom r = new SplittableRandom(0xB17E5L);
    for (int round = 0; round < 200_000; round++) {
      // bytes from a small alphabet half of the time, so that matches and neighbours of matches are common
      long word = 0;
      boolean small = r.nextBoolean();
      for (int i = 0; i < 8; i++) {
        word |= (long) (small ? r.nextInt(4) : r.nextInt(256)) << (8 * i);
      }
      check(word, small ? r.nextInt(4) : r.nextInt(256));
    }
  }

  private static void check(long word, int b) {
    int expected = loop(word, b);
    long pattern = ByteMatch.broadcast(b);
    String at = String.format("word %016x, byte %02x", word, b & 0xFF);
    assertEquals(expected, ByteMatch.match(word, pattern), at);
    assertEquals(spread(expected), ByteMatch.matchFlags(word, pattern), at);
    assertEquals(loop(word, 0), ByteMatch.zeroBytes(word), at);
    assertEquals(spread(loop(word, 0)), ByteMatch.zeroByteFlags(word), at);
    checkLowest(word ^ pattern, at);
  }

  @Test
  void broadcastRepeatsTheLowByte() {
    assertEquals(0, ByteMatch.broadcast(0));
    assertEquals(0x5A5A_5A5A_5A5A_5A5AL, ByteMatch.broadcast(0x5A));
    assertEquals(-1L, ByteMatch.broadcast(0xFF));
    assertEquals(0x0101_0101_0101_0101L, ByteMatch.broadcast(0x301));
  }

  /** The reference for nibbles: bit 4 i + 3 set iff nibble i of word equals n. */
  private static long nibbleLoop(long word, int n) {
    long f = 0;
    for (int i = 0; i < 16; i++) {
      if (((word >>> (4 * i)) & 0xF) == (n & 0xF)) {
        f |= 8L << (4 * i);
      }
    }
    return f;
  }

  @Test
  void everyNibbleValueInEveryPositionOverEveryFill() {
    for (int pos = 0; pos < 16; pos++) {
      for (int v = 0; v < 16; v++) {
        for (int fillNibble = 0; fillNibble < 16; fillNibble++) {
          long fill = ByteMatch.broadcastNibble(fillNibble);
          long word = fill & ~(0xFL << (4 * pos)) | (long) v << (4 * pos);
          for (int n = 0; n < 16; n++) {
            String at = String.format("word %016x, nibble %x", word, n);
            assertEquals(nibbleLoop(word, n), ByteMatch.matchNibbleFlags(word, ByteMatch.broadcastNibble(n)), at);
            assertEquals(nibbleLoop(word, 0), ByteMatch.zeroNibbleFlags(word), at);
          }
        }
      }
    }
    // a zero nibble below a 1 nibble: the short borrow form would report both
    assertEquals(0x8L, ByteMatch.zeroNibbleFlags(0x1111_1111_1111_1110L));
    assertEquals(0x8888_8888_8888_8888L, ByteMatch.zeroNibbleFlags(0));
    assertEquals(0, ByteMatch.zeroNibbleFlags(-1L));
  }

  @Test
  void randomWordsAgreeWithANibbleLoop() {
    SplittableRandom r = new SplittableRandom(0x41BB1EL);
    for (int round = 0; round < 200_000; round++) {
      long word = r.nextBoolean() ? r.nextLong() : r.nextLong() & 0x1111_1111_1111_1111L * (r.nextInt(3) + 1);
      int n = r.nextInt(16);
      assertEquals(nibbleLoop(word, n), ByteMatch.matchNibbleFlags(word, ByteMatch.broadcastNibble(n)),
          String.format("word %016x, nibble %x", word, n));
    }
  }

  /**
   * {@link ByteMatch#lowestZeroByteFlags}: its lowest flag is the lowest zero byte's, and masked to
   * the low k bytes it is 0 iff none of them is zero, for every k (the exact form as reference).
   */
  private static void checkLowest(long x, String at) {
    long exact = ByteMatch.zeroByteFlags(x);
    long shortForm = ByteMatch.lowestZeroByteFlags(x);
    assertEquals(Long.lowestOneBit(exact), Long.lowestOneBit(shortForm), at);
    assertEquals(0, shortForm & ~0x8080_8080_8080_8080L, at);
    for (int k = 1; k <= 8; k++) {
      long lanes = 0x8080_8080_8080_8080L >>> (64 - 8 * k);
      assertEquals((exact & lanes) != 0, (shortForm & lanes) != 0, at + ", low " + k + " bytes");
    }
  }

  @Test
  void theShortFormFlagsBytesAboveAZeroByte() {
    // byte 0 is zero, byte 1 is 0x01: the borrow flags byte 1 too (why its callers mask from byte 0)
    long x = 0x0202_0202_0202_0100L;
    assertEquals(0x80L, ByteMatch.zeroByteFlags(x));
    assertEquals(0x8080L, ByteMatch.lowestZeroByteFlags(x));
    checkLowest(x, "word " + Long.toHexString(x));
  }
}
