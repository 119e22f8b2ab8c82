package io.pmhash.schemes.dash;

import io.pmhash.map.TableOptions;

/** Dash-EH against the contract at the smallest segment of Dash Fig. 11: 4 normal buckets (1 KB). */
class DashEhSmallSegmentContractTest extends DashEhContractTest {
  @Override
  protected TableOptions options() {
    return super.options().withParam(DashEhProvider.NORMAL_BUCKETS, 4);
  }
}
