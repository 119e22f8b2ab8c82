package io.pmhash.schemes.cceh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
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
      int stable = 2_000;
      for (long k = 0; k < stable; k++) {
        t.put(k, ~k);
      }
      AtomicBoolean done = new AtomicBoolean();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> threads = new ArrayList<>();
      int writers = 2;
      int perWriter = 40_000;
      for (int w = 0; w < writers; w++) {
        long base = 1_000_000L * (w + 1);
        threads.add(new Thread(() -> {
          try {
            for (long i = 0; i < perWriter; i++) {
              assertTrue(t.put(base + i, i));
              if (i % 3 == 2) {
                assertTrue(t.remove(base + i - 1), "remove " + (base + i - 1));
              }
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        }));
      }
      for (int r = 0; r < 2; r++) {
        long seed = r;
        threads.add(new Thread(() -> {
          try {
            long k = seed;
            while (!done.get()) {
              k = (k * 6364136223846793005L + 1442695040888963407L);
              long key = Math.floorMod(k, stable);
              long v = t.get(key, 1);
              if (v != ~key) {
                throw new AssertionError("stable key " + key + " read as " + v);
              }
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        }));
      }
      threads.forEach(Thread::start);
      for (int i = 0; i < writers; i++) {
        threads.get(i).join();
      }
      done.set(true);
      for (Thread th : threads) {
        th.join();
      }
      if (failure.get() != null) {
        throw new AssertionError(failure.get());
      }
      assertTrue(t.doublings.get() >= 3 && t.splits.get() > 50, "the run split and doubled: " + t.stats());
      for (long k = 0; k < stable; k++) {
        assertEquals(~k, t.get(k, 1));
      }
      long expected = stable;
      for (int w = 0; w < writers; w++) {
        long base = 1_000_000L * (w + 1);
        for (long i = 0; i < perWriter; i++) {
          boolean present = i % 3 != 1 || i == perWriter - 1;
          assertEquals(present ? i : -1, t.get(base + i, -1), "writer " + w + " key " + i);
          expected += present ? 1 : 0;
        }
      }
      assertEquals(expected, t.size());
      CcehInvariants.check(t.pool(), t, "after the concurrent run");
    }
  }
}
