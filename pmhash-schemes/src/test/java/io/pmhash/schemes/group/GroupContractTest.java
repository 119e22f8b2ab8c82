package io.pmhash.schemes.group;

import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.LongHashTableContract;

/**
 * The contract suite against group hashing, with the smallest groups (64 cells) and the smallest
 * first table (one group), so that expansions and shrinks happen often.
 */
class GroupContractTest extends LongHashTableContract {
  @Override
  protected TableOptions options() {
    return TableOptions.scheme(GroupProvider.NAME).withParam(GroupProvider.GROUP_SIZE, 64);
  }

  @Override
  protected void checkInvariants(LongHashTable table) {
    super.checkInvariants(table);
    GroupInvariants.check((GroupTable) table, "after the test");
  }
}
