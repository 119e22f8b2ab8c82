package io.pmhash.schemes.esh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.StableKeyReaders;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Optimistic readers while writers overflow into neighbour buckets (each holding a home lock and
 * trying a neighbour's), delete from them, split segments and double the directory: a key present
 * for the whole run is always found with its value, and afterwards the table holds exactly what
 * the writers wrote, with exact metadata. No sleeps: readers run until the writers are done.
 */
class EshConcurrencyTest {
  @ParameterizedTest
  @ValueSource(ints = {4, 64})
  void readersSeeStableKeysWhileWritersOverflowAndSplit(int buckets) throws Exception {
    try (EshTable t = (EshTable) PmHash.createVolatile(TableOptions.scheme(EshProvider.NAME).withParam(EshProvider.BUCKETS, buckets))) {
      StableKeyReaders.growWhileReading(t, 2_000, 3, 40_000);
      assertTrue(t.doublings.get() >= 2 && t.splits.get() > 10, "the run split and doubled: " + t.stats());
      assertTrue(t.stats().details().get("overflowRecords") > 0, "records overflowed into neighbours: " + t.stats());
      EshInvariants.check(t.pool(), t, "after the concurrent run");
    }
  }

  /** Writers on keys of one home bucket: all of them overflow into the same neighbours. */
  @Test
  void writersOfOneHomeBucketShareItsNeighbours() throws Exception {
    try (EshTable t = (EshTable) PmHash.createVolatile(TableOptions.scheme(EshProvider.NAME))) {
      EshCrashSupport.Geometry g = EshCrashSupport.Geometry.ESH;
      List<List<Long>> keys = new ArrayList<>();
      for (int w = 0; w < 3; w++) {
        keys.add(EshCrashSupport.keysIn(g, 10 + w, 0, 0, 40, 1)); // homes 10, 11, 12: neighbours
      }
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < 3; w++) {
        List<Long> mine = keys.get(w);
        threads.add(new Thread(() -> {
          try {
            for (int round = 0; round < 300; round++) {
              for (long k : mine) {
                t.put(k, round);
              }
              for (int i = 0; i < mine.size(); i += 2) {
                t.remove(mine.get(i));
              }
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        }));
      }
      threads.forEach(Thread::start);
      for (Thread th : threads) {
        th.join();
      }
      if (failure.get() != null) {
        throw new AssertionError(failure.get());
      }
      for (List<Long> mine : keys) {
        for (int i = 0; i < mine.size(); i++) {
          assertEquals(i % 2 == 0 ? -1 : 299, t.get(mine.get(i), -1), "key " + mine.get(i));
        }
      }
      EshInvariants.check(t.pool(), t, "after the shared-neighbour run");
    }
  }
}
