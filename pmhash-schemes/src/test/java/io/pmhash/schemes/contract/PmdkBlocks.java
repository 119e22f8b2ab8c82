package io.pmhash.schemes.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.map.LongHashTable;
import java.util.Set;
import java.util.TreeSet;

/** The check the llpl contract tests of the schemes on the allocator seam add: their blocks are PMDK's. */
public final class PmdkBlocks {
  private PmdkBlocks() {}

  /**
   * The table's seam is PMDK's allocator, root 0 is a 64-byte aligned PMDK block outside the pool
   * block, and pmhash's own allocator owns nothing.
   *
   * @param table an open table on an llpl pool
   * @param scheme its name, for messages
   */
  public static void require(LongHashTable table, String scheme) {
    Pool pool = table.pool();
    SchemeAllocator a = pool.schemeAllocator();
    if (a == pool.allocator().schemeAllocator() || !a.getClass().getName().contains("Pmdk")) {
      throw new AssertionError("an llpl " + scheme + " table's blocks do not come from PMDK: " + a);
    }
    long root = pool.root(0);
    if (!a.owned(root) || (root & 63) != 0 || (root >= pool.headerOffset() && root < pool.size())) {
      throw new AssertionError("root 0 = " + root + " is not a 64-byte aligned PMDK block outside the pool block ["
          + pool.headerOffset() + ", " + pool.size() + ")");
    }
    if (pool.allocator().stats().blocksOwned() != 0) {
      throw new AssertionError("pmhash's allocator owns " + pool.allocator().stats().blocksOwned() + " blocks in an llpl "
          + scheme + " pool: every block should be PMDK's");
    }
  }

  /**
   * The no-leak invariant of a table on the seam: the blocks its allocator owns are exactly the
   * reachable ones. pmhash's allocator enumerates them; a backend's (PMDK's) answers per block
   * and counts them.
   *
   * @param pool the table's pool
   * @param reachable every block the table reaches
   * @param at where, for messages
   */
  public static void requireOwnedExactly(Pool pool, Set<Long> reachable, String at) {
    SchemeAllocator a = pool.schemeAllocator();
    if (a != pool.allocator().schemeAllocator()) {
      for (long b : reachable) {
        assertTrue(a.owned(b), at + ": reachable block " + b + " is owned by the backend's allocator");
      }
      assertEquals(reachable.size(), a.blocksOwned(), at + ": the backend owns exactly the reachable blocks");
      return;
    }
    Set<Long> owned = new TreeSet<>();
    pool.allocator().forEachOwned((off, size) -> owned.add(off));
    assertEquals(reachable, owned, at + ": owned blocks are exactly the reachable ones");
  }
}
