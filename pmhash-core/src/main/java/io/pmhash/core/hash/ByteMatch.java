package io.pmhash.core.hash;

/**
 * SWAR ("SIMD within a register") byte matching: which of the eight bytes of a {@code long} equal
 * a given byte, with a handful of ALU instructions and no branch. The fingerprint probes of the
 * schemes use it: Dash's bucket (Dash §4.2, 14 one-byte fingerprints per bucket) and group
 * hashing's DRAM fingerprints (one byte per cell, compared eight at a time).
 *
 * <p>The test for a zero byte is the exact form (Hacker's Delight §6-1, "find leftmost 0-byte"):
 *
 * <pre>
 *   t = (x &amp; 0x7F..7F) + 0x7F..7F     // bit 7 of a byte set iff its low 7 bits are not all 0
 *   t = ~(t | x | 0x7F..7F)             // bit 7 of a byte set iff the whole byte is 0
 * </pre>
 *
 * The additions never carry from one byte into the next (each byte's sum is at most 0xFE), so a
 * byte is reported if and only if it is zero: unlike the shorter {@code (x - 0x01..01) & ~x &
 * 0x80..80}, a zero byte never makes its neighbour look zero (no borrow false positives). Bytes
 * are numbered in little-endian order: byte {@code i} of {@code x} is {@code (x >>> 8 i) & 0xFF},
 * the byte at offset {@code i} of a little-endian load.
 *
 * <p>Two result forms: {@link #zeroBytes(long)} gathers the eight flags into an 8-bit mask (bit
 * {@code i} for byte {@code i}; one multiply more), for callers that combine several words into
 * one mask; {@link #zeroByteFlags(long)} leaves them in place (bit {@code 8 i + 7} for byte
 * {@code i}), for callers that walk the matches with {@link Long#numberOfTrailingZeros} and need
 * the byte index, {@code ntz >>> 3}.
 *
 * <p>The same test works on the sixteen 4-bit nibbles of a word with {@code 0x7} for {@code 0x7F}
 * ({@link #zeroNibbleFlags}, {@link #matchNibbleFlags}): each nibble's sum is at most {@code 0xE},
 * so again nothing carries. ESH's bucket keeps 4-bit fingerprints (docs/format/esh.md).
 */
public final class ByteMatch {
  private ByteMatch() {}

  /** 0x01 in every byte: {@code b * ONES} repeats byte {@code b} eight times. */
  private static final long ONES = 0x0101010101010101L;
  /** 0x7F in every byte. */
  private static final long LOW7 = 0x7F7F7F7F7F7F7F7FL;
  /** 0x1 in every nibble: {@code n * NIBBLE_ONES} repeats nibble {@code n} sixteen times. */
  private static final long NIBBLE_ONES = 0x1111111111111111L;
  /** 0x7 in every nibble. */
  private static final long LOW3 = 0x7777777777777777L;
  /** 0x80 in every byte. */
  private static final long HIGHS = 0x8080808080808080L;
  /** Moves bit 8i of a word of 0/1 bytes to bit 56 + i: the gather of {@link #zeroBytes}. */
  private static final long GATHER = 0x0102040810204080L;

  /**
   * The pattern to match against: byte {@code b} in all eight bytes.
   *
   * @param b the byte, its low 8 bits are used
   * @return {@code b} repeated eight times
   */
  public static long broadcast(int b) {
    return (b & 0xFFL) * ONES;
  }

  /**
   * The zero bytes of a word, flagged in place.
   *
   * @param x the word
   * @return bit {@code 8 i + 7} set iff byte {@code i} of {@code x} is zero; every other bit clear
   */
  public static long zeroByteFlags(long x) {
    long t = (x & LOW7) + LOW7;
    return ~(t | x | LOW7);
  }

