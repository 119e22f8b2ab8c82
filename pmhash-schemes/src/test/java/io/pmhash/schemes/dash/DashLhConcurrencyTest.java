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
 * per-thread models.
 */
class DashLhConcurrencyTest {
  static DashLhTable table(int first, int stride) {
    return DashLhTable.create(Pool.createVolatile(PoolOptions.defaults().withScheme("dash-lh", 1, 2, first, stride)), 2, first, stride);
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
}
