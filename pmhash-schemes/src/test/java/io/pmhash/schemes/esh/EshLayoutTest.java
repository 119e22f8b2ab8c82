package io.pmhash.schemes.esh;

import static io.pmhash.schemes.esh.EshLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.schemes.internal.ExtendibleDirectory;
import org.junit.jupiter.api.Test;

/**
 * Every offset and size of {@link EshLayout} against the numbers of the dissertation (§4.3.2,
 * Fig. 4.1: a 256-byte bucket of 32 bytes of metadata and 224 bytes of records, 14 pairs of 16
 * bytes; §4.4.1: 16 KB segments; §3.4.1: ACCEH's 64-byte bucket) and of {@code
 * docs/format/esh.md}.
 */
class EshLayoutTest {
  @Test
  void bucketIsThePapers() {
    assertEquals(32, META.byteSize(), "metadata: 32 bytes (§4.3.2)");
    assertEquals(256, ESH_BUCKET.byteSize(), "ESH bucket: 256 bytes (§4.3.2, one Optane block)");
    assertEquals(224, ESH_BUCKET.byteSize() - PAIRS, "224 bytes of records (§4.4.1)");
    assertEquals(14, ESH_PAIRS);
    assertEquals(16, PAIR_BYTES);
    assertEquals(64, ACCEH_BUCKET.byteSize(), "ACCEH bucket: one cache line (§3.4.1)");
    assertEquals(0, LOCK);
    assertEquals(4, STATE);
    assertEquals(8, COMMIT);
    assertEquals(16, OFRB);
    assertEquals(24, FPS);
    assertEquals(32, PAIRS);
    assertEquals(0, PAIR_KEY);
    assertEquals(8, PAIR_VALUE);
    assertEquals(64, ESH_BUCKET.byteAlignment());
  }

  @Test
  void commitWordBits() {
    long c = commit(0b10_0000_0000_0101, 0b100, 300, 14);
    assertEquals(0b10_0000_0000_0101, c & 0x3FFF, "[13..0] allocated");
    assertEquals(0b100, (c >>> 16) & 0x3FFF, "[29..16] foreign");
    assertEquals(3, (c >>> 32) & 0xF, "[35..32] member count");
    assertFalse(full(c), "[36] overflow bit clear");
    assertEquals(300, c >>> 48, "[63..48] overflow count");
    assertEquals(0b10_0000_0000_0001, home(c));
    long f = commit(0x3FFF, 0, 0, 14);
    assertTrue(full(f) && (f & (1L << 36)) != 0 && memberCount(f) == 14, "OB = MC == 14");
    assertTrue(full(commit(0b11, 0, 0, 2)), "OB of a full 2-pair bucket");
    assertEquals(7, overflowCount(withOverflowCount(c, 7)));
    assertEquals(alloc(c), alloc(withOverflowCount(c, 7)));
    long fps = withFingerprint(withFingerprint(0, 13, 0xA), 0, 0x5);
    assertEquals(0xA, fingerprintAt(fps, 13));
    assertEquals(0xA0_0000_0000_0005L, fps, "nibble i at bits [4i+3..4i]");
  }

  @Test
  void segmentAndHeader() {
    assertEquals(64, SEGMENT_HEADER.byteSize());
    assertEquals(0, SEG_SHAPE);
    assertEquals(8, SEG_CHILD);
    assertEquals(16, SEG_PARENT);
    assertEquals(24, SEG_RECOVERY_LOCK);
    assertEquals(64, SEG_BUCKETS);
    assertEquals(16 * 1024, DEFAULT_BUCKETS * ESH_BUCKET.byteSize(), "16 KB of buckets per segment (§4.4.1)");
    assertEquals(64 + 16 * 1024, segmentBytes(256, DEFAULT_BUCKETS));
    assertEquals(64, TABLE_HEADER.byteSize());
    assertEquals(0, HDR_MAGIC);
    assertEquals(8, HDR_VERSION);
    assertEquals(12, HDR_BUCKET_BYTES);
    assertEquals(16, HDR_BUCKETS);
    assertEquals(24, HDR_DIRECTORY);
    assertEquals(32, HDR_GLOBAL_VERSION);
    assertEquals("ESH00001", new String(java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(MAGIC).array(), java.nio.charset.StandardCharsets.US_ASCII));
    assertEquals(0x5_0000_0007L, shape(7, 5));
    assertEquals(7, depthOf(shape(7, 5)));
    assertEquals(5, patternOf(shape(7, 5)));
  }

  @Test
  void directoryIsCcehs() {
    assertEquals(0, ExtendibleDirectory.DEPTH);
    assertEquals(64, ExtendibleDirectory.ENTRIES);
    assertEquals(64 + 8 * 4, ExtendibleDirectory.bytes(2));
    assertEquals(0b101, ExtendibleDirectory.prefix(0b101L << 61, 3), "the top bits index the directory");
    assertEquals(0, ExtendibleDirectory.prefix(-1L, 0));
  }
}
