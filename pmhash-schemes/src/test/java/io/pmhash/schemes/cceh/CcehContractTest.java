package io.pmhash.schemes.cceh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.LongHashTableContract;

/** The contract suite against CCEH, from one segment so that splits and doublings happen often. */
class CcehContractTest extends LongHashTableContract {
  @Override
  protected TableOptions options() {
    return TableOptions.scheme(CcehProvider.NAME);
  }

  @Override
  protected void checkInvariants(LongHashTable table) {
    super.checkInvariants(table);
    CcehTable t = (CcehTable) table;
    CcehInvariants.check(t.pool(), t, "after the test");
    assertTrue(t.splits.get() > 0 || t.size() < 400, "the test exercised splits");
    assertEquals(t.segmentOffsets().size(), t.segmentCount.get(), "segment count");
  }
}
