package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.PersistenceStats;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Drains per operation, as {@code docs/format/dash-lh.md} states them: insert 2, update 1,
 * delete 1, search 0; an insert into an existing chained bucket 2; an insert with a displacement
 * 5 (Dash-EH's: 3 for the move); an insert that allocates a chained bucket 4 (the node's
 * allocator step; the advance persists nothing), plus 4 when the advance allocates a segment array; a split
 * 4 (n's allocator step) + 1 (p's drop; p's new depth is not persisted) + 2 per chained record placed in n (+ 3 per
 * displacement there), on top of the operation that runs it. Operations during which the pool
 * grew or the allocator formatted a chunk (every segment array is a huge block in a new chunk)
 * are left out: those persist the pool's and the allocator's own headers, counted by their tests.
 */
class DashLhPersistCountTest {
  @TempDir Path dir;

  private DashLhTable create() throws Exception {
    return (DashLhTable) PmHash.create(dir.resolve("t.pool"), TableOptions.scheme(DashLhProvider.NAME)
        .withParam("firstArray", 1).withParam("stride", 1).withDurability(Durability.PROCESS));
  }

  @Test
  void insertUpdateDeleteSearch() throws Exception {
    try (DashLhTable t = create()) {
      PersistenceStats s0 = t.persistence.stats();
      t.put(1, 10);
      PersistenceStats s1 = t.persistence.stats();
      assertEquals(2, s1.minus(s0).drains(), "insert");
      t.put(1, 11);
      PersistenceStats s2 = t.persistence.stats();
      assertEquals(1, s2.minus(s1).drains(), "update");
      assertEquals(11, t.get(1, -1));
      assertTrue(t.containsKey(1));
      assertEquals(-1, t.get(2, -1));
      PersistenceStats s3 = t.persistence.stats();
      assertEquals(0, s3.minus(s2).drains(), "searches persist nothing");
      t.remove(1);
      PersistenceStats s4 = t.persistence.stats();
      assertEquals(1, s4.minus(s3).drains(), "delete");
      t.remove(1);
      t.replace(1, 5);
      assertEquals(0, t.persistence.stats().minus(s4).drains(), "a failed remove and replace persist nothing");
    }
  }

  @Test
  void chainedInsertsAdvancesAndSplits() throws Exception {
    try (DashLhTable t = create()) {
      SplittableRandom r = new SplittableRandom(5);
      int chainedNew = 0;
      int splitsSeen = 0;
      int displaced = 0;
      int grown = 0;
      for (int i = 0; i < 20_000; i++) {
        long advances = t.advances.get();
        long arrays = t.arrays.get();
        long splits = t.splits.get();
        long poolSize = t.pool.size();
        var alloc = t.pool.allocator().stats();
        PersistenceStats s0 = t.persistence.stats();
        t.put(r.nextLong(), i);
        var alloc2 = t.pool.allocator().stats();
        if (t.pool.size() != poolSize || alloc2.chunksFormatted() != alloc.chunksFormatted()
            || alloc2.runChunks() != alloc.runChunks() || alloc2.hugeChunks() != alloc.hugeChunks()) {
          grown++;
          continue; // the pool's growth or the allocator taking a chunk persists their own headers: not this table's count
        }
        long drains = t.persistence.stats().minus(s0).drains();
        long a = t.advances.get() - advances;
        long arr = t.arrays.get() - arrays;
        long sp = t.splits.get() - splits;
        if (sp > 0) {
          // a split: at least its 5 drains; 2 more per chained record Dash-EH's placement put into n
          assertTrue(drains >= 2 + 5 * sp,
              "insert with " + sp + " split(s): " + drains + " drains");
          splitsSeen++;
          continue;
        }
        if (a == 0) {
          assertTrue(drains == 2 || drains == 5, "insert (into a bucket, the fixed stash, or a chained bucket: 2; with a displacement: 5): " + drains);
          displaced += drains == 5 ? 1 : 0;
          continue;
        }
        assertEquals(1, a);
        assertEquals(4 + 4 * arr, drains, "insert that allocates a chained bucket (" + arr + " array)");
        chainedNew++;
      }
      assertTrue(chainedNew > 5 && splitsSeen > 5 && displaced > 0 && grown > 0, "all kinds were seen (pool growths skipped: " + grown + "): " + t.stats());
    }
  }
}
