package io.pmhash.schemes.nvlh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.StableKeyReaders;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import org.junit.jupiter.api.Test;

/**
 * Readers under the chain locks while writers insert and delete, so that splits, round changes,
 * segment allocation and merges run concurrently with them: a key present for the whole run is
 * always found with its value (a reader whose bucket was split or merged while it waited for the
 * lock revalidates and retries), and afterwards the table holds exactly what the writers left
 * and its invariants hold. No sleeps: readers run until the writers are done.
 */
class NvlhConcurrencyTest {
  @Test
  void nvlhReadersSeeStableKeysAcrossSplitsAndMerges() throws Exception {
    try (NvlhTable t = (NvlhTable) PmHash.createVolatile(TableOptions.scheme(NvlhProvider.NAME).withParam(NvlhProvider.SEGMENT_SHIFT, 2))) {
      run(t, 30_000);
      assertTrue(t.splits.get() > 500 && t.merges.get() > 100 && t.round() >= 3, "the run split and merged: " + t.stats());
      NvlhInvariants.check(t, "after the run");
    }
  }

  @Test
  void nvdhReadersSeeStableKeysAcrossRehashes() throws Exception {
    try (NvdhTable t = (NvdhTable) PmHash.createVolatile(TableOptions.scheme(NvdhProvider.NAME))) {
      run(t, 21_000);
      assertTrue(t.rehashes >= 5, "the run rehashed: " + t.stats());
      NvlhInvariants.check(t, "after the run");
    }
  }

  /**
   * Two writers each insert {@code perWriter} keys (a multiple of 3) deleting two of every three
   * as they go, then delete the rest, wait for each other, and insert a third again; two readers
   * check stable keys meanwhile.
   */
  private static void run(LongHashTable t, int perWriter) throws Exception {
    int stable = 1_000;
    int writers = 2;
    CyclicBarrier phases = new CyclicBarrier(writers);
    List<StableKeyReaders.Writer> bodies = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      long base = 1_000_000L * (w + 1);
      bodies.add(() -> {
        for (long i = 0; i < perWriter; i++) {
          assertTrue(t.put(base + i, i));
          if (i % 3 == 2) {
            assertTrue(t.remove(base + i - 1), "remove " + (base + i - 1));
            assertTrue(t.remove(base + i - 2), "remove " + (base + i - 2));
          }
        }
        for (long i = 2; i < perWriter; i += 3) {
          assertTrue(t.remove(base + i), "remove " + (base + i));
        }
        phases.await(); // both writers have deleted their keys: the table is sparse, merges ran
        for (long i = 0; i < perWriter / 3; i++) {
          assertTrue(t.put(base + 3 * i, -i));
        }
      });
    }
    StableKeyReaders.whileReading(t, stable, bodies);
    for (int w = 0; w < writers; w++) {
      long base = 1_000_000L * (w + 1);
      for (long i = 0; i < perWriter / 3; i++) {
        assertEquals(-i, t.get(base + 3 * i, 1), "key " + (base + 3 * i));
      }
    }
    assertEquals(stable + writers * (perWriter / 3), t.size());
  }
}
