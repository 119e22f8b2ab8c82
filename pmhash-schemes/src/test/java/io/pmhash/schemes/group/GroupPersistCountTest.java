package io.pmhash.schemes.group;

import static io.pmhash.schemes.contract.PersistCost.assertCost;
import static io.pmhash.schemes.contract.PersistCost.stats;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.PersistenceStats;
import io.pmhash.core.hash.Hashing;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Drains and flushed lines per operation equal the table in {@link io.pmhash.schemes.group} and
 * {@code docs/format/group.md}: insert into level 1 or level 2 2/2, update 1/1, delete 1/1, reads
 * and failed conditional writes 0/0; an expansion flushes every line of the new block and drains
 * once, then commits one allocator step (4 drains).
 */
class GroupPersistCountTest {
  @TempDir Path dir;

  /**
   * Lines one allocator step flushes that publishes a block into root 0 and frees another: its
   * three redo entries, the commit word (set, then cleared), the owned bitmap words of both
   * blocks and root 0 (docs/allocator.md, "Redo step").
   */
  static final long STEP_LINES = 6;

  private GroupTable create(long capacity) throws Exception {
    return (GroupTable) PmHash.create(dir.resolve("t.pool"), TableOptions.scheme(GroupProvider.NAME)
        .withParam(GroupProvider.GROUP_SIZE, 64).withDurability(Durability.PMEM_EMULATED).withInitialCapacity(capacity));
  }

  /** @return the cell number holding a key (level 2 if at least N) */
  private static long cellOf(GroupTable t, long key) {
    GroupCells c = t.current;
    return c.find(t.pool().memory(), key, c.home(Hashing.hash(key)), GroupCells.fingerprint(Hashing.hash(key)));
  }

  @Test
  void insertIntoBothLevelsUpdateDeleteAndReads() throws Exception {
    try (GroupTable t = create(10_000)) {
      boolean level1 = false;
      boolean level2 = false;
      for (long k = 1; !(level1 && level2); k++) {
        PersistenceStats s = stats(t);
        assertTrue(t.put(k, 10 * k));
        boolean inLevel2 = cellOf(t, k) >= t.current.cells;
        assertCost(t, s, 2, 2, "insert into level " + (inLevel2 ? 2 : 1));
        level1 |= !inLevel2;
        level2 |= inLevel2;
      }
      PersistenceStats s = stats(t);
      assertFalse(t.put(1, 11));
      assertCost(t, s, 1, 1, "update");
      s = stats(t);
      assertEquals(11, t.get(1, -1));
      assertTrue(t.containsKey(1));
      assertEquals(-1, t.get(-5, -1));
      assertFalse(t.putIfAbsent(1, 12));
      assertFalse(t.replace(-5, 1));
      assertFalse(t.replace(1, 99, 1));
      assertFalse(t.remove(1, 99));
      assertFalse(t.remove(-5));
      assertCost(t, s, 0, 0, "reads and failed conditional writes");
      s = stats(t);
      assertTrue(t.remove(1));
      assertCost(t, s, 1, 1, "delete");
    }
  }

  @Test
  void expansionFlushesTheNewBlockOnceAndCommitsOneStep() throws Exception {
    try (GroupTable t = create(0)) {
      for (long k = 1; ; k++) {
        long n = t.tableSize();
        // the allocator formats a run (its own persists) when a size class has no free block:
        // format it first, so the count below is the expansion's alone
        t.pool().allocator().cancel(t.pool().allocator().reserve(GroupLayout.tableBytes(2 * n)));
        PersistenceStats s = stats(t);
        t.put(k, k);
        if (t.tableSize() != n) {
          PersistenceStats d = stats(t).minus(s);
          long blockLines = GroupLayout.tableBytes(t.tableSize()) / 64;
          System.out.println("GroupPersistCountTest: expansion to N " + t.tableSize() + ": " + d.drains() + " drains, "
              + d.linesFlushed() + " lines (block " + blockLines + ")");
          assertEquals(1 + 4 + 2, d.drains(), "drains: the new block, the allocator step (4), then the insert (2)");
          long step = d.linesFlushed() - blockLines - 2;
          assertEquals(STEP_LINES, step, "lines of the allocator step");
          return;
        }
      }
    }
  }
}
