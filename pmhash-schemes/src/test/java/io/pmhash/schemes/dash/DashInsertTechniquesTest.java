package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashBucket.*;
import static io.pmhash.schemes.dash.DashLayout.SLOTS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code insertTechniques} parameter of Dash §6.6's Fig. 11 experiment: each level places
 * records only where its techniques allow, a one-segment table holds more records before its
 * first split with every technique added, and a table filled with fewer techniques is an
 * ordinary Dash table to every handle.
 */
class DashInsertTechniquesTest {
  private static final int STASH = 2;
  @TempDir Path dir;

  private static DashEhTable oneSegment(int techniques) {
    Pool pool = Pool.createVolatile(PoolOptions.defaults().withScheme("dash-eh", 1, STASH, DashLayout.NORMAL_BUCKETS)
        .withInitialSize(4 << 20));
    return DashEhTable.create(pool, DashLayout.NORMAL_BUCKETS, STASH, 0, false, techniques);
  }

  /** Records a one-segment table holds when an insert first splits it. */
  private static long recordsAtFirstSplit(int techniques, long seed) {
    try (DashEhTable t = oneSegment(techniques)) {
      SplittableRandom r = new SplittableRandom(seed);
      for (long n = 0; ; n++) {
        t.put(r.nextLong(), n);
        if (t.splits.get() > 0) {
          return n;
        }
      }
    }
  }

  @Test
  void everyTechniqueAddsRecordsBeforeTheFirstSplit() {
    long[] sums = new long[DashSegment.TECHNIQUES_ALL + 1];
    for (int t = 0; t < sums.length; t++) {
      for (int seed = 0; seed < 10; seed++) {
        sums[t] += recordsAtFirstSplit(t, seed);
      }
    }
    for (int t = 1; t < sums.length; t++) {
      assertTrue(sums[t] > sums[t - 1], "techniques " + t + " held " + sums[t] + " records over 10 seeds, "
          + (t - 1) + " held " + sums[t - 1]);
    }
    long normalSlots = 10L * DashLayout.NORMAL_BUCKETS * SLOTS;
    assertTrue(sums[DashSegment.TECHNIQUES_DISPLACEMENT] <= normalSlots, "without the stash no more than the normal slots");
    assertTrue(sums[DashSegment.TECHNIQUES_ALL] > normalSlots * 9 / 10, "Dash fills a segment to over 90 %: " + sums[4]);
  }

  @Test
  void bucketizedPlacesEveryRecordInItsTargetBucket() {
    try (DashEhTable t = oneSegment(DashSegment.TECHNIQUES_BUCKETIZED)) {
      MemorySegment m = t.pool.memory();
      fillUntilSplit(t, 3, seg -> {
        long total = 0;
        for (int y = 0; y < DashLayout.NORMAL_BUCKETS + STASH; y++) {
          int bm = bitmap(m, DashSegment.bucket(seg, y));
          assertEquals(0, members(bm), "a record in a probing bucket, bucket " + y);
          assertTrue(y < DashLayout.NORMAL_BUCKETS || count(bm) == 0, "a record in stash bucket " + y);
          total += count(bm);
        }
        assertEquals(t.size(), total);
      });
    }
  }

  @Test
  void probingUsesTheProbingBucketOnlyWhenTheTargetIsFull() {
    try (DashEhTable t = oneSegment(DashSegment.TECHNIQUES_PROBING)) {
      MemorySegment m = t.pool.memory();
      int[] probed = new int[1];
      fillUntilSplit(t, 4, seg -> {
        for (int y = 0; y < DashLayout.NORMAL_BUCKETS; y++) {
          int bm = bitmap(m, DashSegment.bucket(seg, y));
          if (members(bm) != 0) {
            probed[0]++;
            int target = bitmap(m, DashSegment.bucket(seg, (y - 1) & (DashLayout.NORMAL_BUCKETS - 1)));
            assertEquals(SLOTS, count(target), "bucket " + y + " holds probing records but its target is not full");
          }
        }
        assertNoStash(m, seg);
      });
      assertTrue(probed[0] > 0, "no record went to a probing bucket before the split");
    }
  }

