package io.pmhash.schemes.nvlh;

import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.LongHashTableContract;

/** The contract suite against the paper's NVDH: every write one durable transaction. */
class NvdhTransactionsContractTest extends LongHashTableContract {
  @Override
  protected TableOptions options() {
    return TableOptions.scheme(NvdhProvider.NAME).withParam(NvdhProvider.TRANSACTIONS, 1);
  }

  @Override
  protected void checkInvariants(LongHashTable table) {
    super.checkInvariants(table);
    NvdhTable t = (NvdhTable) table;
    if (!t.transactional) {
      throw new AssertionError("the table does not run its writes as transactions");
    }
    NvlhInvariants.check(t, "after the test");
  }
}
