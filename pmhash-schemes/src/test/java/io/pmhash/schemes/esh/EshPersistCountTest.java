package io.pmhash.schemes.esh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.PersistenceStats;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flushes (lines) and drains per operation, as {@code docs/format/esh.md} and {@link EshSegment}
 * state them: insert into the home 2 lines and 2 drains, into a neighbour 3 and 2; update 1 and
 * 1; delete from the home 1 and 1, from a neighbour 2 lines and 1 drain; searches nothing; a
 * split 7 drains more and a doubling 4 more.
 */
class EshPersistCountTest {
  @TempDir Path dir;

  private EshTable create() throws Exception {
    return (EshTable) PmHash.create(dir.resolve("t.pool"), TableOptions.scheme(EshProvider.NAME).withDurability(Durability.PROCESS));
  }

  private static PersistenceStats cost(EshTable t, Runnable op) {
    PersistenceStats s0 = t.persistence.stats();
    op.run();
    return t.persistence.stats().minus(s0);
  }

  @Test
  void homeAndNeighbourOperations() throws Exception {
    try (EshTable t = create()) {
      List<Long> keys = EshCrashSupport.keysIn(EshCrashSupport.Geometry.ESH, 9, 0, 0, 16, 1);
      assertEquals(new PersistenceStats(2, 2), cost(t, () -> t.put(keys.get(0), 1)), "insert into the home");
      assertEquals(new PersistenceStats(1, 1), cost(t, () -> t.put(keys.get(0), 2)), "update");
      PersistenceStats reads = cost(t, () -> {
        t.get(keys.get(0), -1);
        t.containsKey(keys.get(1));
        t.get(keys.get(15), -1);
      });
      assertEquals(new PersistenceStats(0, 0), reads, "searches persist nothing");
      for (int i = 1; i < 14; i++) {
        t.put(keys.get(i), i);
      }
      assertEquals(new PersistenceStats(3, 2), cost(t, () -> t.put(keys.get(14), 14)), "insert into a neighbour (Alg. 4.1 overflow)");
      assertEquals(1, t.stats().details().get("overflowRecords"));
      assertEquals(new PersistenceStats(1, 1), cost(t, () -> t.replace(keys.get(14), 140)), "update in a neighbour");
      assertEquals(new PersistenceStats(2, 1), cost(t, () -> t.remove(keys.get(14))), "delete from a neighbour");
      assertEquals(new PersistenceStats(1, 1), cost(t, () -> t.remove(keys.get(0))), "delete from the home");
      assertEquals(new PersistenceStats(0, 0), cost(t, () -> {
        t.remove(keys.get(0));
        t.replace(keys.get(0), 5);
        t.putIfAbsent(keys.get(1), 5);
      }), "a failed remove, replace or putIfAbsent persists nothing");
    }
  }

  @Test
  void splitAndDoubling() throws Exception {
    try (EshTable t = create()) {
      long k = 0;
      for (int expectedSplits = 1; expectedSplits <= 4; expectedSplits++) {
        for (;;) {
          long before = t.splits.get();
          long doublings = t.doublings.get();
          long key = ++k;
          PersistenceStats c = cost(t, () -> t.put(key, key));
          if (t.splits.get() == before) {
            assertEquals(2, c.drains(), "insert without split");
            continue;
          }
          long splits = t.splits.get() - before;
          long dbl = t.doublings.get() - doublings;
          assertEquals(2 + 7 * splits + 4 * dbl, c.drains(), "insert with " + splits + " split(s) and " + dbl + " doubling(s)");
          break;
        }
      }
      assertTrue(t.doublings.get() > 0 && t.splits.get() > t.doublings.get(), "both kinds were seen: " + t.stats());
    }
  }
}
