package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashLhLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * Every offset of the Dash-LH layouts against {@code docs/format/dash-lh.md}, the sharing of
 * Dash-EH's bucket and segment offsets, and the hybrid-expansion arithmetic of §5.2 (Fig. 6)
 * against a direct enumeration.
 */
class DashLhLayoutTest {
  @Test
  void segmentHeader() {
    assertEquals(64, SEGMENT_HEADER.byteSize());
    assertEquals(0, SEG_SHAPE);
    assertEquals(8, SEG_CHAIN);
    assertEquals(16, SEG_VERSION);
    assertEquals(24, SEG_RECOVERY_LOCK);
    assertEquals(32, SEG_CHAIN_LOCK);
    // shared with Dash-EH: the bucket code and the recovery lock protocol rely on these
    assertEquals(DashLayout.SEGMENT_HEADER.byteSize(), SEGMENT_HEADER.byteSize());
    assertEquals(DashLayout.SEG_BUCKETS, SEGMENT_HEADER.byteSize());
    assertEquals(DashLayout.SEG_VERSION, SEG_VERSION);
    assertEquals(DashLayout.SEG_RECOVERY_LOCK, SEG_RECOVERY_LOCK);
    assertEquals(DashLayout.SEG_SHAPE, SEG_SHAPE);
    assertEquals(64 + 66 * 256, DashLayout.segmentBytes(2)); // 16 KB segments + header (§6.2)
  }

  @Test
  void chainNode() {
    assertEquals(320, NODE_BYTES);
    assertEquals(0, NODE_NEXT);
    assertEquals(64, NODE_BUCKET);
    assertEquals(256, DashLayout.BUCKET_BYTES); // Dash §4.1: 256-byte buckets
  }

  @Test
  void tableHeader() {
    assertEquals(0, HDR_MAGIC);
    assertEquals(8, HDR_VERSION);
    assertEquals(12, HDR_STASH);
    assertEquals(16, HDR_FIRST);
    assertEquals(20, HDR_STRIDE);
    assertEquals(24, HDR_GLOBAL_VERSION);
    assertEquals(32, HDR_N_NEXT);
    assertEquals(40, HDR_MERGE_LOAD);
    assertEquals(64, HDR_DIRECTORY);
    assertEquals(64 + 8 * 128, TABLE_HEADER.byteSize());
    assertEquals("DASHLH01", new String(java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(MAGIC).array(), java.nio.charset.StandardCharsets.US_ASCII));
  }

  @Test
  void nNextWordPacksNInTheHighAndNextInTheLowHalf() {
    long w = nNext(3, 0xFFFF_FFFEL);
    assertEquals(3, roundOf(w));
    assertEquals(0xFFFF_FFFEL, nextOf(w));
    assertEquals(0x0000_0003_FFFF_FFFEL, w);
  }

  /**
   * Entry and index of every segment equal a direct walk over the arrays (§5.2, Fig. 6), for
   * power-of-two strides (a shift) and others (a division).
   */
  @Test
  void hybridExpansionMatchesAnEnumeration() {
    for (int firstShift : new int[] {0, 2, 6}) {
      for (int stride : new int[] {1, 3, 4, 5, 8, 12, 16}) {
        long s = 0;
        for (int e = 0; e < DIRECTORY_ENTRIES && s < 1L << 24; e++) {
          long size = arraySegments(e, firstShift, stride);
          long expectedSize = e == 0 ? 1L << firstShift : (1L << firstShift) << ((e - 1) / stride);
          assertEquals(expectedSize, size, "array size of entry " + e);
          assertEquals(s, firstSegmentOf(e, firstShift, stride), "first segment of entry " + e);
          for (long j = 0; j < size; j += Math.max(1, size / 7)) {
            assertEquals(e, entryOf(s + j, firstShift, stride), "entry of segment " + (s + j));
            assertEquals(j, indexInArray(s + j, firstShift, stride), "index of segment " + (s + j));
          }
          assertEquals(e, entryOf(s + size - 1, firstShift, stride));
          assertEquals(size - 1, indexInArray(s + size - 1, firstShift, stride));
          s += size;
        }
      }
    }
  }

  /** §6.2's parameters: a first array of 64 segments, then 8 arrays of 64, 8 of 128, ... */
  @Test
  void paperParameters() {
    assertEquals(0, entryOf(63, 6, 8));
    assertEquals(1, entryOf(64, 6, 8));
    assertEquals(8, entryOf(64 + 8 * 64 - 1, 6, 8));
    assertEquals(9, entryOf(64 + 8 * 64, 6, 8));
    assertEquals(128, arraySegments(9, 6, 8));
  }
}
