package io.pmhash.schemes.cceh;

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
 * Flushes and drains per operation, as {@code docs/format/cceh.md} states them: insert 2 drains
 * and 2 lines, update 1 and 1, delete 1 and 1, a search none; a split 7 drains, and a doubling 4
 * more (both counted without the insert that triggered them).
 */
class CcehPersistCountTest {
  @TempDir Path dir;

  private CcehTable create() throws Exception {
    return (CcehTable) PmHash.create(dir.resolve("t.pool"), TableOptions.scheme(CcehProvider.NAME).withDurability(Durability.PROCESS));
  }

  @Test
  void insertUpdateDeleteSearch() throws Exception {
    try (CcehTable t = create()) {
      PersistenceStats s0 = t.persistence.stats();
      t.put(1, 10);
      PersistenceStats s1 = t.persistence.stats();
      assertEquals(new PersistenceStats(2, 2), s1.minus(s0), "insert");
      t.put(1, 11);
      PersistenceStats s2 = t.persistence.stats();
      assertEquals(new PersistenceStats(1, 1), s2.minus(s1), "update");
      assertEquals(11, t.get(1, -1));
      assertTrue(t.containsKey(1));
      assertEquals(-1, t.get(2, -1));
      PersistenceStats s3 = t.persistence.stats();
      assertEquals(new PersistenceStats(0, 0), s3.minus(s2), "searches persist nothing");
      t.remove(1);
      PersistenceStats s4 = t.persistence.stats();
      assertEquals(new PersistenceStats(1, 1), s4.minus(s3), "delete");
      t.remove(1);
      t.replace(1, 5);
      t.putIfAbsent(1, 5);
      assertEquals(2, t.persistence.stats().minus(s4).drains(), "a failed remove and replace persist nothing; putIfAbsent is an insert");
    }
  }

  @Test
  void splitAndDoubling() throws Exception {
    try (CcehTable t = create()) {
      long k = 0;
      for (int expectedSplits = 1; expectedSplits <= 6; expectedSplits++) {
        for (;;) {
          long before = t.splits.get();
          long doublings = t.doublings.get();
          PersistenceStats s0 = t.persistence.stats();
          t.put(++k, k);
          long drains = t.persistence.stats().minus(s0).drains();
          if (t.splits.get() == before) {
            assertEquals(2, drains, "insert without split");
            continue;
          }
          long splits = t.splits.get() - before;
          long dbl = t.doublings.get() - doublings;
          assertEquals(2 + 7 * splits + 4 * dbl, drains, "insert with " + splits + " split(s) and " + dbl + " doubling(s)");
          break;
        }
      }
      assertTrue(t.doublings.get() > 0 && t.splits.get() > t.doublings.get(), "both kinds were seen: " + t.stats());
    }
  }
}
