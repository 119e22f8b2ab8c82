package io.pmhash.schemes.nvlh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * NVLH's and NVDH's blocks on the llpl backend are PMDK objects: after many splits and merges
 * (NVLH) and rehashes (NVDH), the objects PMDK holds are exactly the table's blocks. The count is
 * taken after a reopen, where the first query walks PMDK's heap ({@code pmemobj_first}/{@code
 * pmemobj_next}) afresh, and every block the table reaches is one of them: equal counts and
 * inclusion make the two sets equal, so nothing leaked and nothing the table uses is free.
 */
class NvlhLlplAllocationTest {
  @TempDir Path dir;

  private static TableOptions llpl(String scheme) {
    return TableOptions.scheme(scheme).withBackend("llpl").withDurability(Durability.PROCESS);
  }

  @Test
  void afterManySplitsAndMergesPmdksObjectsAreExactlyNvlhsBlocks() throws Exception {
    Path file = dir.resolve("nvlh.pool");
    long splits;
    long merges;
    try (LongHashTable t = PmHash.create(file, llpl("nvlh"))) {
      for (long k = 1; k <= 40_000; k++) {
        t.put(k, k);
      }
      for (long k = 1; k <= 40_000; k++) {
        if (k % 200 != 0) {
          t.remove(k);
        }
      }
      NvlhTable n = (NvlhTable) t;
      splits = n.splits.get();
      merges = n.merges.get();
      assertTrue(splits > 50 && merges > 50, "many splits (" + splits + ") and merges (" + merges + ")");
      NvlhInvariants.check(n, "before close");
    }
    try (LongHashTable t = PmHash.open(file, TableOptions.any().withDurability(Durability.PROCESS))) {
      NvlhTable n = (NvlhTable) t;
      assertEquals(200, t.size());
      Set<Long> reached = nvlhBlocks(n);
      assertExactlyPmdksObjects(n.pool, reached);
      NvlhInvariants.check(n, "reopened");
    }
  }

  @Test
  void afterManyRehashesPmdksObjectsAreExactlyNvdhsBlocks() throws Exception {
    Path file = dir.resolve("nvdh.pool");
    try (LongHashTable t = PmHash.create(file, llpl("nvdh").withParam("transactions", 1))) {
      for (long k = 1; k <= 20_000; k++) {
        t.put(k, k);
      }
      assertTrue(((NvdhTable) t).rehashes > 3, "several rehashes");
    }
    try (LongHashTable t = PmHash.open(file, TableOptions.any().withDurability(Durability.PROCESS))) {
      NvdhTable n = (NvdhTable) t;
      assertExactlyPmdksObjects(n.pool, Set.of(n.header, n.table));
      NvlhInvariants.check(n, "reopened");
    }
  }

  /** Header, directory levels, segments and overflow buckets. */
  private static Set<Long> nvlhBlocks(NvlhTable t) {
    MemorySegment m = t.pool.memory();
    Set<Long> blocks = new HashSet<>();
    blocks.add(t.header);
    for (int l = 0; l < NvlhLayout.DIR_LEVELS; l++) {
      long dir = (long) NvlhLayout.LONG.get(m, t.header + NvlhLayout.HDR_DIR + 8L * l);
      if (dir != 0) {
        blocks.add(dir);
      }
    }
    for (long seg : t.segs) {
      if (seg != 0) {
        blocks.add(seg);
      }
    }
    long buckets = t.bucketCount(t.state);
    for (long b = 0; b < buckets; b++) {
      for (long x = NvlhBucket.next(m, t.bucketOffset(b)); x != 0; x = NvlhBucket.next(m, x)) {
        assertTrue(blocks.add(x), "overflow bucket " + x + " reached twice");
      }
    }
    return blocks;
  }

  private static void assertExactlyPmdksObjects(Pool pool, Set<Long> reached) {
    SchemeAllocator a = pool.schemeAllocator();
    assertTrue(a != pool.allocator().schemeAllocator(), "the blocks are the backend's (PMDK's)");
    // the first query after open walks PMDK's heap: this count is PMDK's objects of pmhash's type
    assertEquals(reached.size(), a.blocksOwned(), "PMDK holds exactly as many objects as the table reaches");
    for (long b : reached) {
      assertTrue(a.owned(b), "block " + b + " is a PMDK object");
      assertTrue(b < pool.headerOffset() || b >= pool.size(), "block " + b + " is outside the pmhash pool block");
    }
  }
}
