package io.pmhash.schemes.esh;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.LongHashTableContract;

/**
 * The contract suite against ESH's 256-byte buckets, with the four buckets per segment of
 * §4.3.1's text, so that neighbour overflow, splits and doublings all happen within the suite's
 * key range.
 */
class EshContractTest extends LongHashTableContract {
  @Override
  protected TableOptions options() {
    return TableOptions.scheme(EshProvider.NAME).withParam(EshProvider.BUCKETS, 4);
  }

  @Override
  protected void checkInvariants(LongHashTable table) {
    super.checkInvariants(table);
    EshTable t = (EshTable) table;
    EshInvariants.check(t.pool(), t, "after the test");
    assertTrue(t.splits.get() > 0 || t.size() < 56, "the test exercised splits");
  }
}
