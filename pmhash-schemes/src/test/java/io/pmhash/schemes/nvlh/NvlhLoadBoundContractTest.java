package io.pmhash.schemes.nvlh;

import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.LongHashTableContract;

/** The contract suite against NVLH with the load-factor split policy (80 %, merge below 40 %). */
class NvlhLoadBoundContractTest extends LongHashTableContract {
  @Override
  protected TableOptions options() {
    return TableOptions.scheme(NvlhProvider.NAME).withParam(NvlhProvider.INITIAL_BUCKETS, 4).withParam(NvlhProvider.SEGMENT_SHIFT, 2)
        .withParam(NvlhProvider.SPLIT_LOAD, 80).withParam(NvlhProvider.MERGE_LOAD, 40);
  }

  @Override
  protected void checkInvariants(LongHashTable table) {
    super.checkInvariants(table);
    NvlhInvariants.check((NvlhTable) table, "after the test");
  }
}
