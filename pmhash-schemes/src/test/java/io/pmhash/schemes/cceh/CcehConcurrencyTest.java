package io.pmhash.schemes.cceh;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.StableKeyReaders;
import org.junit.jupiter.api.Test;

/**
 * Readers under the segment read locks while writers split segments and double the directory:
 * a key present for the whole run is always found with its value (a reader that locked a segment
 * a split has just shrunk retries from the directory), and after the writers finish the table
 * holds exactly what they wrote. No sleeps: readers run until the writers are done.
 */
class CcehConcurrencyTest {
  @Test
  void readersSeeStableKeysAcrossSplitsAndDoublings() throws Exception {
    try (CcehTable t = (CcehTable) PmHash.createVolatile(TableOptions.scheme(CcehProvider.NAME))) {
      StableKeyReaders.growWhileReading(t, 2_000, 2, 40_000);
      assertTrue(t.doublings.get() >= 3 && t.splits.get() > 50, "the run split and doubled: " + t.stats());
      CcehInvariants.check(t.pool(), t, "after the concurrent run");
    }
  }
}
