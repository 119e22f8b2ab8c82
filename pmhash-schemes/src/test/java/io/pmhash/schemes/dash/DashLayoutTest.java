package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * Every offset of the Dash-EH layouts against the paper's numbers (Dash §4.1, Fig. 4: a 256-byte
 * bucket, 32 bytes of metadata, 14 pairs of 16 bytes, 18 one-byte fingerprints at bits 64–208)
 * and against docs/format/dash-eh.md.
 */
class DashLayoutTest {
  @Test
  void bucketIsTheFigure4Bucket() {
    assertEquals(256, BUCKET_BYTES);
    assertEquals(64, BUCKET.byteAlignment());
    assertEquals(0, LOCK);
    assertEquals(4, BITMAP);
    assertEquals(8, FP);                // bit 64
    assertEquals(8 + 18, OVF_BITMAP);   // fingerprints end at bit 208 = byte 26
    assertEquals(22, OVF_FP);
    assertEquals(27, OVF_INDEX);
    assertEquals(28, OVF_MEMBER);
    assertEquals(29, OVF_COUNT);
    assertEquals(32, PAIRS);            // 32 bytes of metadata
    assertEquals(16, PAIR_BYTES);
    assertEquals(14, SLOTS);
    assertEquals(4, OVERFLOW_SLOTS);
    assertEquals(PAIRS + SLOTS * PAIR_BYTES, BUCKET_BYTES);
    assertEquals(0, COUNT_MASK & (SLOT_MASK << MEMBER_SHIFT));
    assertEquals(4, MEMBER_SHIFT);      // bits 4..17 membership
    assertEquals(18, ALLOC_SHIFT);      // bits 18..31 allocation
    assertEquals(31, ALLOC_SHIFT + SLOTS - 1);
    assertEquals(1 << 4, STASH_FLAG);
  }

  @Test
  void segmentHeaderDirectoryAndTableHeader() {
    assertEquals(64, SEGMENT_HEADER.byteSize());
    assertEquals(0, SEG_SHAPE);
    assertEquals(0, SEG_DEPTH);
    assertEquals(1, SEG_STATE);
    assertEquals(4, SEG_PATTERN);
    assertEquals(8, SEG_SIDE);
    assertEquals(16, SEG_VERSION);
    assertEquals(24, SEG_RECOVERY_LOCK);
    assertEquals(32, SEG_VICTIM);
    assertEquals(64, SEG_BUCKETS);
    assertEquals(64, NORMAL_BUCKETS);
    assertEquals(64 + 66 * 256, segmentBytes(2));  // 16 KiB of normal buckets + stash (§6.2)
    assertEquals(64 + 68 * 256, segmentBytes(4));
    assertEquals(0, DIR_DEPTH);
    assertEquals(64, DIR_ENTRIES);
    assertEquals(64 + 8 * 1024, directoryBytes(10));
    assertEquals(64, TABLE_HEADER.byteSize());
    assertEquals(0, HDR_MAGIC);
    assertEquals(8, HDR_VERSION);
    assertEquals(12, HDR_STASH);
    assertEquals(16, HDR_DIRECTORY);
    assertEquals(24, HDR_GLOBAL_VERSION);
    assertEquals(32, HDR_KEY_MODE); // pointer mode (§4.5): 0 inline, 1 pointer
    assertEquals(36, HDR_NORMAL); // normal buckets per segment (Fig. 11); 0 in older pools means 64
    assertEquals(4, MIN_NORMAL_BUCKETS);   // 1 KB of normal buckets, Fig. 11's smallest segment
    assertEquals(512, MAX_NORMAL_BUCKETS); // 128 KB, Fig. 11's largest
    assertEquals(segmentBytes(2), segmentBytes(NORMAL_BUCKETS, 2));
    assertEquals(64 + 6 * 256, segmentBytes(4, 2));
    assertEquals(64 + 516 * 256, segmentBytes(512, 4));
    assertEquals(0, KEY_MODE_INLINE);
    assertEquals(1, KEY_MODE_POINTER);
  }

  @Test
  void shapeWordAndPrefix() {
    long s = shape(5, SPLITTING, 0b10110);
    assertEquals(5, depthOf(s));
    assertEquals(SPLITTING, stateOf(s));
    assertEquals(0b10110, patternOf(s));
    assertEquals(0, prefix(-1L, 0));
    assertEquals(1, prefix(-1L, 1));
    assertEquals(0b101, prefix(0xA000_0000_0000_0000L, 3));
    assertEquals(0xFFFF_FFFFL, prefix(-1L, 32));
  }
}
