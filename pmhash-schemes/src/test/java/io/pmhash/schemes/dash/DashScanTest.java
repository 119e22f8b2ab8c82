package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.Codec;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.PmHashMap;
import io.pmhash.map.TableOptions;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The inline table's iteration in parts ({@link DashEhTable#scan}): one segment per part, cursors
 * in increasing hash order, every record present throughout visited exactly once — also while
 * another thread splits segments, doubles the directory, and inserts and removes other keys.
 */
class DashScanTest {
  private static final long STABLE = 20_000;

  private static long stableKey(long i) {
    return i * 2 + 1; // odd: the stable set
  }

  private static long churnKey(long i) {
    return i * 2; // even: inserted and removed meanwhile
  }

  @Test
  void partsAreSegmentsInHashOrderAndCoverEveryRecordOnce() {
    try (LongHashTable t = PmHash.createVolatile(TableOptions.scheme("dash-eh"))) {
      for (long i = 0; i < STABLE; i++) {
        t.put(stableKey(i), i);
      }
      int segments = (int) (long) t.stats().details().get("segments");
      Map<Long, Integer> seen = new HashMap<>();
      int parts = 0;
      long previous = 0;
      long c = 0;
      do {
        c = t.scan(c, (k, v) -> seen.merge(k, 1, Integer::sum));
        parts++;
        assertTrue(c == 0 || Long.compareUnsigned(c, previous) > 0, "cursors increase: " + previous + " then " + c);
        previous = c;
      } while (c != 0);
      assertEquals(segments, parts, "one part per segment");
      assertEquals(STABLE, seen.size());
      seen.forEach((k, n) -> assertEquals(1, n, "key " + k + " visited " + n + " times"));
    }
  }

  @Test
  void recordsPresentThroughoutAreVisitedOnceWhileSegmentsSplit() throws Exception {
    try (LongHashTable t = PmHash.createVolatile(TableOptions.scheme("dash-eh"))) {
      for (long i = 0; i < STABLE; i++) {
        t.put(stableKey(i), i);
      }
      long doublingsBefore = t.stats().details().get("doublings");
      AtomicBoolean stop = new AtomicBoolean();
      Thread writer = new Thread(() -> {
        long i = 0;
        while (!stop.get()) {
          t.put(churnKey(i), -i);
          if (i % 3 == 0 && i > 0) {
            t.remove(churnKey(i - 1));
          }
          i++;
        }
      });
      writer.start();
      int scans = 0;
      try {
        // Keep scanning until the writer has doubled the directory at least twice, so that
        // splits certainly happened between the parts of some scans.
        do {
          Map<Long, Integer> seen = new HashMap<>();
          for (long c = t.scan(0, (k, v) -> count(seen, k, v)); c != 0; c = t.scan(c, (k, v) -> count(seen, k, v))) {
            // parts
          }
          for (long i = 0; i < STABLE; i++) {
            assertEquals(1, seen.getOrDefault(stableKey(i), 0), "stable key " + stableKey(i) + " in scan " + scans);
          }
          scans++;
        } while (t.stats().details().get("doublings") < doublingsBefore + 2 && scans < 10_000);
      } finally {
        stop.set(true);
        writer.join();
      }
      assertTrue(t.stats().details().get("doublings") >= doublingsBefore + 2, "the writer doubled the directory during the scans");
    }
  }

  /**
   * Displacement (Dash §4.3) moves a record between neighbouring buckets of one segment: copied
   * into the neighbour, then cleared, under both buckets' locks. A part copies its segment bucket
   * by bucket, so unless it checks that no bucket changed after its copy, a record moved forward
   * between two bucket copies is seen twice and one moved backward not at all. Here a writer keeps
   * a window of other keys going in and out of a table whose buckets are full, so inserts displace
   * stable records all the time, while scans (in parts, and forEach every other time) count
   * them. Without the check ({@code
   * DashEhTable.unchangedSince} answering true) it failed in 4 runs of 4, within 1 to 330 scans,
   * with keys seen twice and keys missed; with it, 1,000 scans pass.
   */
  @Test
  void recordsPresentThroughoutAreVisitedOnceWhileInsertsDisplaceThem() throws Exception {
    try (LongHashTable t = PmHash.createVolatile(TableOptions.scheme("dash-eh"))) {
      for (long i = 0; i < STABLE; i++) {
        t.put(stableKey(i), i);
      }
      AtomicBoolean stop = new AtomicBoolean();
      Thread writer = new Thread(() -> {
        int window = 2_000;
        for (long i = 0; !stop.get(); i++) {
          t.put(churnKey(i), -i);
          if (i >= window) {
            t.remove(churnKey(i - window));
          }
        }
      });
      writer.start();
      try {
        for (int scan = 0; scan < 1_000; scan++) {
          Map<Long, Integer> seen = new HashMap<>();
          if (scan % 2 == 0) {
            for (long c = t.scan(0, (k, v) -> count(seen, k, v)); c != 0; c = t.scan(c, (k, v) -> count(seen, k, v))) {
              // parts
            }
          } else {
            t.forEach((k, v) -> count(seen, k, v)); // the same contract, in one call
          }
          for (long i = 0; i < STABLE; i++) {
            assertEquals(1, seen.getOrDefault(stableKey(i), 0), "stable key " + stableKey(i) + " in scan " + scan);
          }
        }
      } finally {
        stop.set(true);
        writer.join();
      }
    }
  }

  private static void count(Map<Long, Integer> seen, long k, long v) {
    if ((k & 1) == 1) {
      assertEquals((k - 1) / 2, v, "value of stable key " + k);
      seen.merge(k, 1, Integer::sum);
    }
  }

  @Test
  void mapOfLongsIteratesInParts() throws Exception {
    try (PmHashMap<Long, Long> map = PmHash.createVolatileMap(Codec.longs(), Codec.longs(), TableOptions.scheme("dash-eh"))) {
      for (long i = 0; i < STABLE; i++) {
        map.put(i, -i);
      }
      Map<Long, Long> copy = new HashMap<>();
      map.forEach(copy::put);
      assertEquals(STABLE, copy.size());
      long sum = 0;
      for (Map.Entry<Long, Long> e : map.entrySet()) {
        assertEquals(-e.getKey(), e.getValue());
        sum += e.getKey();
      }
      assertEquals(STABLE * (STABLE - 1) / 2, sum, "every key once");
    }
  }
}
