package io.pmhash.schemes.nvlh;

import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.LongHashTableContract;

/**
 * The contract suite against NVLH, split on collision (the paper's policy), from four buckets in
 * segments of two, so that splits, round changes, segment and directory growth and merges happen
 * often.
 */
class NvlhContractTest extends LongHashTableContract {
  @Override
  protected TableOptions options() {
    return TableOptions.scheme(NvlhProvider.NAME).withParam(NvlhProvider.INITIAL_BUCKETS, 4).withParam(NvlhProvider.SEGMENT_SHIFT, 1);
  }

  @Override
  protected void checkInvariants(LongHashTable table) {
    super.checkInvariants(table);
    NvlhInvariants.check((NvlhTable) table, "after the test");
  }
}
