package io.pmhash.schemes.esh;

import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.LongHashTableContract;

/** The contract suite against the ACCEH configuration: 64-byte buckets, 16 per segment. */
class AccehContractTest extends LongHashTableContract {
  @Override
  protected TableOptions options() {
    return TableOptions.scheme(EshProvider.NAME)
        .withParam(EshProvider.BUCKET_BYTES, EshProvider.ACCEH_BUCKET_BYTES)
        .withParam(EshProvider.BUCKETS, 16);
  }

  @Override
  protected void checkInvariants(LongHashTable table) {
    super.checkInvariants(table);
    EshTable t = (EshTable) table;
    EshInvariants.check(t.pool(), t, "after the test");
  }
}
