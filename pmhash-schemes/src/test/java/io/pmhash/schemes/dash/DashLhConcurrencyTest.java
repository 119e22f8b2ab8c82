package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Threads across chains, advances and lazy splits. The reference C++ Dash-LH hangs with two
 * inserting threads (an unsynchronised retry loop around the expansion): {@link
 * #twoThreadsInsertingThroughManySplitsFinish} fails by timeout if ours can hang, and checks
 * every key is there. {@link #mixedOperationsAcrossSplits} mixes inserts, updates, deletes and
 * reads of disjoint and shared keys while the table grows, and checks the result against the
 * per-thread models. {@link #writersAndReadersAcrossMergesAndSplits} grows the table and deletes
 * it back down, in waves, while readers check keys that are never deleted: merges (the word
 * going back, segments merged, chained buckets and arrays freed) run under readers and writers.
 */
class DashLhConcurrencyTest {
  static DashLhTable table(int first, int stride) {
    return DashLhTable.create(Pool.createVolatile(PoolOptions.defaults().withScheme("dash-lh", DashLhLayout.LAYOUT_VERSION, 2, first, stride)), 2, first, stride);
  }

  private static void runAll(List<Callable<Void>> tasks) throws Exception {
    ExecutorService ex = Executors.newFixedThreadPool(tasks.size());
    try {
      List<Future<Void>> fs = new ArrayList<>();
      for (Callable<Void> c : tasks) {
        fs.add(ex.submit(c));
      }
      for (Future<Void> f : fs) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      ex.shutdownNow();
    }
  }

  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void twoThreadsInsertingThroughManySplitsFinish() throws Exception {
    for (int round = 0; round < 3; round++) {
      try (DashLhTable t = table(1, 1)) {
        int perThread = 60_000;
        List<Callable<Void>> tasks = new ArrayList<>();
        for (int th = 0; th < 2; th++) {
          long base = (long) th << 40;
          tasks.add(() -> {
            for (int i = 0; i < perThread; i++) {
              assertTrue(t.put((base + i) * 0x9E3779B97F4A7C15L, i));
            }
            return null;
          });
        }
        runAll(tasks);
        assertEquals(2L * perThread, t.size());
        for (int th = 0; th < 2; th++) {
          long base = (long) th << 40;
          for (int i = 0; i < perThread; i++) {
            assertEquals(i, t.get((base + i) * 0x9E3779B97F4A7C15L, -1), "thread " + th + " key " + i);
          }
        }
        assertTrue(t.splits.get() > 50 && t.advances.get() > 50, "the table grew through splits: " + t.stats());
      }
    }
  }

  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void mixedOperationsAcrossSplits() throws Exception {
    long seed = Long.getLong("pmhash.seed", 0xD15EEDL); // fixed for reproducible CI; -Dpmhash.seed=N explores
    System.out.println("DashLhConcurrencyTest seed " + seed);
    try (DashLhTable t = table(2, 2)) {
      int threads = 4;
      List<Map<Long, Long>> models = new ArrayList<>();
      List<Callable<Void>> tasks = new ArrayList<>();
      Map<Long, Long> shared = new ConcurrentHashMap<>();
      for (int th = 0; th < threads; th++) {
        Map<Long, Long> model = new java.util.HashMap<>();
        models.add(model);
        long base = (long) (th + 1) << 40;
        SplittableRandom r = new SplittableRandom(seed + th);
        tasks.add(() -> {
          for (int i = 0; i < 80_000; i++) {
            long k = (base + r.nextInt(30_000)) * 0x9E3779B97F4A7C15L;
            int op = r.nextInt(10);
            if (op < 5) {
              t.put(k, i);
              model.put(k, (long) i);
            } else if (op < 7) {
              assertEquals(model.containsKey(k), t.remove(k), "remove " + k);
              model.remove(k);
            } else if (op < 8) {
              assertEquals(model.containsKey(k), t.replace(k, -i), "replace " + k);
              model.replace(k, (long) -i);
            } else {
              assertEquals(model.getOrDefault(k, -1L), t.get(k, -1), "get " + k);
            }
            // shared keys: every thread inserts the same ones; exactly one wins each
            long s = (long) r.nextInt(2_000) * 0x9E3779B97F4A7C15L + 1;
            if (t.putIfAbsent(s, s)) {
              assertEquals(null, shared.put(s, s), "two winners for shared key " + s);
            }
          }
          return null;
        });
      }
      runAll(tasks);
      long expected = shared.size();
      for (Map<Long, Long> model : models) {
        expected += model.size();
        for (var e : model.entrySet()) {
          assertEquals(e.getValue(), t.get(e.getKey(), -1), "key " + e.getKey());
        }
      }
      for (long s : shared.keySet()) {
        assertEquals(s, t.get(s, -1));
      }
      assertEquals(expected, t.size());
      long[] n = new long[1];
      t.forEach((k, v) -> n[0]++);
      assertEquals(expected, n[0], "a scan sees each record once");
      assertTrue(t.splits.get() > 20, "splits ran concurrently with the operations: " + t.stats());
    }
  }

  @Test
  @Timeout(value = 300, unit = TimeUnit.SECONDS)
  void writersAndReadersAcrossMergesAndSplits() throws Exception {
    try (DashLhTable t = table(1, 1)) {
      int stable = 2_000;
      for (int i = 0; i < stable; i++) {
        t.put(i * 0x9E3779B97F4A7C15L + 3, i);
      }
      int writers = 2;
      int waves = 3;
      int perWave = 25_000;
      java.util.concurrent.atomic.AtomicInteger running = new java.util.concurrent.atomic.AtomicInteger(writers);
      java.util.concurrent.atomic.AtomicLong maxSegments = new java.util.concurrent.atomic.AtomicLong();
      List<Map<Long, Long>> models = new ArrayList<>();
      List<Callable<Void>> tasks = new ArrayList<>();
      for (int th = 0; th < writers; th++) {
        Map<Long, Long> model = new java.util.HashMap<>();
        models.add(model);
        long base = (long) (th + 1) << 40;
        tasks.add(() -> {
          try {
            for (int wave = 0; wave < waves; wave++) {
              for (int i = 0; i < perWave; i++) {
                long k = (base + wave * (long) perWave + i) * 0x9E3779B97F4A7C15L;
                assertTrue(t.put(k, i), "insert " + k);
                model.put(k, (long) i);
              }
              maxSegments.accumulateAndGet(DashLhLayout.segmentsOf(t.nNextWord(), t.firstShift), Math::max);
              // delete all but every 50th key of the wave: the table merges back down
              for (int i = 0; i < perWave; i++) {
                long k = (base + wave * (long) perWave + i) * 0x9E3779B97F4A7C15L;
                if (i % 50 != 0) {
                  assertTrue(t.remove(k), "remove " + k);
                  model.remove(k);
                } else {
                  assertEquals(i, t.get(k, -1), "get " + k);
                }
              }
            }
          } finally {
            running.decrementAndGet();
          }
          return null;
        });
      }
      for (int r = 0; r < 2; r++) {
        int first = r;
        tasks.add(() -> {
          // readers: keys never deleted are always found, with their value, across merges and splits
          for (int i = first; running.get() > 0; i = (i + 2) % stable) {
            assertEquals(i, t.get(i * 0x9E3779B97F4A7C15L + 3, -1), "stable key " + i);
          }
          return null;
        });
      }
      runAll(tasks);
      long expected = stable;
      for (Map<Long, Long> model : models) {
        expected += model.size();
        for (var e : model.entrySet()) {
          assertEquals(e.getValue(), t.get(e.getKey(), -1), "key " + e.getKey());
        }
      }
      for (int i = 0; i < stable; i++) {
        assertEquals(i, t.get(i * 0x9E3779B97F4A7C15L + 3, -1), "stable key " + i);
      }
      assertEquals(expected, t.size());
      long[] n = new long[1];
      t.forEach((k, v) -> n[0]++);
      assertEquals(expected, n[0], "a scan sees each record once");
      long segments = t.stats().details().get("segments");
      System.out.println("DashLhConcurrencyTest merges: " + t.stats().details());
      assertTrue(t.merges.get() > 20 && t.splits.get() > 20 && segments < maxSegments.get(),
          "merges and splits ran concurrently with readers and writers (" + maxSegments.get() + " segments at most, " + segments + " now): " + t.stats());
      DashLhCrashTest.checkSegments(t.pool, t, "after the threads");
      DashLhCrashTest.checkNoLeak(t.pool, t, "after the threads");
    }
  }
}
