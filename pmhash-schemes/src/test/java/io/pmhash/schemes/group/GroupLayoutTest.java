package io.pmhash.schemes.group;

import static io.pmhash.schemes.group.GroupLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The layout against the paper (16-byte cells, §4.1; global info with count, group size and table
 * size, Fig. 4; two levels of groups, Fig. 3; group size 256 by default, §4.5) and against {@code
 * docs/format/group.md}: every offset of the global info, the bitmap area, both levels, and the
 * addressing of every cell's bit.
 */
class GroupLayoutTest {
  @Test
  void cellIs16BytesKeyThenValue() {
    assertEquals(16, CELL_BYTES);
    assertEquals(0, CELL_KEY);
    assertEquals(8, CELL_VALUE);
  }

  @Test
  void globalInfoOffsets() {
    assertEquals(64, INFO_BYTES);
    assertEquals(64, GLOBAL_INFO.byteAlignment());
    assertEquals(0, INFO_MAGIC);
    assertEquals(8, INFO_VERSION);
    assertEquals(16, INFO_GROUP_SIZE);
    assertEquals(24, INFO_TABLE_SIZE);
    assertEquals(32, INFO_COUNT);
    assertEquals("GROUP001", new String(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(MAGIC).array(), StandardCharsets.US_ASCII));
    assertEquals(256, DEFAULT_GROUP_SIZE);
  }

  @Test
  void blockGeometry() {
    assertEquals(64, BITMAPS);
    assertEquals(64, groupBitmapBytes(256));
    assertEquals(16, groupBitmapBytes(64));
    // N = 256: bitmaps 64 bytes, level 1 at 128, level 2 at 128 + 4096
    assertEquals(128, level1(256));
    assertEquals(128 + 2 * 4096, tableBytes(256));
    // N = 2^22 (the paper's RandomNum table: 2^23 cells): 1 MiB of bits, 128 MiB of cells
    assertEquals(64 + (1 << 20), level1(1L << 22));
    assertEquals(64 + (1 << 20) + (128L << 20), tableBytes(1L << 22));
    for (long n = 64; n <= 1 << 20; n *= 2) {
      assertEquals(0, level1(n) % 64, "level 1 is line-aligned at N " + n);
    }
  }

  @Test
  void cellsAndBitsAreAddressedAsDocumented() {
    GroupCells c = new GroupCells(4096, 512, 256); // 2 groups
    assertEquals(4096 + 192, c.level1, "64 + 512/4 rounded up to a line");
    assertEquals(c.level1 + 16 * 512, c.pair(512), "level 2 follows level 1");
    // group 1's level-1 bits at 4096 + 64 + 64, its level-2 bits 32 bytes later
    assertEquals(4096 + 64 + 64, c.bitmapWord(256));
    assertEquals(4096 + 64 + 64 + 8, c.bitmapWord(256 + 64));
    assertEquals(4096 + 64 + 64 + 32, c.bitmapWord(512 + 256));
    assertEquals(4096 + 64 + 64 + 32 + 24, c.bitmapWord(512 + 511));
    assertEquals(c.bitmapWord(512 + 256), c.level2Bits(1));
    assertEquals(512 + 256, c.level2First(1));
    assertEquals(1, c.groupOf(256));
    assertEquals(0, c.groupOf(255));
    assertEquals(511, c.home(-1L), "the top log2 N bits of the hash");
    assertEquals(0, c.home(0x007F_FFFF_FFFF_FFFFL));
    // every cell's bit is a distinct (word, bit) inside the bitmap area
    Set<Long> bits = new HashSet<>();
    for (long cell = 0; cell < c.capacity(); cell++) {
      long w = c.bitmapWord(cell);
      assertTrue(w >= c.bitmaps && w + 8 <= c.level1, "cell " + cell);
      assertEquals(0, w % 8);
      assertTrue(bits.add(w * 64 + (cell & 63)), "cell " + cell + " shares a bit");
    }
    GroupCells small = new GroupCells(0, 64, 64);
    assertEquals(64, small.bitmapWord(0));
    assertEquals(72, small.bitmapWord(64));
  }
}
