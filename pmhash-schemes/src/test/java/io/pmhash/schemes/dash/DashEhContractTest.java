package io.pmhash.schemes.dash;

import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.LongHashTableContract;

/** Dash-EH against the contract every scheme keeps, with 2 stash buckets. */
class DashEhContractTest extends LongHashTableContract {
  @Override
  protected TableOptions options() {
    return TableOptions.scheme("dash-eh").withParam("stashBuckets", 2);
  }
}
