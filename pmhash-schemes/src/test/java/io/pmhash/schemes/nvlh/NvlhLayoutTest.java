package io.pmhash.schemes.nvlh;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Every size and offset of {@code docs/format/nvlh.md}, against the numbers written there. */
class NvlhLayoutTest {
  @Test
  void bucket() {
    assertEquals(128, NvlhLayout.BUCKET_BYTES);
    assertEquals(2, NvlhLayout.BUCKET_LINES);
    assertEquals(1L << NvlhLayout.BUCKET_SHIFT, NvlhLayout.BUCKET_BYTES);
    assertEquals(64, NvlhLayout.BUCKET.byteAlignment());
    assertEquals(0, NvlhLayout.META);
    assertEquals(8, NvlhLayout.NEXT);
    assertEquals(16, NvlhLayout.SLOT0);
    assertEquals(16, NvlhLayout.PAIR_BYTES);
    assertEquals(0, NvlhLayout.PAIR_KEY);
    assertEquals(8, NvlhLayout.PAIR_VALUE);
    assertEquals(7, NvlhLayout.SLOTS);
    assertEquals(0x7F, NvlhLayout.ALL_SLOTS);
    assertEquals(0x80L, NvlhLayout.IN_PROCESS);
    assertEquals(2, NvlhLayout.LAYOUT_VERSION);
    for (int s = 0; s < NvlhLayout.SLOTS; s++) {
      // slot s: bit s, and its fingerprint in byte s + 1 of the meta word
      assertEquals(1L << s | 0xABL << (8 + 8 * s), NvlhLayout.slotBits(s, 0xAB), "slot " + s);
      assertEquals(0xAB, NvlhLayout.fingerprintAt(NvlhLayout.slotBits(s, 0xAB), s));
    }
    assertEquals(NvlhLayout.IN_PROCESS, NvlhLayout.withoutSlots(-1L, NvlhLayout.ALL_SLOTS), "only the flag is not a slot's");
    assertEquals(0xCD, NvlhLayout.fingerprint(0xCD00_0000_0000_0001L), "the top byte of the hash");
    for (int s = 0; s < NvlhLayout.SLOTS; s++) {
      long at = NvlhLayout.slotOffset(0, s);
      assertEquals(16 + 16L * s, at);
      assertEquals(at / 64, (at + 15) / 64, "slot " + s + " within one cache line");
    }
  }

  @Test
  void header() {
    assertEquals(384, NvlhLayout.TABLE_HEADER.byteSize());
    assertEquals(0, NvlhLayout.HDR_MAGIC);
    assertEquals(8, NvlhLayout.HDR_VERSION);
    assertEquals(12, NvlhLayout.HDR_SEG_SHIFT);
    assertEquals(16, NvlhLayout.HDR_N0);
    assertEquals(24, NvlhLayout.HDR_STATE);
    assertEquals(32, NvlhLayout.HDR_PENDING);
    assertEquals(40, NvlhLayout.HDR_PENDING_TO);
    assertEquals(48, NvlhLayout.HDR_CLEAN_SIZE);
    assertEquals(56, NvlhLayout.HDR_CLEAN_OVERFLOW);
    assertEquals(64, NvlhLayout.HDR_DIR);
    assertEquals(40, NvlhLayout.DIR_LEVELS);
    assertEquals(0x31303030484C564EL, NvlhLayout.MAGIC, "NVLH0001 little-endian");
  }

  @Test
  void stateWordAndDirectory() {
    long s = NvlhLayout.state(3, 5);
    assertEquals(0x0300_0000_0000_0005L, s);
    assertEquals(3, NvlhLayout.level(s));
    assertEquals(5, NvlhLayout.splitPointer(s));
    assertEquals(1L << 62, NvlhLayout.PENDING_SPLIT);
    assertEquals(2L << 62, NvlhLayout.PENDING_MERGE);
    // segment g is entry g + 1 - 2^L of level L = floor(log2(g + 1))
    long[][] cases = {{0, 0, 0}, {1, 1, 0}, {2, 1, 1}, {3, 2, 0}, {6, 2, 3}, {7, 3, 0}, {1022, 9, 511}, {1023, 10, 0}};
    for (long[] c : cases) {
      assertEquals(c[1], NvlhLayout.dirLevel(c[0]), "level of segment " + c[0]);
      assertEquals(c[2], NvlhLayout.dirIndex(c[0]), "index of segment " + c[0]);
    }
  }

  @Test
  void nvdh() {
    assertEquals(64, NvdhLayout.TABLE_HEADER.byteSize());
    assertEquals(0, NvdhLayout.HDR_MAGIC);
    assertEquals(8, NvdhLayout.HDR_VERSION);
    assertEquals(16, NvdhLayout.HDR_TABLE);
    assertEquals(24, NvdhLayout.HDR_K);
    assertEquals(32, NvdhLayout.HDR_CLEAN_SIZE);
    assertEquals(40, NvdhLayout.HDR_CLEAN_TOMBSTONES);
    assertEquals(0x313030304844564EL, NvdhLayout.MAGIC, "NVDH0001 little-endian");
    assertEquals(64, NvdhLayout.statesBytes(6), "64 slots: 16 bytes of states, one line");
    assertEquals(64 + 16 * 64, NvdhLayout.tableBytes(6));
    assertEquals(256, NvdhLayout.statesBytes(10), "1024 slots: 2 bits each");
    assertEquals(256 + 16 * 1024, NvdhLayout.tableBytes(10));
  }
}
