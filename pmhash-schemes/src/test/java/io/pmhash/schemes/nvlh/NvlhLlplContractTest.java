package io.pmhash.schemes.nvlh;

import io.pmhash.map.LongHashTable;

/**
 * The contract of {@link NvlhContractTest} on the llpl backend: every split and merge runs as a
 * core transaction, which on an llpl pool runs in PMDK's undo log (docs/llpl.md).
 */
class NvlhLlplContractTest extends NvlhContractTest {
  @Override
  protected String backend() {
    return "llpl";
  }

  @Override
  protected void checkInvariants(LongHashTable table) {
    super.checkInvariants(table);
    NvlhLlplSupport.requirePmdkTransactions(table);
  }
}
