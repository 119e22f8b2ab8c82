package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.Codec;
import io.pmhash.map.PmHash;
import io.pmhash.map.PmHashMap;
import io.pmhash.map.TableOptions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Dash-EH's pointer mode under several threads, through {@link PmHashMap}: mixed operations on
 * disjoint and shared keys across splits and merges, checked against models at quiescent points;
 * and readers (get and iteration) that must never see a torn or freed value while writers replace
 * and delete the same keys and insert others (so freed records are recycled).
 */
class DashPointerConcurrencyTest {
  private static final int THREADS = 4;

  @Test
  void mixedOperationsCheckedAtQuiescentPoints() throws Exception {
    long seed = Long.getLong("pmhash.seed", 0xC0C0A11L);
    System.out.println("DashPointerConcurrencyTest seed " + seed);
    try (PmHashMap<String, Long> map = PmHash.createVolatileMap(Codec.utf8(), Codec.longs(), TableOptions.scheme("dash-eh"))) {
      List<Map<String, Long>> models = new ArrayList<>();
      for (int th = 0; th < THREADS; th++) {
        models.add(new HashMap<>());
      }
      int shared = 300;
      long[] merges = new long[shared];
      for (int round = 0; round < 3; round++) {
        List<Callable<Void>> tasks = new ArrayList<>();
        AtomicLong[] perKey = new AtomicLong[shared];
        for (int i = 0; i < shared; i++) {
          perKey[i] = new AtomicLong();
        }
        for (int th = 0; th < THREADS; th++) {
          Map<String, Long> model = models.get(th);
          SplittableRandom r = new SplittableRandom(seed + 31L * round + th);
          int id = th;
          boolean shrink = round == 2;
          tasks.add(() -> {
            for (int i = 0; i < 12_000; i++) {
              String own = "t" + id + "-" + r.nextInt(shrink ? 20_000 : 6_000) + "-".repeat(r.nextInt(12));
              long v = r.nextLong();
              int op = r.nextInt(shrink ? 4 : 8);
              String at = "seed " + seed + " thread " + id + " op " + i;
              switch (op) {
                case 0 -> assertEquals(model.remove(own), map.remove(own), at);
                case 1 -> assertEquals(model.get(own), map.get(own), at);
                case 2 -> assertEquals(model.replace(own, v), map.replace(own, v), at);
                case 3 -> assertEquals(model.putIfAbsent(own, v), map.putIfAbsent(own, v), at);
                default -> assertEquals(model.put(own, v), map.put(own, v), at);
              }
              int k = r.nextInt(shared);
              map.merge("shared-" + k, 1L, Long::sum); // an atomic read-modify-write on keys every thread hits
              perKey[k].incrementAndGet();
            }
            return null;
          });
        }
        DashConcurrencyTest.runAll(tasks);
        Map<String, Long> expected = new HashMap<>();
        for (Map<String, Long> m : models) {
          expected.putAll(m);
        }
        for (int i = 0; i < shared; i++) {
          merges[i] += perKey[i].get();
          if (merges[i] > 0) {
            expected.put("shared-" + i, merges[i]);
          }
        }
        assertEquals(expected, map, "seed " + seed + " round " + round);
        assertEquals(expected.size(), map.size());
      }
      Map<String, Long> details = map.stats().details();
      assertTrue(details.get("splits") > 0, details.toString());
    }
  }

  /** A self-checking value: key, version, a filler whose length depends on the version, checksum. */
  static String valueFor(String key, long version) {
    String body = key + "|" + version + "|" + "#".repeat((int) (version % 97));
    return body + "|" + Integer.toHexString(body.hashCode());
  }

  static void check(String key, String value) {
    int last = value.lastIndexOf('|');
    String body = value.substring(0, last);
    if (!value.startsWith(key + "|") || !Integer.toHexString(body.hashCode()).equals(value.substring(last + 1))) {
      throw new AssertionError("key " + key + " read a torn or foreign value: " + value);
    }
  }

  @Test
  void readersNeverSeeATornOrFreedValue() throws Exception {
    try (PmHashMap<String, String> map = PmHash.createVolatileMap(Codec.utf8(), Codec.utf8(), TableOptions.scheme("dash-eh"))) {
      int keys = 64;
      for (int i = 0; i < keys; i++) {
        map.put("hot-" + i, valueFor("hot-" + i, 0));
      }
      AtomicBoolean done = new AtomicBoolean();
      AtomicLong reads = new AtomicLong();
      List<Callable<Void>> tasks = new ArrayList<>();
      for (int w = 0; w < 2; w++) {
        int id = w;
        tasks.add(() -> {
          try {
            SplittableRandom r = new SplittableRandom(id);
            for (int i = 0; i < 40_000; i++) {
              String k = "hot-" + r.nextInt(keys);
              switch (r.nextInt(6)) {
                case 0 -> map.remove(k);
                case 1 -> map.put("cold-" + id + "-" + (i % 500), valueFor("cold-" + id + "-" + (i % 500), i)); // recycles freed blocks
                default -> map.put(k, valueFor(k, i + 1));
              }
            }
          } finally {
            done.set(true);
          }
          return null;
        });
      }
      for (int rd = 0; rd < 2; rd++) {
        int id = rd;
        tasks.add(() -> {
          SplittableRandom r = new SplittableRandom(100 + id);
          while (!done.get()) {
            if (id == 0) {
              String k = "hot-" + r.nextInt(keys);
              String v = map.get(k);
              if (v != null) {
                check(k, v);
              }
              reads.incrementAndGet();
            } else {
              for (Map.Entry<String, String> e : map.entrySet()) {
                check(e.getKey(), e.getValue());
                reads.incrementAndGet();
              }
            }
          }
          return null;
        });
      }
      DashConcurrencyTest.runAll(tasks);
      assertTrue(reads.get() > 0);
      for (Map.Entry<String, String> e : map.entrySet()) {
        check(e.getKey(), e.getValue());
      }
    }
  }
}
