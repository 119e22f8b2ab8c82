package io.pmhash.schemes.dash;

import io.pmhash.map.TableOptions;

/** Dash-EH against the contract at the largest segment of Dash Fig. 11: 512 normal buckets (128 KB). */
class DashEhLargeSegmentContractTest extends DashEhContractTest {
  @Override
  protected TableOptions options() {
    return super.options().withParam(DashEhProvider.NORMAL_BUCKETS, 512);
  }
}
