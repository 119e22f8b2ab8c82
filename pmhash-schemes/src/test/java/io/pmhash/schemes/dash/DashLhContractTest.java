package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.LongHashTable;
import io.pmhash.map.TableOptions;
import io.pmhash.map.TableStats;
import io.pmhash.schemes.contract.LongHashTableContract;

/**
 * Dash-LH against the contract every scheme keeps, with 2 stash buckets and a small first array
 * (4 segments, stride 2) so that the contract's workloads run through many rounds, array
 * allocations and doublings; removing every key merges the table back down (the merges take
 * Next and N back, and free the segment arrays). After each case the blocks the allocator owns are
 * exactly the header, the segment arrays and the chain nodes ({@link DashLhCrashTest#checkNoLeak}).
 */
class DashLhContractTest extends LongHashTableContract {
  @Override
  protected TableOptions options() {
    return TableOptions.scheme("dash-lh").withParam("stashBuckets", 2).withParam("firstArray", 4).withParam("stride", 2);
  }

  @Override
  protected void checkInvariants(LongHashTable table) {
    super.checkInvariants(table);
    DashLhTable t = (DashLhTable) table;
    DashLhCrashTest.checkNoLeak(t.pool, t, "after the test");
  }

  @Override
  protected void checkShrunk(TableStats grown, TableStats emptied) {
    long before = grown.details().get("segments");
    long after = emptied.details().get("segments");
    assertTrue(before > 64, "grew: " + grown);
    assertTrue(emptied.details().get("merges") > 0 && after < before / 4, "merged back down from " + before + " segments: " + emptied);
    assertTrue(emptied.details().get("round") < grown.details().get("round"), "N went back: " + emptied);
    assertTrue(emptied.details().get("segmentArraysFreed") > 0, "arrays freed: " + emptied);
  }
}
