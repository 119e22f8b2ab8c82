package io.pmhash.schemes.dash;

import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.PmHashMapContract;

/** Dash-EH's pointer mode (and its inline maps) against the PmHashMap contract. */
class DashPmHashMapContractTest extends PmHashMapContract {
  @Override
  protected TableOptions options() {
    return TableOptions.scheme("dash-eh").withParam("stashBuckets", 2);
  }
}
