package io.pmhash.schemes.level;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.PoolFullException;
import io.pmhash.core.PoolOptions;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.PmdkBlocks;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The room rule of docs/llpl.md (Allocation, 5) on the scheme whose structural step holds the most
 * at once: an llpl pool created with {@code withInitialSize(S)} gives PMDK {@code S} bytes (plus
 * its allowance) for the table's blocks at their peak, and a level table there reaches at least
 * the top level whose resize peak fits in {@code S}: the old top {@code T/2}, the old bottom
 * {@code T/4}, the new top {@code T} and the bottom retired by the previous resize, still in its
 * grace period, {@code T/8}: {@code 1.875 T}. Past what PMDK's room holds, the insert that needs
 * the next resize is refused with a {@link PoolFullException} that names {@code withInitialSize},
 * and the table is intact: every record inserted before it is there, the refused one is not, no
 * PMDK block leaked, and the pool reopens with the same contents.
 */
class LevelLlplRoomTest {
  private static final long S = 32L << 20;

  @TempDir Path dir;

  /** The documented lower bound: the largest k whose resize from k - 1 fits in {@code size} bytes. */
  static int documentedTopK(long size) {
    int k = LevelLayout.MIN_K;
    while (resizePeak(k + 1) <= size) {
      k++;
    }
    return k;
  }

  /** What a resize to top level k holds at once (docs/llpl.md, Room). */
  static long resizePeak(int k) {
    return LevelLayout.topBytes(k - 1) + LevelLayout.bottomBytes(k - 1) + LevelLayout.topBytes(k) + LevelLayout.bottomBytes(k - 2);
  }

  private static long key(long i) {
    return (i + 1) * 0x9E3779B97F4A7C15L;
  }

  @Test
  void aPoolOfSBytesReachesTheDocumentedLevelThenRefusesWithWhatToSetAndStaysIntact() throws Exception {
    Path file = dir.resolve("level.pool");
    TableOptions options = TableOptions.scheme(LevelProvider.NAME)
        .withPoolOptions(PoolOptions.defaults().withBackend("llpl").withDurability(Durability.PROCESS).withInitialSize(S));
    int expected = documentedTopK(S);
    long inserted = 0;
    try (LongHashTable t = PmHash.create(file, options)) {
      LevelTable l = (LevelTable) t;
      PoolFullException full = null;
      while (full == null) {
        long before = l.k();
        try {
          t.put(key(inserted), inserted);
          inserted++;
        } catch (PoolFullException e) {
          full = e;
          assertEquals(before, l.k(), "the refused insert changed no level");
        }
        assertTrue(inserted < 100_000_000L, "no refusal within 100M inserts");
      }
      assertTrue(l.k() >= expected, "a level table on an llpl pool of " + S + " bytes reaches top level k = " + expected
          + " (" + LevelLayout.topBytes(expected) + " bytes), reached " + l.k());
      String m = full.getMessage();
      assertTrue(m.contains("withInitialSize") && m.contains("cannot reserve " + LevelLayout.topBytes(l.k() + 1)), m);
      System.out.println("level on llpl, withInitialSize(" + S + "): top level k = " + l.k() + " (" + LevelLayout.topBytes(l.k())
          + " bytes), " + inserted + " records, documented at least k = " + expected + "; refused: " + m);
      assertEquals(inserted, t.size(), "size after the refusal");
      assertFalse(t.containsKey(key(inserted)), "the refused record is not in the table");
      for (long i = 0; i < inserted; i++) {
        assertEquals(i, t.get(key(i), Long.MIN_VALUE), "record " + i + " after the refusal");
      }
      LevelInvariants.check(l, "after the refusal");
      PmdkBlocks.require(t, LevelProvider.NAME);
      t.put(key(0), -1); // an update needs no room
    }
    try (LongHashTable t = PmHash.open(file, TableOptions.any().withDurability(Durability.PROCESS))) {
      assertEquals(inserted, t.size(), "size after reopen");
      assertEquals(-1L, t.get(key(0), Long.MIN_VALUE));
      for (long i = 1; i < inserted; i++) {
        assertEquals(i, t.get(key(i), Long.MIN_VALUE), "record " + i + " after reopen");
      }
      LevelInvariants.check((LevelTable) t, "reopened");
    }
  }
}
