package io.pmhash.schemes.level;

import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.LongHashTableContract;

/** The contract suite against level hashing, from the smallest levels so that resizes and shrinks happen often. */
class LevelContractTest extends LongHashTableContract {
  @Override
  protected TableOptions options() {
    return TableOptions.scheme(LevelProvider.NAME);
  }

  @Override
  protected void checkInvariants(LongHashTable table) {
    super.checkInvariants(table);
    LevelInvariants.check((LevelTable) table, "after the test");
  }
}
