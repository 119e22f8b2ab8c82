package io.pmhash.schemes.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.PersistenceStats;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The llpl backend changes where the pool's bytes live, not what the schemes' operations do with
 * them. Two seeded workloads (inserts, updates, removes) run on an FFM and an llpl pool:
 *
 * <ul>
 *   <li>In a table sized for the workload, where the operations make no structural change (no
 *       split, resize, chained bucket or transaction; checked on the FFM run by the table's
 *       slot count and the undo log), both backends issue exactly the same cache-line flushes
 *       and drains and leave the same contents: the operations' persist code is the same on
 *       both. The table is filled first and then sees one remove in ten, so that no scheme
 *       contracts it. NVLH splits on collision even in a sized table (its transactions are
 *       PMDK's on llpl): it is the one scheme this case cannot hold for, and it is checked as
 *       in the second case.
 *   <li>Growing from the default size through many structural changes (Dash-LH with a first
 *       array of one segment and stride 1, since its default first array holds the whole
 *       workload without one), both leave the same contents after the same transactions, every
 *       scheme's blocks are PMDK objects on llpl, and llpl drains less: its structural publishes
 *       and transactions are PMDK's, whose own flushes {@code Persistence.stats()} does not
 *       count.
 * </ul>
 */
class SameFlushesOnBothBackendsTest {
  @TempDir Path dir;

  /** Records a sized table is made for: the workload's 30,000 keys fit without a split or a resize. */
  static final long SIZED = 36_000;

  static Stream<String> schemes() {
    return PmHash.schemes().keySet().stream();
  }

  private record Outcome(PersistenceStats stats, TreeMap<Long, Long> contents, long transactions, boolean backendBlocks,
      boolean structural, String shape) {}

  /** @param capacity records the table is sized for at create; 0: the default, grown by the workload */
  private Outcome run(String scheme, String backend, long capacity) throws Exception {
    TableOptions o = TableOptions.scheme(scheme).withDurability(Durability.PMEM_EMULATED).withBackend(backend);
    if (capacity > 0) {
      o = o.withInitialCapacity(capacity);
    } else if (scheme.equals("dash-lh")) {
      // its default first array (64 segments) holds the whole workload without a split or a
      // chained bucket; one segment and stride 1 make it split, chain and allocate arrays
      o = o.withParam("firstArray", 1).withParam("stride", 1);
    }
    try (LongHashTable t = PmHash.create(dir.resolve(scheme + "-" + backend + "-" + capacity + ".pool"), o)) {
      if (capacity > 0) { // every key first, so that the measured removes never empty the table enough to contract it
        for (int k = 0; k < 30_000; k++) {
          t.put(k * 0x9E3779B97F4A7C15L, -k);
        }
      }
      PersistenceStats before = t.pool().persistence().stats();
      long transactionsBefore = t.pool().undoLog().begun();
      long slotsBefore = t.stats().slots();
      SplittableRandom rnd = new SplittableRandom(0xB0B);
      for (int i = 0; i < 40_000; i++) {
        long key = rnd.nextInt(30_000) * 0x9E3779B97F4A7C15L;
        if (rnd.nextInt(capacity > 0 ? 10 : 4) == 0) {
          t.remove(key);
        } else {
          t.put(key, i);
        }
      }
      TreeMap<Long, Long> contents = new TreeMap<>();
      t.forEach(contents::put);
      // the table's blocks are the backend's (PMDK objects, on llpl) iff its seam is the backend's and holds some
      boolean backendBlocks = t.pool().schemeAllocator() != t.pool().allocator().schemeAllocator()
          && t.pool().schemeAllocator().blocksOwned() > 0;
      long transactions = t.pool().undoLog().begun() - transactionsBefore;
      boolean structural = transactions > 0 || t.stats().slots() != slotsBefore;
      String shape = transactions + " transactions, slots " + slotsBefore + " -> " + t.stats().slots() + ", " + t.stats().details();
      return new Outcome(t.pool().persistence().stats().minus(before), contents, transactions, backendBlocks, structural, shape);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("schemes")
  void withoutStructuralChangesTheOperationsFlushTheSameLinesOnFfmAndLlpl(String scheme) throws Exception {
    Outcome ffm = run(scheme, "ffm", SIZED);
    Outcome llpl = run(scheme, "llpl", SIZED);
    assertEquals(ffm.contents(), llpl.contents(), scheme + ": contents");
    if (scheme.equals("nvlh")) { // splits on collision (the paper's policy), even in a sized table
      assertEquals(ffm.transactions(), llpl.transactions(), scheme + ": transactions");
      assertTrue(llpl.stats().drains() < ffm.stats().drains(), scheme + ": " + llpl.stats() + " vs " + ffm.stats());
      return;
    }
    assertFalse(ffm.structural(), scheme + ": the sized table made a structural change (" + ffm.shape() + "); size it larger");
    assertEquals(ffm.stats(), llpl.stats(), scheme + ": lines flushed and drains");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("schemes")
  void throughStructuralChangesBothLeaveTheSameContentsAndLlplBlocksArePmdks(String scheme) throws Exception {
    Outcome ffm = run(scheme, "ffm", 0);
    Outcome llpl = run(scheme, "llpl", 0);
    assertTrue(ffm.structural(), scheme + ": the growing workload made no structural change");
    assertEquals(ffm.contents(), llpl.contents(), scheme + ": contents");
    assertEquals(ffm.transactions(), llpl.transactions(), scheme + ": transactions");
    assertFalse(ffm.backendBlocks(), scheme + ": FFM blocks are pmhash's");
    assertTrue(llpl.backendBlocks(), scheme + ": llpl blocks are PMDK objects");
    // on FFM every snapshot and publish drains in the lane; on llpl PMDK persists them
    assertTrue(llpl.stats().drains() < ffm.stats().drains(), scheme + ": " + llpl.stats() + " vs " + ffm.stats());
  }
}
