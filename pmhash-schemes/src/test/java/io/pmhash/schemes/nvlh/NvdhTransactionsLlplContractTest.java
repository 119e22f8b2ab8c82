package io.pmhash.schemes.nvlh;

import io.pmhash.map.LongHashTable;

/**
 * The contract of {@link NvdhTransactionsContractTest} (NVDH with {@code transactions=1}: every
 * write one durable transaction) on the llpl backend, where those transactions run in PMDK's undo
 * log (docs/llpl.md).
 */
class NvdhTransactionsLlplContractTest extends NvdhTransactionsContractTest {
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
