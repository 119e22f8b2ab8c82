package io.pmhash.schemes.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pmhash.core.Durability;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import io.pmhash.map.TableStats;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The contract every scheme's {@link LongHashTable} keeps, run by one subclass per scheme (as
 * JCTools' queue sanity tests and Caffeine's cache specs are): the table against a {@link
 * HashMap} model under seeded random operations (the seed is in every failure message; {@code
 * -Dpmhash.seed=N} explores other sequences, {@link Seeds}), growth
 * through many structural changes and back down, edge keys, iteration, close and reopen,
 * reopen after a crash, and threads. After every test that leaves a table, {@link
 * #checkInvariants} runs the scheme's own structural check.
 */
public abstract class LongHashTableContract {
  @TempDir protected Path dir;

  /**
   * Options naming the scheme under test, with parameters small enough that the tests below
   * exercise its structural changes (splits, doublings, resizes) many times.
   *
   * @return the options
   */
  protected abstract TableOptions options();

  /**
   * The scheme's structural invariants (no duplicate keys, counts equal a scan, metadata
   * consistent, ...). The default checks that {@code size()} equals a scan and, on the llpl
   * backend, that the table's blocks are PMDK's ({@link PmdkBlocks#require}).
   *
   * @param table a quiescent table
   */
  protected void checkInvariants(LongHashTable table) {
    long[] n = new long[1];
    table.forEach((k, v) -> n[0]++);
    assertEquals(n[0], table.size(), "size() equals a scan");
    if ("llpl".equals(backend())) {
      PmdkBlocks.require(table, options().scheme());
    }
  }

  /**
   * Called by {@link #growsThroughManyStructuralChangesAndBackDown} after every key was removed:
   * a scheme that contracts checks here that it did (the statistics after growth, then after the
   * removals). The default checks nothing: not every scheme shrinks.
   *
   * @param grown the statistics with every key in
   * @param emptied the statistics after every key was removed
   */
  protected void checkShrunk(TableStats grown, TableStats emptied) {}

  /** Keys the random-operation tests draw from: small, so operations collide often. */
  protected int keyRange() {
    return 3_000;
  }

  /**
   * The pool backend under test: null for the default (the FFM file), {@code "llpl"} in the
   * subclasses that run the suite on the llpl backend.
   *
   * @return the backend name or null
   */
  protected String backend() {
    return null;
  }

  protected LongHashTable create(Durability mode) throws Exception {
    TableOptions o = options().withDurability(mode);
    if (backend() != null) {
      // The llpl backend runs PROCESS and PMEM_EMULATED only: a VOLATILE case runs in PROCESS
      // (the nearest: no flushes), an MSYNC case is skipped (MSYNC is FFM-only, docs/llpl.md).
      Assumptions.assumeTrue(mode != Durability.MSYNC, () -> "MSYNC does not exist on the " + backend() + " backend");
      return PmHash.create(dir.resolve("table.pool"), o.withBackend(backend())
          .withDurability(mode == Durability.VOLATILE ? Durability.PROCESS : mode));
    }
    return mode == Durability.VOLATILE ? PmHash.createVolatile(o) : PmHash.create(dir.resolve("table.pool"), o);
  }

  protected LongHashTable reopen(Path file, Durability mode) throws Exception {
    return PmHash.open(file, TableOptions.any().withDurability(mode));
  }

  // ------------------------------------------------------------------ model tests

  @ParameterizedTest
  @EnumSource(value = Durability.class, names = {"VOLATILE", "PROCESS", "PMEM_EMULATED"})
  void randomOperationsMatchAHashMap(Durability mode) throws Exception {
    long seed = Seeds.seed("LongHashTableContract", 0x5EED0000L + mode.ordinal());
    try (LongHashTable t = create(mode)) {
      runRandom(t, new HashMap<>(), new SplittableRandom(seed), 40_000, keyRange(), "seed " + seed + ", " + mode);
      checkInvariants(t);
    }
  }

  @Test
  void msyncModeMatchesAHashMap() throws Exception {
    long seed = Seeds.seed("LongHashTableContract", 0xD15CL);
    try (LongHashTable t = create(Durability.MSYNC)) {
      runRandom(t, new HashMap<>(), new SplittableRandom(seed), 3_000, 500, "seed " + seed + ", MSYNC");
      checkInvariants(t);
    }
  }

  /** {@link #runRandom} over the sequence {@link Seeds} gives {@code where}; its seed is in the failure message. */
  private static void runSeeded(LongHashTable t, Map<Long, Long> model, String where, long fixedSeed, int ops, int keys) {
    long seed = Seeds.seed(where, fixedSeed);
    runRandom(t, model, new SplittableRandom(seed), ops, keys, where + ", seed " + seed);
  }

  /** Applies {@code ops} random operations to the table and the model, comparing every result. */
  protected static void runRandom(LongHashTable t, Map<Long, Long> model, SplittableRandom rnd, int ops, int keys, String where) {
    for (int i = 0; i < ops; i++) {
      long k = key(rnd.nextInt(keys));
      long v = rnd.nextLong();
      Long old = model.get(k);
      String at = where + ", op " + i + ", key " + k;
      switch (rnd.nextInt(10)) {
        case 0, 1 -> assertEquals(old == null ? -7L : old, t.get(k, -7L), at + ": get");
        case 2 -> assertEquals(old != null, t.containsKey(k), at + ": containsKey");
        case 3, 4 -> {
          assertEquals(old == null, t.put(k, v), at + ": put");
          model.put(k, v);
        }
        case 5 -> {
          assertEquals(old == null, t.putIfAbsent(k, v), at + ": putIfAbsent");
          model.putIfAbsent(k, v);
        }
        case 6 -> {
          assertEquals(old != null, t.replace(k, v), at + ": replace");
          model.replace(k, v);
        }
        case 7 -> {
          long expected = old != null && rnd.nextBoolean() ? old : v ^ 1;
          boolean hit = old != null && old == expected;
          assertEquals(hit, t.replace(k, expected, v), at + ": replace(expected)");
          if (hit) {
            model.put(k, v);
          }
        }
        case 8 -> {
          assertEquals(old != null, t.remove(k), at + ": remove");
          model.remove(k);
        }
        default -> {
          long expected = old != null && rnd.nextBoolean() ? old : v;
          boolean hit = old != null && old == expected;
          assertEquals(hit, t.remove(k, expected), at + ": remove(expected)");
          if (hit) {
            model.remove(k);
          }
        }
      }
    }
    assertSameContent(model, t, where);
  }

  /** Spreads small indexes over the whole key space, edge values included. */
  protected static long key(int i) {
    return switch (i) {
      case 0 -> 0L;
      case 1 -> -1L;
      case 2 -> Long.MIN_VALUE;
      case 3 -> Long.MAX_VALUE;
      default -> i * 0x9E3779B97F4A7C15L;
    };
  }

  protected static void assertSameContent(Map<Long, Long> model, LongHashTable t, String where) {
    assertEquals(model.size(), t.size(), where + ": size");
    Map<Long, Long> seen = new HashMap<>();
    t.forEach((k, v) -> {
      if (seen.put(k, v) != null) {
        fail(where + ": forEach saw key " + k + " twice");
      }
    });
    assertEquals(model, seen, where + ": content");
    for (Map.Entry<Long, Long> e : model.entrySet()) {
      assertEquals(e.getValue(), t.get(e.getKey(), ~e.getValue()), where + ": get " + e.getKey());
    }
  }

  // ------------------------------------------------------------------ growth and shrink

  @ParameterizedTest
  @EnumSource(value = Durability.class, names = {"VOLATILE", "PMEM_EMULATED"})
  void growsThroughManyStructuralChangesAndBackDown(Durability mode) throws Exception {
    int n = 150_000;
    try (LongHashTable t = create(mode)) {
      double emptyLoad = t.loadFactor();
      for (int i = 0; i < n; i++) {
        assertTrue(t.put(i * 0x9E3779B97F4A7C15L, i), "insert " + i);
      }
      assertEquals(n, t.size());
      assertTrue(t.loadFactor() > 0 && t.loadFactor() <= 1, "load factor " + t.loadFactor());
      for (int i = 0; i < n; i++) {
        assertEquals(i, t.get(i * 0x9E3779B97F4A7C15L, -1), "get " + i);
      }
      checkInvariants(t);
      TableStats grown = t.stats();
      for (int i = 0; i < n; i++) {
        assertTrue(t.remove(i * 0x9E3779B97F4A7C15L), "remove " + i);
      }
      assertEquals(0, t.size());
      assertFalse(t.containsKey(0));
      checkInvariants(t);
      checkShrunk(grown, t.stats());
      for (int i = 0; i < n / 2; i++) {
        assertTrue(t.put(i * 31L + 7, i), "reinsert " + i);
      }
      assertEquals(n / 2, t.size());
      checkInvariants(t);
      assertTrue(Double.isFinite(emptyLoad));
    }
  }

  // ------------------------------------------------------------------ lifecycle

  /**
   * After close, every operation throws IllegalStateException: reads go by address
   * (docs/persistence.md "Unchecked reads"), and one after close must fail as a checked access
   * does, never read the unmapped memory.
   */
  @ParameterizedTest
  @EnumSource(value = Durability.class, names = {"VOLATILE", "PROCESS", "PMEM_EMULATED"})
  void everyOperationAfterCloseThrows(Durability mode) throws Exception {
    LongHashTable t = create(mode);
    for (int i = 0; i < 2_000; i++) {
      t.put(key(i), i);
    }
    t.close();
    assertThrows(IllegalStateException.class, () -> t.get(key(1), -1), "get of a present key");
    assertThrows(IllegalStateException.class, () -> t.get(key(1_000_000), -1), "get of an absent key");
    assertThrows(IllegalStateException.class, () -> t.containsKey(key(2)), "containsKey");
    assertThrows(IllegalStateException.class, () -> t.put(key(3), 3), "put");
    assertThrows(IllegalStateException.class, () -> t.remove(key(4)), "remove");
  }

  /**
   * Readers racing a close: each reads until a read throws; every one of them must end with
   * IllegalStateException (the close waits for reads in flight before it unmaps, and a read that
   * starts after it fails), and none may crash or see a wrong value. No clock: the close starts
   * once every reader has read, and each reader stops at its first failure.
   */
  @Test
  void readsRacingACloseFinishOrThrowIllegalState() throws Exception {
    LongHashTable t = create(Durability.PMEM_EMULATED);
    int n = 5_000;
    for (int i = 0; i < n; i++) {
      t.put(key(i), i);
    }
    int readers = 3;
    java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(readers);
    List<Thread> threads = new ArrayList<>();
    AtomicReference<Throwable> wrong = new AtomicReference<>();
    AtomicInteger endedByClose = new AtomicInteger();
    for (int r = 0; r < readers; r++) {
      int first = r;
      threads.add(Thread.ofPlatform().start(() -> {
        try {
          boolean counted = false;
          for (int i = first; ; i = (i + 7) % (2 * n)) {
            long v = t.get(key(i), -1);
            if (v != (i < n ? i : -1)) {
              wrong.compareAndSet(null, new AssertionError("key " + i + " read " + v));
              return;
            }
            if (!counted) {
              started.countDown();
              counted = true;
            }
          }
        } catch (IllegalStateException closed) {
          endedByClose.incrementAndGet();
        } catch (Throwable e) {
          wrong.compareAndSet(null, e);
        }
      }));
    }
    started.await();
    t.close();
    for (Thread th : threads) {
      th.join();
    }
    if (wrong.get() != null) {
      throw new AssertionError("a read racing close", wrong.get());
    }
    assertEquals(readers, endedByClose.get(), "every reader ended with IllegalStateException");
  }

  @Test
  void closeAndReopenKeepsEverything() throws Exception {
    Map<Long, Long> model = new HashMap<>();
    Path file = dir.resolve("table.pool");
    try (LongHashTable t = create(Durability.PMEM_EMULATED)) {
      runSeeded(t, model, "before close", 11, 20_000, 20_000);
    }
    try (LongHashTable t = reopen(file, Durability.PMEM_EMULATED)) {
      assertTrue(t.pool().lastShutdownClean());
      assertEquals(options().scheme(), t.scheme());
      assertSameContent(model, t, "after reopen");
      runSeeded(t, model, "after reopen", 12, 20_000, 20_000);
      checkInvariants(t);
    }
    try (LongHashTable t = reopen(file, Durability.PROCESS)) {
      assertSameContent(model, t, "after a second reopen in another mode");
    }
  }

  @Test
  void reopenAfterACrashKeepsEveryCompletedOperation() throws Exception {
    Map<Long, Long> model = new HashMap<>();
    Path file = dir.resolve("table.pool");
    Path crashed = dir.resolve("crashed.pool");
    try (LongHashTable t = create(Durability.PROCESS)) {
      runSeeded(t, model, "before the crash", 21, 30_000, 10_000);
      // PROCESS: every completed store is in the page cache; a copy is what kill -9 leaves.
      Files.copy(file, crashed);
    }
    try (LongHashTable t = reopen(crashed, Durability.PROCESS)) {
      assertFalse(t.pool().lastShutdownClean());
      assertSameContent(model, t, "after the crash");
      runSeeded(t, model, "after the crash", 22, 20_000, 10_000);
      checkInvariants(t);
    }
  }

  // ------------------------------------------------------------------ bad input

  @Test
  void unknownParameterIsRefusedByName() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> PmHash.createVolatile(options().withParam("noSuchParameter", 1)).close());
    assertTrue(e.getMessage().contains("'noSuchParameter'") && e.getMessage().contains(options().scheme()), e.getMessage());
    assertFalse(Files.exists(dir.resolve("table.pool")));
  }

  // ------------------------------------------------------------------ iteration

  @Test
  void forEachSeesEveryRecordOnce() throws Exception {
    try (LongHashTable t = create(Durability.VOLATILE)) {
      Map<Long, Long> model = new HashMap<>();
      for (int i = 0; i < 50_000; i++) {
        long k = key(i);
        t.put(k, ~k);
        model.put(k, ~k);
      }
      assertSameContent(model, t, "forEach");
    }
  }

  // ------------------------------------------------------------------ threads

  @ParameterizedTest
  @EnumSource(value = Durability.class, names = {"VOLATILE", "PMEM_EMULATED"})
  void threadsOnDisjointKeysMatchTheirModels(Durability mode) throws Exception {
    int threads = 4;
    try (LongHashTable t = create(mode)) {
      List<Map<Long, Long>> models = new ArrayList<>();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      CyclicBarrier start = new CyclicBarrier(threads);
      long threadSeed = Seeds.seed("threads", 100);
      List<Thread> ts = new ArrayList<>();
      for (int id = 0; id < threads; id++) {
        Map<Long, Long> model = new HashMap<>();
        models.add(model);
        final int me = id;
        ts.add(Thread.ofPlatform().start(() -> {
          try {
            start.await();
            SplittableRandom rnd = new SplittableRandom(threadSeed + me);
            for (int i = 0; i < 30_000; i++) {
              long k = key(rnd.nextInt(20_000)) * threads + me; // disjoint residues
              switch (rnd.nextInt(4)) {
                case 0, 1 -> {
                  long v = rnd.nextLong();
                  if (t.put(k, v) != (model.put(k, v) == null)) {
                    throw new AssertionError("thread " + me + " (seed " + (threadSeed + me) + ") put " + k);
                  }
                }
                case 2 -> {
                  if (t.remove(k) != (model.remove(k) != null)) {
                    throw new AssertionError("thread " + me + " (seed " + (threadSeed + me) + ") remove " + k);
                  }
                }
                default -> {
                  Long v = model.get(k);
                  if (t.get(k, -3) != (v == null ? -3 : v)) {
                    throw new AssertionError("thread " + me + " (seed " + (threadSeed + me) + ") get " + k);
                  }
                }
              }
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        }));
      }
      for (Thread th : ts) {
        th.join();
      }
      if (failure.get() != null) {
        throw new AssertionError(failure.get());
      }
      Map<Long, Long> all = new HashMap<>();
      models.forEach(all::putAll);
      assertSameContent(all, t, "after " + threads + " threads");
      checkInvariants(t);
    }
  }

  @Test
  void racingInsertsOfTheSameKeysHaveOneWinnerEach() throws Exception {
    int threads = 4;
    int keys = 40_000;
    try (LongHashTable t = create(Durability.VOLATILE)) {
      AtomicInteger[] wins = new AtomicInteger[keys];
      for (int i = 0; i < keys; i++) {
        wins[i] = new AtomicInteger();
      }
      Map<Long, Long> winners = new ConcurrentHashMap<>();
      CyclicBarrier start = new CyclicBarrier(threads);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> ts = new ArrayList<>();
      for (int id = 0; id < threads; id++) {
        final long me = id;
        ts.add(Thread.ofPlatform().start(() -> {
          try {
            start.await();
            for (int i = 0; i < keys; i++) {
              int j = (int) ((i + me * 7919) % keys);
              if (t.putIfAbsent(key(j), me)) {
                wins[j].incrementAndGet();
                winners.put(key(j), me);
              }
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        }));
      }
      for (Thread th : ts) {
        th.join();
      }
      if (failure.get() != null) {
        throw new AssertionError(failure.get());
      }
      for (int i = 0; i < keys; i++) {
        assertEquals(1, wins[i].get(), "key " + key(i) + " inserted by " + wins[i].get() + " threads");
      }
      assertSameContent(winners, t, "after racing inserts");
      checkInvariants(t);
    }
  }
}