  @Test
  void balancedInsertAndDisplacementNeverStash() {
    for (int techniques : new int[] {DashSegment.TECHNIQUES_BALANCED, DashSegment.TECHNIQUES_DISPLACEMENT}) {
      try (DashEhTable t = oneSegment(techniques)) {
        MemorySegment m = t.pool.memory();
        fillUntilSplit(t, 5, seg -> assertNoStash(m, seg));
      }
    }
  }

  @Test
  void dashStashesBeforeItSplits() {
    try (DashEhTable t = oneSegment(DashSegment.TECHNIQUES_ALL)) {
      MemorySegment m = t.pool.memory();
      long[] stashed = new long[1];
      fillUntilSplit(t, 5, seg -> stashed[0] = count(bitmap(m, DashSegment.bucket(seg, DashLayout.NORMAL_BUCKETS))));
      assertTrue(stashed[0] > 0, "Dash split a segment whose first stash bucket was empty");
    }
  }

  private static void assertNoStash(MemorySegment m, long seg) {
    for (int i = 0; i < STASH; i++) {
      assertEquals(0, count(bitmap(m, DashSegment.bucket(seg, DashLayout.NORMAL_BUCKETS + i))), "stash bucket " + i + " used");
    }
  }

  /**
   * Inserts seeded keys into a one-segment table until an insert splits it; after every insert
   * before that, checks the only segment.
   */
  private static void fillUntilSplit(DashEhTable t, long seed, LongConsumer checkSegment) {
    SplittableRandom r = new SplittableRandom(seed);
    long seg = t.segmentOffsets()[0];
    for (long n = 0; ; n++) {
      t.put(r.nextLong(), n);
      if (t.splits.get() > 0) {
        return;
      }
      checkSegment.accept(seg);
    }
  }

  @Test
  void aTableFilledWithFewerTechniquesIsAnOrdinaryTable() throws Exception {
    for (int techniques = 0; techniques < DashSegment.TECHNIQUES_ALL; techniques++) {
      Path file = dir.resolve("t" + techniques + ".pool");
      TableOptions o = TableOptions.scheme("dash-eh").withDurability(Durability.PROCESS);
      int n = 30_000;
      try (LongHashTable t = PmHash.create(file, o.withParam(DashEhProvider.INSERT_TECHNIQUES, techniques))) {
        for (long k = 0; k < n; k++) {
          t.put(k * 0x9E3779B97F4A7C15L, k);
        }
        for (long k = 0; k < n; k += 3) {
          assertTrue(t.remove(k * 0x9E3779B97F4A7C15L), "remove " + k);
        }
      }
      try (LongHashTable t = PmHash.open(file, o)) { // Dash's own techniques
        for (long k = 0; k < n; k++) {
          assertEquals(k % 3 == 0 ? -1 : k, t.get(k * 0x9E3779B97F4A7C15L, -1), "key " + k + " after techniques " + techniques);
        }
        for (long k = n; k < 2L * n; k++) {
          t.put(k * 0x9E3779B97F4A7C15L, k);
        }
        assertEquals(2L * n - (n + 2) / 3, t.size());
      }
      Files.delete(file);
    }
  }

  @Test
  void anOutOfRangeValueIsRefusedAndTheFileKept() throws Exception {
    Path file = dir.resolve("t.pool");
    TableOptions o = TableOptions.scheme("dash-eh").withDurability(Durability.PROCESS);
    IllegalArgumentException create = assertThrows(IllegalArgumentException.class,
        () -> PmHash.create(file, o.withParam(DashEhProvider.INSERT_TECHNIQUES, 5)));
    assertTrue(create.getMessage().contains("insertTechniques must be 0..4"), create.getMessage());
    try (LongHashTable t = PmHash.create(file, o)) {
      t.put(7, 70);
    }
    IllegalArgumentException open = assertThrows(IllegalArgumentException.class,
        () -> PmHash.open(file, o.withParam(DashEhProvider.INSERT_TECHNIQUES, -1)));
    assertTrue(open.getMessage().contains("got -1"), open.getMessage());
    try (LongHashTable t = PmHash.open(file, o)) {
      assertEquals(70L, t.get(7, -1));
    }
  }
}