  /**
   * The short test for zero bytes, {@code (x - 0x01..01) & ~x & 0x80..80}: three instructions
   * against {@link #zeroByteFlags}'s five, for a first test before the exact one where most words
   * hold no zero byte (a search for an absent key compares fingerprints that nearly never match).
   * A borrow out of a zero byte may flag the bytes above it falsely, never a byte below it, so:
   * the result is 0 iff {@code x} has no zero byte; its lowest flag is the lowest zero byte's; and,
   * masked to the low {@code k} bytes ({@code 0x80} in each of bytes {@code 0..k-1}), it is 0 iff
   * none of those bytes is zero (a false flag among them has a true zero below it, also among
   * them). A falsely flagged byte is one equal to 0x01 directly above a zero byte (or above such a
   * byte): as candidates for a fingerprint match, whose keys are compared anyway, its flags are
   * safe to use, one false candidate in about 256 true ones. Any other use needs {@link
   * #zeroByteFlags}.
   *
   * @param x the word
   * @return bit {@code 8 i + 7} set for the lowest zero byte {@code i} of {@code x}, possibly for
   *     bytes above it; every other bit clear
   */
  public static long lowestZeroByteFlags(long x) {
    return (x - ONES) & ~x & HIGHS;
  }

  /**
   * The zero bytes of a word, gathered.
   *
   * @param x the word
   * @return bit {@code i} (0..7) set iff byte {@code i} of {@code x} is zero
   */
  public static int zeroBytes(long x) {
    return gather(zeroByteFlags(x));
  }

  /**
   * Flags in place gathered into a mask.
   *
   * @param flags bits {@code 8 i + 7} only, as {@link #zeroByteFlags} or {@link
   *     #lowestZeroByteFlags} return them
   * @return bit {@code i} (0..7) set iff bit {@code 8 i + 7} of {@code flags} is
   */
  public static int gather(long flags) {
    return (int) (((flags >>> 7) * GATHER) >>> 56);
  }

  /**
   * The bytes of {@code word} equal to the byte of {@code pattern}, flagged in place.
   *
   * @param word eight bytes to compare
   * @param pattern {@link #broadcast} of the byte sought
   * @return bit {@code 8 i + 7} set iff byte {@code i} of {@code word} matches
   */
  public static long matchFlags(long word, long pattern) {
    return zeroByteFlags(word ^ pattern);
  }

  /**
   * The bytes of {@code word} equal to the byte of {@code pattern}, gathered.
   *
   * @param word eight bytes to compare
   * @param pattern {@link #broadcast} of the byte sought
   * @return bit {@code i} (0..7) set iff byte {@code i} of {@code word} matches
   */
  public static int match(long word, long pattern) {
    return zeroBytes(word ^ pattern);
  }

  /**
   * The pattern to match nibbles against: nibble {@code n} in all sixteen nibbles.
   *
   * @param n the nibble, its low 4 bits are used
   * @return {@code n} repeated sixteen times
   */
  public static long broadcastNibble(int n) {
    return (n & 0xFL) * NIBBLE_ONES;
  }

  /**
   * The zero nibbles of a word, flagged in place.
   *
   * @param x the word
   * @return bit {@code 4 i + 3} set iff nibble {@code i} of {@code x} (bits {@code 4 i .. 4 i + 3})
   *     is zero; every other bit clear
   */
  public static long zeroNibbleFlags(long x) {
    long t = (x & LOW3) + LOW3;
    return ~(t | x | LOW3);
  }

  /**
   * The nibbles of {@code word} equal to the nibble of {@code pattern}, flagged in place: walk them
   * with {@link Long#numberOfTrailingZeros}; the nibble index is {@code ntz >>> 2}.
   *
   * @param word sixteen nibbles to compare
   * @param pattern {@link #broadcastNibble} of the nibble sought
   * @return bit {@code 4 i + 3} set iff nibble {@code i} of {@code word} matches
   */
  public static long matchNibbleFlags(long word, long pattern) {
    return zeroNibbleFlags(word ^ pattern);
  }
}
