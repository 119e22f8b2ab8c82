package io.pmhash.schemes.level;

import static io.pmhash.schemes.level.LevelLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The layout against the numbers of the papers: 128-byte buckets (Dash §6.1), two cache lines,
 * at most four buckets probed (level hashing §3.1); and against {@code docs/format/level.md}.
 */
class LevelLayoutTest {
  @Test
  void bucketIs128BytesWithATokenWordAndSevenSlots() {
    assertEquals(128, BUCKET_BYTES);
    assertEquals(0, TOKEN);
    assertEquals(16, SLOT0);
    assertEquals(7, SLOTS);
    assertEquals(0x7F, ALL_SLOTS);
    assertEquals(16, PAIR_BYTES);
    assertEquals(0, PAIR_KEY);
    assertEquals(8, PAIR_VALUE);
    assertEquals(64, BUCKET.byteAlignment());
    assertEquals(4, PROBED_BUCKETS);
  }

  @Test
  void noSlotStraddlesACacheLine() {
    for (int s = 0; s < SLOTS; s++) {
      long start = slotOffset(0, s);
      assertTrue(start / 64 == (start + PAIR_BYTES - 1) / 64, "slot " + s + " at " + start);
      assertTrue(start + PAIR_BYTES <= BUCKET_BYTES);
    }
    assertEquals(64, slotOffset(0, 3));
  }

  @Test
  void tableHeaderOffsets() {
    assertEquals(64, TABLE_HEADER.byteSize());
    assertEquals(0, HDR_MAGIC);
    assertEquals(8, HDR_VERSION);
    assertEquals(16, HDR_TOP);
    assertEquals(24, HDR_BOTTOM);
    assertEquals(32, HDR_K);
    assertEquals(40, HDR_CLEAN_SIZE);
    assertEquals("LEVEL001", new String(java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(MAGIC).array(), java.nio.charset.StandardCharsets.US_ASCII));
  }

  @Test
  void bottomBucketIsTopBucketOverTwoAndTopOfLevelKIsBottomOfLevelKPlusOne() {
    long h = 0xDEADBEEFCAFEF00DL;
    for (int k = MIN_K; k < 30; k++) {
      assertEquals(topIndex(h, k), topIndex(h, k + 1) >>> 1, "k " + k);
    }
    assertEquals(128L << 5, topBytes(5));
    assertEquals(128L << 4, bottomBytes(5));
    assertEquals((32 + 16) * 7, slotsAt(5));
  }
}
