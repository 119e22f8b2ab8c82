package io.pmhash.schemes.dash;

import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.map.LongHashTable;

/**
 * The contract of {@link DashEhContractTest} (options and invariants included) on the llpl
 * backend: the table in a pmhash pool hosted in a PMDK pool file (docs/llpl.md), its header,
 * directory and segments PMDK objects outside the pool block, 64-byte aligned.
 */
class DashEhLlplContractTest extends DashEhContractTest {
  @Override
  protected String backend() {
    return "llpl";
  }

  @Override
  protected void checkInvariants(LongHashTable table) {
    super.checkInvariants(table);
    Pool pool = table.pool();
    SchemeAllocator a = pool.schemeAllocator();
    if (a == pool.allocator().schemeAllocator() || !a.getClass().getName().contains("Pmdk")) {
      throw new AssertionError("an llpl dash-eh table's blocks do not come from PMDK: " + a);
    }
    long root = pool.root(0);
    if (!a.owned(root) || (root & 63) != 0 || (root >= pool.headerOffset() && root < pool.size())) {
      throw new AssertionError("root 0 = " + root + " is not a 64-byte aligned PMDK block outside the pool block ["
          + pool.headerOffset() + ", " + pool.size() + ")");
    }
    if (pool.allocator().stats().blocksOwned() != 0) {
      throw new AssertionError("pmhash's allocator owns " + pool.allocator().stats().blocksOwned()
          + " blocks in an llpl dash-eh pool: every block should be PMDK's");
    }
  }
}
