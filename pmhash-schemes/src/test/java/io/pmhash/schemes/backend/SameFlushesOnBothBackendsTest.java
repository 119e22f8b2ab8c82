package io.pmhash.schemes.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
 * The llpl backend changes where the pool's bytes live, not what the schemes do with them: the
 * same seeded workload (inserts through many structural changes, updates, removes) issues exactly
 * the same number of cache-line flushes and drains on the FFM and on the llpl backend, and leaves
 * the same contents. (Creating the pool differs: the llpl create persists the header in place.)
 *
 * <p>The exceptions are by design: a scheme that runs core transactions (NVLH: splits, merges,
 * overflow buckets) snapshots into PMDK's undo log on the llpl backend, and a scheme whose blocks
 * come through the allocator seam (every scheme) allocates and publishes through PMDK there; PMDK's
 * flushes are not counted by pmhash's persistence, so there the llpl run drains less than the FFM
 * run; it runs the same transactions and leaves the same contents.
 */
class SameFlushesOnBothBackendsTest {
  @TempDir Path dir;

  static Stream<String> schemes() {
    return PmHash.schemes().keySet().stream();
  }

  private record Outcome(PersistenceStats stats, TreeMap<Long, Long> contents, long transactions, boolean backendBlocks) {}

  private Outcome run(String scheme, String backend) throws Exception {
    TableOptions o = TableOptions.scheme(scheme).withDurability(Durability.PMEM_EMULATED).withBackend(backend);
    if (scheme.equals("dash-lh")) {
      // its default first array (64 segments) holds the whole workload without a split or a
      // chained bucket; one segment and stride 1 make it split, chain and allocate arrays
      o = o.withParam("firstArray", 1).withParam("stride", 1);
    }
    try (LongHashTable t = PmHash.create(dir.resolve(scheme + "-" + backend + ".pool"), o)) {
      PersistenceStats before = t.pool().persistence().stats();
      long transactionsBefore = t.pool().undoLog().begun();
      SplittableRandom rnd = new SplittableRandom(0xB0B);
      for (int i = 0; i < 40_000; i++) {
        long key = rnd.nextInt(30_000) * 0x9E3779B97F4A7C15L;
        if (rnd.nextInt(4) == 0) {
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
      return new Outcome(t.pool().persistence().stats().minus(before), contents, t.pool().undoLog().begun() - transactionsBefore, backendBlocks);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("schemes")
  void theSameWorkloadFlushesTheSameLinesOnFfmAndLlpl(String scheme) throws Exception {
    Outcome ffm = run(scheme, "ffm");
    Outcome llpl = run(scheme, "llpl");
    assertEquals(ffm.contents(), llpl.contents(), scheme + ": contents");
    assertEquals(ffm.transactions(), llpl.transactions(), scheme + ": transactions");
    assertEquals(false, ffm.backendBlocks(), scheme + ": FFM blocks are pmhash's");
    if (ffm.transactions() == 0 && !llpl.backendBlocks()) {
      assertEquals(ffm.stats(), llpl.stats(), scheme + ": lines flushed and drains");
    } else {
      // on FFM every snapshot and publish drains in the lane; on llpl PMDK persists them
      assertTrue(llpl.stats().drains() < ffm.stats().drains(), scheme + ": " + llpl.stats() + " vs " + ffm.stats());
    }
  }
}
