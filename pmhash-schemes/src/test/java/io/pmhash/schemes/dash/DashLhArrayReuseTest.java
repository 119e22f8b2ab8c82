package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A new segment array zeroes and flushes its segments' headers only ({@code
 * DashLhSplit.allocateArray}): the buckets of an ABSENT segment keep whatever the memory held.
 * Here the table grows, shrinks back through merges that free its arrays, and grows again over
 * other keys, so the new arrays are the freed ones, their buckets full of the first keys' records;
 * the checks also hold a live-file copy (what kill -9 leaves) reopened and recovered. None of the
 * first keys may come back, and every second key is found with its value. At each step the DRAM
 * route ({@link DashLhRoute}) knows segments and names each where the pool's directory puts it:
 * an entry left naming a freed array would send lookups into memory the second growth reuses.
 */
class DashLhArrayReuseTest {
  @TempDir Path dir;

  @Test
  void arraysRecycledWithStaleRecordsInTheirBucketsNeverShowThem() throws Exception {
    Path file = dir.resolve("t.pool");
    Path crashCopy = dir.resolve("crash.pool");
    long[] first = keys(1, 30_000);
    long[] second = keys(2, 30_000);
    try (DashLhTable t = (DashLhTable) PmHash.create(file, TableOptions.scheme(DashLhProvider.NAME)
        .withParam("firstArray", 1).withParam("stride", 1).withDurability(Durability.PROCESS))) {
      for (int i = 0; i < first.length; i++) {
        t.put(first[i], i);
      }
      Set<Long> grownArrays = arrayOffsets(t);
      checkRoute(t, "after the first growth");
      for (long k : first) {
        assertTrue(t.remove(k));
      }
      assertTrue(t.arraysFreed.get() > 0, "the shrink freed arrays: " + t.stats());
      checkRoute(t, "after the shrink");
      for (int i = 0; i < second.length; i++) {
        t.put(second[i], -i);
      }
      checkRoute(t, "after the second growth");
      Set<Long> reused = arrayOffsets(t);
      reused.retainAll(grownArrays);
      assertTrue(reused.size() > 1, "the second growth reused freed arrays: " + reused + " of " + grownArrays);
      Files.copy(file, crashCopy);
      check(t, first, second);
    }
    try (DashLhTable t = (DashLhTable) PmHash.open(crashCopy, TableOptions.any().withDurability(Durability.PROCESS))) {
      check(t, first, second);
      checkRoute(t, "after the reopen");
    }
  }

  private static void check(DashLhTable t, long[] gone, long[] present) {
    for (long k : gone) {
      assertEquals(Long.MIN_VALUE, t.get(k, Long.MIN_VALUE), "a deleted key of the first growth is back: " + k);
    }
    for (int i = 0; i < present.length; i++) {
      assertEquals(-i, t.get(present[i], Long.MIN_VALUE), "key " + present[i]);
    }
    long[] seen = new long[1];
    t.forEach((k, v) -> seen[0]++);
    assertEquals(present.length, seen[0], "records iterated");
    assertEquals(present.length, t.size());
  }

  private static void checkRoute(DashLhTable t, String when) {
    long known = 0;
    for (long s = 0; s < t.route.capacity(); s++) {
      known += t.route.offset(s) != 0 ? 1 : 0;
    }
    assertTrue(known > 0, "the route knows no segment " + when);
    assertEquals(-1, t.routeDisagreement(), "the route names a segment where the directory does not put it " + when);
  }

  private static Set<Long> arrayOffsets(DashLhTable t) {
    MemorySegment m = t.pool.memory();
    Set<Long> out = new HashSet<>();
    for (int e = 1; e < DashLhLayout.DIRECTORY_ENTRIES; e++) {
      long a = t.arrayOffset(m, e);
      if (a != 0) {
        out.add(a);
      }
    }
    return out;
  }

  private static long[] keys(long seed, int n) {
    SplittableRandom r = new SplittableRandom(seed);
    long[] k = new long[n];
    for (int i = 0; i < n; i++) {
      k[i] = r.nextLong();
    }
    return k;
  }
}
