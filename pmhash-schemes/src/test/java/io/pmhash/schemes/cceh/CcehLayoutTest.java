package io.pmhash.schemes.cceh;

import static io.pmhash.schemes.cceh.CcehLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Every offset of {@link CcehLayout} against the numbers of CCEH as Dash §6.2 evaluated it:
 * 16 KB of pairs per segment, 64-byte (one cache line) buckets of four 16-byte pairs, probing
 * four cache lines (16 slots); and against {@code docs/format/cceh.md}.
 */
class CcehLayoutTest {
  @Test
  void bucketIsOneCacheLineOfFourPairs() {
    assertEquals(16, PAIR_BYTES);
    assertEquals(0, PAIR_KEY);
    assertEquals(8, PAIR_VALUE);
    assertEquals(64, BUCKET_BYTES);
    assertEquals(4, PAIRS_PER_BUCKET);
    assertEquals(64, BUCKET.byteAlignment());
  }

  @Test
  void segmentIs16KbOfBucketsAfterHeaderAndBitmap() {
    assertEquals(256, BUCKETS);
    assertEquals(1024, SLOTS);
    assertEquals(16 * 1024, BUCKETS * BUCKET_BYTES, "16 KB of buckets (Dash §6.2)");
    assertEquals(0, SEG_LOCK);
    assertEquals(8, SEG_SHAPE);
    assertEquals(16, SEG_CHILD);
    assertEquals(64, SEG_BITMAP);
    assertEquals(16, BITMAP_WORDS);
    assertEquals(192, SEG_PAIRS);
    assertEquals(192 + 16384, SEGMENT_BYTES);
    assertEquals(0, SEG_PAIRS % 64, "buckets are cache-line aligned");
    assertEquals(0, SEG_BITMAP % 8, "bitmap words are aligned (CASable)");
    assertEquals(64, SEGMENT.byteAlignment());
  }

  @Test
  void probingCoversFourCacheLines() {
    assertEquals(4, PROBE_BUCKETS);
    assertEquals(16, PROBE_SLOTS);
    assertEquals(0, startSlot(0));
    assertEquals(4 * 255, startSlot(0xFF));
    assertEquals(4 * 3, startSlot(0x1234_5678_9ABC_DE03L));
    assertEquals(SEG_PAIRS + 16 * 5, slotOffset(0, 5) - 0);
  }

  @Test
  void directoryIsIndexedByTheMostSignificantBits() {
    assertEquals(0, DIR_DEPTH);
    assertEquals(64, DIR_ENTRIES);
    assertEquals(64 + 8 * 4, directoryBytes(2));
    assertEquals(0, prefix(-1L, 0));
    assertEquals(1, prefix(-1L, 1));
    assertEquals(0b101, prefix(0b101L << 61, 3));
    assertEquals((1L << 31) - 1, prefix(-1L, 31));
  }

  @Test
  void shapeWordPacksDepthAndPattern() {
    long s = shape(5, 0b10110);
    assertEquals(5, depthOf(s));
    assertEquals(0b10110, patternOf(s));
    assertEquals(5L | 0b10110L << 32, s);
    assertTrue(covers(shape(3, 0b101), 0b101L << 61 | 12345));
    assertFalse(covers(shape(3, 0b100), 0b101L << 61));
    assertTrue(covers(shape(0, 0), 42), "depth 0 covers every hash");
  }

  @Test
  void tableHeader() {
    assertEquals(64, TABLE_HEADER.byteSize());
    assertEquals(0, HDR_MAGIC);
    assertEquals(8, HDR_VERSION);
    assertEquals(16, HDR_DIRECTORY);
    assertEquals("CCEH0001", new String(java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(MAGIC).array(), java.nio.charset.StandardCharsets.US_ASCII));
  }
}
