package io.pmhash.schemes.nvlh;

import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.LongHashTableContract;

/** The contract suite against the NVDH baseline, from the smallest table so that rehashes happen often. */
class NvdhContractTest extends LongHashTableContract {
  @Override
  protected TableOptions options() {
    return TableOptions.scheme(NvdhProvider.NAME);
  }

  @Override
  protected void checkInvariants(LongHashTable table) {
    super.checkInvariants(table);
    NvlhInvariants.check((NvdhTable) table, "after the test");
  }
}
