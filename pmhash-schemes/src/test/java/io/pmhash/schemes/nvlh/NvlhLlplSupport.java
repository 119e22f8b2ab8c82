package io.pmhash.schemes.nvlh;

import io.pmhash.core.log.UndoLog;
import io.pmhash.map.LongHashTable;

/** Checks shared by the NVLH/NVDH contract tests on the llpl backend. */
final class NvlhLlplSupport {
  private NvlhLlplSupport() {}

  /** The table's transactions run in PMDK's undo log. */
  static void requirePmdkTransactions(LongHashTable table) {
    UndoLog log = table.pool().undoLog();
    if (log.backendTransactions() == null || !log.backendTransactions().describe().contains("PMDK")) {
      throw new AssertionError("an llpl table's transactions do not run in PMDK's undo log: " + log.backendTransactions());
    }
  }
}
