package io.pmhash.schemes.level;

import static io.pmhash.schemes.level.LevelCrashSupport.key;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.PersistenceStats;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Drains and flushed lines per operation equal the table in {@link io.pmhash.schemes.level} and
 * {@code docs/format/level.md}: insert 2/2, opportunistic update 2/2, in-place update 1/1, delete
 * 1/1, insert after one movement 5/5, reads 0/0.
 */
class LevelPersistCountTest {
  @TempDir Path dir;

  private static PersistenceStats stats(LevelTable t) {
    return t.pool().persistence().stats();
  }

  private static void assertCost(LevelTable t, PersistenceStats before, long drains, long lines, String what) {
    PersistenceStats d = stats(t).minus(before);
    assertEquals(drains, d.drains(), what + ": drains");
    assertEquals(lines, d.linesFlushed(), what + ": lines flushed");
  }

  private LevelTable create(long capacity) throws Exception {
    return (LevelTable) PmHash.create(dir.resolve("t.pool"),
        TableOptions.scheme(LevelProvider.NAME).withDurability(Durability.PMEM_EMULATED).withInitialCapacity(capacity));
  }

  @Test
  void insertUpdateDeleteAndReads() throws Exception {
    try (LevelTable t = create(10_000)) {
      PersistenceStats s = stats(t);
      assertTrue(t.put(1, 10));
      assertCost(t, s, 2, 2, "insert");
      s = stats(t);
      assertTrue(!t.put(1, 11));
      assertCost(t, s, 2, 2, "opportunistic update");
      s = stats(t);
      assertEquals(11, t.get(1, -1));
      assertTrue(t.containsKey(1));
      assertEquals(-1, t.get(2, -1));
      assertCost(t, s, 0, 0, "reads");
      s = stats(t);
      assertTrue(t.remove(1));
      assertCost(t, s, 1, 1, "delete");
    }
  }

  @Test
  void updateInAFullBucketIsOneValueStore() throws Exception {
    try (LevelTable t = create(0)) {
      int i = 0;
      while (LevelCrashTest.fullBuckets(t) == 0) {
        t.put(key(i), i);
        i++;
      }
      LevelTable.Levels l = t.levels;
      long full = -1;
      for (long b = 0; b < 1L << l.k() && full < 0; b++) {
        if (LevelBucket.count(t.pool.memory(), LevelTable.bucket(l.top(), b)) == LevelLayout.SLOTS) {
          full = LevelTable.bucket(l.top(), b);
        }
      }
      for (long b = 0; b < 1L << (l.k() - 1) && full < 0; b++) {
        if (LevelBucket.count(t.pool.memory(), LevelTable.bucket(l.bottom(), b)) == LevelLayout.SLOTS) {
          full = LevelTable.bucket(l.bottom(), b);
        }
      }
      long k = LevelBucket.key(t.pool.memory(), full, 0);
      PersistenceStats s = stats(t);
      assertTrue(!t.put(k, 77));
      assertCost(t, s, 1, 1, "in-place update");
      assertEquals(77, t.get(k, -1));
    }
  }

  @Test
  void insertAfterOneMovement() throws Exception {
    try (LevelTable t = create(0)) {
      for (int i = 0; ; i++) {
        long moves = t.moves.get();
        long resizes = t.resizes.get();
        PersistenceStats s = stats(t);
        t.put(key(i), i);
        if (t.moves.get() == moves + 1 && t.resizes.get() == resizes) {
          assertCost(t, s, 5, 5, "insert after a movement");
          return;
        }
      }
    }
  }
}
