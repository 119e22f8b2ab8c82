package io.pmhash.schemes.nvlh;

import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.log.UndoLog;
import io.pmhash.map.LongHashTable;

/** Checks shared by the NVLH/NVDH contract tests on the llpl backend. */
final class NvlhLlplSupport {
  private NvlhLlplSupport() {}

  /**
   * The table's transactions run in PMDK's undo log, and its blocks are PMDK's: the scheme
   * allocator is the backend's, it owns blocks, and the header root 0 names is one of them, outside
   * pmhash's heap (inside the pool block).
   */
  static void requirePmdkTransactions(LongHashTable table) {
    UndoLog log = table.pool().undoLog();
    if (log.backendTransactions() == null || !log.backendTransactions().describe().contains("PMDK")) {
      throw new AssertionError("an llpl table's transactions do not run in PMDK's undo log: " + log.backendTransactions());
    }
    Pool pool = table.pool();
    SchemeAllocator a = pool.schemeAllocator();
    if (a == pool.allocator().schemeAllocator() || !a.getClass().getName().contains("Pmdk")) {
      throw new AssertionError("an llpl NVLH/NVDH table's blocks do not come from PMDK: " + a);
    }
    long root = pool.root(0);
    if (!a.owned(root) || (root >= pool.headerOffset() && root < pool.size()) || a.blocksOwned() < 2) {
      throw new AssertionError("root 0 = " + root + " is not a PMDK block outside the pool block [" + pool.headerOffset()
          + ", " + pool.size() + "), or PMDK owns fewer than 2 blocks (" + a.blocksOwned() + ")");
    }
  }
}
