package io.pmhash.schemes.group;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Durability;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad input: parameters out of range are refused by name before a file exists; a global info
 * whose magic, version, group size or table size is wrong is refused at open with a {@link
 * CorruptPoolException} naming the field, and the table block is not written; a full group in a
 * fixed-size table fails the insert with {@link GroupFullException} and loses nothing.
 */
class GroupBadInputTest {
  @TempDir Path dir;

  @Test
  void parametersOutOfRangeAreRefusedByName() {
    for (long g : new long[] {0, 32, 100, 8192}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () ->
          PmHash.create(dir.resolve("g.pool"), TableOptions.scheme(GroupProvider.NAME).withParam(GroupProvider.GROUP_SIZE, g)).close());
      assertTrue(e.getMessage().contains("groupSize") && e.getMessage().contains("power of two"), e.getMessage());
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () ->
        PmHash.create(dir.resolve("g.pool"), TableOptions.scheme(GroupProvider.NAME).withParam(GroupProvider.EXPAND, 2)).close());
    assertTrue(e.getMessage().contains("expand"), e.getMessage());
    assertFalse(Files.exists(dir.resolve("g.pool")));
  }

  /** Writes a u64 into the closed file at {@code offset}. */
  private static void poke(Path file, long offset, long value) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, value), offset);
    }
  }

  private static byte[] read(Path file, long offset, int length) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      ByteBuffer b = ByteBuffer.allocate(length);
      ch.read(b, offset);
      return b.array();
    }
  }

  @Test
  void aCorruptGlobalInfoIsRefusedNamingTheFieldAndNotWritten() throws Exception {
    long[][] cases = {
        {GroupLayout.INFO_MAGIC, 0x1234L},
        {GroupLayout.INFO_VERSION, 7L},
        {GroupLayout.INFO_GROUP_SIZE, 128L},
        {GroupLayout.INFO_TABLE_SIZE, 1000L},
        {GroupLayout.INFO_TABLE_SIZE, 1L << 40},
    };
    String[] expected = {"bad magic", "layout version 7", "group size 128", "table size 1000", "table size 1099511627776"};
    for (int i = 0; i < cases.length; i++) {
      Path file = dir.resolve("c" + i + ".pool");
      long base;
      long bytes;
      try (GroupTable t = (GroupTable) PmHash.create(file, TableOptions.scheme(GroupProvider.NAME).withDurability(Durability.PROCESS))) {
        for (long k = 0; k < 500; k++) {
          t.put(k, k);
        }
        base = t.current.base;
        bytes = GroupLayout.tableBytes(t.tableSize());
      }
      long original = ByteBuffer.wrap(read(file, base + cases[i][0], 8)).order(ByteOrder.LITTLE_ENDIAN).getLong();
      poke(file, base + cases[i][0], cases[i][1]);
      byte[] before = read(file, base, (int) bytes);
      CorruptPoolException e = assertThrows(CorruptPoolException.class, () -> PmHash.open(file, TableOptions.any()).close());
      assertTrue(e.getMessage().contains(expected[i]) && e.getMessage().contains(file.toString()), e.getMessage());
      assertArrayEquals(before, read(file, base, (int) bytes), "the refused open wrote to the table block");
      // repaired, the file opens with every record
      poke(file, base + cases[i][0], original);
      try (LongHashTable t = PmHash.open(file, TableOptions.any())) {
        assertEquals(500, t.size());
        assertEquals(499, t.get(499, -1));
      }
    }
  }

  @Test
  void aFullGroupInAFixedSizeTableLosesNothing() {
    try (GroupTable t = (GroupTable) PmHash.createVolatile(TableOptions.scheme(GroupProvider.NAME)
        .withParam(GroupProvider.GROUP_SIZE, 64).withParam(GroupProvider.EXPAND, 0))) {
      long k = 0;
      GroupFullException full = null;
      while (full == null) {
        try {
          t.put(k * 0x9E3779B97F4A7C15L, k);
          k++;
        } catch (GroupFullException e) {
          full = e;
        }
      }
      assertTrue(full.getMessage().contains("expand=0") && full.getMessage().contains("expand=1"), full.getMessage());
      assertEquals(k, t.size());
      assertEquals(64, t.tableSize(), "no expansion");
      for (long i = 0; i < k; i++) {
        assertEquals(i, t.get(i * 0x9E3779B97F4A7C15L, -1));
      }
      assertFalse(t.containsKey(k * 0x9E3779B97F4A7C15L), "the failed key is absent");
      GroupInvariants.check(t, "after the failed insert");
    }
  }
}
