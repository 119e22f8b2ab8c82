package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.PoolOptions;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dash-EH through the public API: a HashMap model under seeded random operations across many
 * splits and doublings, both stash sizes, reopen after a clean close, parameter validation.
 */
class DashEhTableTest {
  @TempDir Path dir;

  static void checkAgainst(LongHashTable t, Map<Long, Long> model) {
    assertEquals(model.size(), t.size(), "size");
    for (Map.Entry<Long, Long> e : model.entrySet()) {
      assertEquals(e.getValue().longValue(), t.get(e.getKey(), Long.MIN_VALUE), "key " + e.getKey());
    }
    Map<Long, Long> seen = new HashMap<>();
    t.forEach((k, v) -> assertEquals(null, seen.put(k, v), "forEach saw key " + k + " twice"));
    assertEquals(model, seen, "forEach");
  }

  static void randomOps(LongHashTable t, Map<Long, Long> model, long seed, int ops, long keySpace) {
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < ops; i++) {
      long k = r.nextLong(keySpace) - keySpace / 4;
      long v = r.nextLong();
      String at = "seed " + seed + " op " + i + " key " + k;
      switch (r.nextInt(8)) {
        case 0, 1, 2 -> assertEquals(model.put(k, v) == null, t.put(k, v), at);
        case 3 -> assertEquals(model.putIfAbsent(k, v) == null, t.putIfAbsent(k, v), at);
        case 4 -> assertEquals(model.replace(k, v) != null, t.replace(k, v), at);
        case 5 -> assertEquals(model.remove(k) != null, t.remove(k), at);
        case 6 -> {
          Long cur = model.get(k);
          long exp = cur != null && r.nextBoolean() ? cur : v;
          assertEquals(model.remove(k, exp), t.remove(k, exp), at);
        }
        default -> {
          assertEquals(model.containsKey(k), t.containsKey(k), at);
          assertEquals(model.getOrDefault(k, -7L).longValue(), t.get(k, -7L), at);
        }
      }
    }
  }

  @Test
  void growsThroughManySplitsAndDoublingsAgainstAModel() {
    for (int stash : new int[] {2, 4}) {
      long seed = Long.getLong("pmhash.seed", 0xDA5EEDL); // fixed for reproducible CI; -Dpmhash.seed=N explores
      System.out.println("DashEhTableTest growth stash " + stash + " seed " + seed);
      try (LongHashTable t = PmHash.createVolatile(TableOptions.scheme("dash-eh").withParam("stashBuckets", stash))) {
        Map<Long, Long> model = new HashMap<>();
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = 0; i < 60_000; i++) {
          long k = r.nextLong();
          model.put(k, (long) i);
          assertTrue(t.put(k, i), "seed " + seed);
        }
        randomOps(t, model, seed + 1, 40_000, 80_000);
        checkAgainst(t, model);
        DashEhTable d = (DashEhTable) t;
        assertTrue(d.splits.get() >= 60, "splits " + d.splits.get());
        assertTrue(d.doublings.get() >= 6, "doublings " + d.doublings.get());
        double lf = t.loadFactor();
        assertTrue(lf > 0.3 && lf <= 1.0, "load factor " + lf);
      }
    }
  }

  @Test
  void shrinksThroughMergesAndHalvingsAndGrowsAgain() {
    long seed = Long.getLong("pmhash.seed", 0xDA5EEDL); // fixed for reproducible CI; -Dpmhash.seed=N explores
    System.out.println("DashEhTableTest shrink seed " + seed);
    try (LongHashTable t = PmHash.createVolatile(TableOptions.scheme("dash-eh"))) {
      DashEhTable d = (DashEhTable) t;
      Map<Long, Long> model = new HashMap<>();
      SplittableRandom r = new SplittableRandom(seed);
      long[] keys = new long[50_000];
      for (int i = 0; i < keys.length; i++) {
        keys[i] = r.nextLong();
        t.put(keys[i], i);
        model.put(keys[i], (long) i);
      }
      long segmentsAtPeak = t.stats().details().get("segments");
      int depthAtPeak = d.globalDepth();
      for (int i = 0; i < keys.length - 300; i++) {
        assertTrue(t.remove(keys[i]), "seed " + seed);
        model.remove(keys[i]);
      }
      checkAgainst(t, model);
      assertTrue(d.merges.get() > 0, "merges " + d.merges.get());
      assertTrue(d.halvings.get() > 0, "halvings " + d.halvings.get());
      assertTrue(t.stats().details().get("segments") < segmentsAtPeak / 4, "segments " + t.stats());
      assertTrue(d.globalDepth() < depthAtPeak, "global depth " + d.globalDepth());
      randomOps(t, model, seed + 2, 30_000, 40_000);
      checkAgainst(t, model);
    }
  }

  @Test
  void everyKeyIsAllowedIncludingZeroAndMinusOne() {
    try (LongHashTable t = PmHash.createVolatile(TableOptions.scheme("dash-eh"))) {
      for (long k : new long[] {0, -1, Long.MIN_VALUE, Long.MAX_VALUE}) {
        assertTrue(t.put(k, k ^ 5));
        assertFalse(t.put(k, k ^ 6));
        assertEquals(k ^ 6, t.get(k, 1));
      }
      assertEquals(4, t.size());
    }
  }

  @Test
  void reopensAfterCleanCloseWithoutRecovery() throws Exception {
    Path file = dir.resolve("t.pool");
    Map<Long, Long> model = new HashMap<>();
    long seed = Long.getLong("pmhash.seed", 0xDA5EEDL); // fixed for reproducible CI; -Dpmhash.seed=N explores
    System.out.println("DashEhTableTest reopen seed " + seed);
    TableOptions opts = TableOptions.scheme("dash-eh").withParam("stashBuckets", 3)
        .withPoolOptions(PoolOptions.defaults().withDurability(Durability.PROCESS).withInitialSize(4 << 20));
    try (LongHashTable t = PmHash.create(file, opts)) {
      randomOps(t, model, seed, 20_000, 10_000);
    }
    try (LongHashTable t = PmHash.open(file, TableOptions.any())) {
      assertEquals("dash-eh", t.scheme());
      checkAgainst(t, model);
      assertEquals(0L, t.stats().details().get("recoveredSegments"));
      assertEquals(3L, t.stats().details().get("stashBuckets"));
      randomOps(t, model, seed + 1, 20_000, 10_000);
    }
    try (LongHashTable t = PmHash.open(file, TableOptions.scheme("dash-eh"))) {
      checkAgainst(t, model);
    }
  }

  @Test
  void reopensACopyTakenWhileOpenAsAfterACrash() throws Exception {
    Path file = dir.resolve("live.pool");
    Path copy = dir.resolve("crashed.pool");
    Map<Long, Long> model = new HashMap<>();
    long seed = Long.getLong("pmhash.seed", 0xDA5EEDL); // fixed for reproducible CI; -Dpmhash.seed=N explores
    System.out.println("DashEhTableTest crash-copy seed " + seed);
    TableOptions opts = TableOptions.scheme("dash-eh")
        .withPoolOptions(PoolOptions.defaults().withDurability(Durability.PROCESS).withInitialSize(4 << 20));
    try (LongHashTable t = PmHash.create(file, opts)) {
      randomOps(t, model, seed, 30_000, 20_000);
      // the file as a kill -9 would leave it: every store is in the shared mapping
      java.nio.file.Files.copy(file, copy);
    }
    try (LongHashTable t = PmHash.open(copy, TableOptions.any())) {
      assertFalse(t.pool().lastShutdownClean());
      checkAgainst(t, model);
      assertTrue(t.stats().details().get("recoveredSegments") > 0, "segments were recovered lazily");
      randomOps(t, model, seed + 1, 10_000, 20_000);
      checkAgainst(t, model);
    }
  }

  @Test
  void initialCapacitySizesTheFirstDirectory() {
    try (LongHashTable t = PmHash.createVolatile(TableOptions.scheme("dash-eh").withInitialCapacity(100_000))) {
      assertEquals(256L, t.stats().details().get("segments"));
      assertEquals(8L, t.stats().details().get("globalDepth"));
    }
  }

  @Test
  void rejectsBadParameters() {
    assertThrows(IllegalArgumentException.class,
        () -> PmHash.createVolatile(TableOptions.scheme("dash-eh").withParam("stashBuckets", 5)));
    assertThrows(IllegalArgumentException.class,
        () -> PmHash.createVolatile(TableOptions.scheme("dash-eh").withParam("stashBuckets", 1)));
    assertThrows(IllegalArgumentException.class,
        () -> PmHash.createVolatile(TableOptions.scheme("dash-eh").withParam("segmentBytes", 1)));    for (long n : new long[] {0, 2, 3, 48, 1024}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> PmHash.createVolatile(TableOptions.scheme("dash-eh").withParam("normalBuckets", n)));
      assertTrue(e.getMessage().contains("normalBuckets"), e.getMessage());
    }
  }

  @Test
  void normalBucketsIsRecordedAndAWrongValueIsRefusedAtReopen() throws Exception {
    Path file = dir.resolve("n16.pool");
    Map<Long, Long> model = new HashMap<>();
    TableOptions opts = TableOptions.scheme("dash-eh").withParam("normalBuckets", 16)
        .withPoolOptions(PoolOptions.defaults().withDurability(Durability.PROCESS).withInitialSize(4 << 20));
    try (LongHashTable t = PmHash.create(file, opts)) {
      randomOps(t, model, 0x16L, 5_000, 3_000);
      assertEquals(16L, t.stats().details().get("normalBuckets"));
      long segments = t.stats().details().get("segments");
      // 16 normal and 2 stash buckets hold at most 252 records: more segments than a default table would need
      assertTrue(segments * 18 * 14 >= model.size() && segments > model.size() / (66 * 14), segments + " segments for " + model.size());
    }
    byte[] before = java.nio.file.Files.readAllBytes(file);
    for (TableOptions wrong : new TableOptions[] {
        TableOptions.scheme("dash-eh").withParam("normalBuckets", 64),
        TableOptions.scheme("dash-eh").withParam("normalBuckets", 16).withParam("stashBuckets", 4)}) {
      io.pmhash.core.SchemeMismatchException e =
          assertThrows(io.pmhash.core.SchemeMismatchException.class, () -> PmHash.open(file, wrong));
      assertTrue(e.getMessage().contains("asked for"), e.getMessage());
      assertTrue(java.util.Arrays.equals(before, java.nio.file.Files.readAllBytes(file)), "a refused open writes nothing");
    }
    try (LongHashTable t = PmHash.open(file, TableOptions.scheme("dash-eh").withParam("normalBuckets", 16))) {
      checkAgainst(t, model);
    }
    try (LongHashTable t = PmHash.open(file, TableOptions.any())) {
      assertEquals(16L, t.stats().details().get("normalBuckets"));
      checkAgainst(t, model);
    }
  }

  @Test
  void aTableHeaderWithoutANormalBucketCountOpensAs64() {
    // Pools made before the count was recorded: pool header parameter 1 absent, table header bytes 36..39 zero.
    io.pmhash.core.Pool pool = io.pmhash.core.Pool.createVolatile(PoolOptions.defaults().withScheme("dash-eh", 1, 2));
    DashEhTable t = DashEhTable.create(pool, 2, 0);
    for (long k = 1; k <= 2_000; k++) {
      t.put(k, -k);
    }
    DashLayout.INT.set(pool.memory(), t.header + DashLayout.HDR_NORMAL, 0);
    DashEhTable old = DashEhTable.open(pool);
    assertEquals(DashLayout.NORMAL_BUCKETS, old.normal);
    for (long k = 1; k <= 2_000; k++) {
      assertEquals(-k, old.get(k, 0));
    }
    old.close();
  }
}
