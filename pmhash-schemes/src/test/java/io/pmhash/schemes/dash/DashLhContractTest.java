package io.pmhash.schemes.dash;

import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.LongHashTableContract;

/**
 * Dash-LH against the contract every scheme keeps, with 2 stash buckets and a small first array
 * (4 segments, stride 2) so that the contract's workloads run through many rounds, array
 * allocations and doublings.
 */
class DashLhContractTest extends LongHashTableContract {
  @Override
  protected TableOptions options() {
    return TableOptions.scheme("dash-lh").withParam("stashBuckets", 2).withParam("firstArray", 4).withParam("stride", 2);
  }
}
