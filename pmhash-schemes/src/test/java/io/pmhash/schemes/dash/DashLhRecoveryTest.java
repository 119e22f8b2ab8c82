package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashLayout.LOCK;
import static io.pmhash.schemes.dash.DashLayout.LONG;
import static io.pmhash.schemes.dash.DashLayout.NORMAL_BUCKETS;
import static io.pmhash.schemes.dash.DashLhLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.concurrent.VersionLock;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recovery always ends (the reference C++ Dash-LH recovery can loop forever): crash images (a
 * copy of a live PROCESS-mode file, as kill -9 leaves it) taken with every lock of every segment
 * held — bucket locks, chain locks, chained buckets' locks and the recovery locks — are reopened
 * and recovered, by one thread and by two racing threads, and again after a crash in the middle
 * of recovery; each under a timeout, each checked against the model.
 */
class DashLhRecoveryTest {
  @TempDir Path dir;

  private static TableOptions options() {
    return TableOptions.scheme(DashLhProvider.NAME).withParam("firstArray", 1).withParam("stride", 1)
        .withDurability(Durability.PROCESS);
  }

  /** A table with chains, pending splits, and every lock held, copied as a crash would leave it. */
  private Path crashedWithEveryLockHeld(Map<Long, Long> model) throws Exception {
    Path file = dir.resolve("live.pool");
    Path copy = dir.resolve("crashed.pool");
    try (DashLhTable t = (DashLhTable) PmHash.create(file, options())) {
      SplittableRandom r = new SplittableRandom(77);
      for (int i = 0; i < 40_000; i++) {
        long k = r.nextLong();
        t.put(k, i);
        model.put(k, (long) i);
      }
      MemorySegment m = t.pool.memory();
      long held = 2 * t.globalVersion + 1;
      for (long seg : t.segmentOffsets()) {
        for (int i = 0; i < NORMAL_BUCKETS + t.stash; i++) {
          VersionLock.lock(m, DashSegment.bucket(seg, i) + LOCK);
        }
        DashLhSegment.lockChain(m, seg);
        LONG.set(m, seg + SEG_RECOVERY_LOCK, held);
      }
      assertTrue(t.stats().details().get("chainedBuckets") > 0, "the image has chains");
      Files.copy(file, copy);
      // the live table is left with its locks held; only the copy is used
    }
    return copy;
  }

  private static void check(DashLhTable t, Map<Long, Long> model) {
    for (var e : model.entrySet()) {
      assertEquals(e.getValue(), t.get(e.getKey(), -1), "key " + e.getKey());
    }
    assertEquals(model.size(), t.size());
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void recoveryWithEveryLockHeldEnds() throws Exception {
    Map<Long, Long> model = new HashMap<>();
    Path copy = crashedWithEveryLockHeld(model);
    try (DashLhTable t = (DashLhTable) PmHash.open(copy, TableOptions.any())) {
      assertFalse(t.pool().lastShutdownClean());
      check(t, model);
      long segments = t.stats().details().get("segments");
      assertEquals(segments, t.recoveredSegments.get(), "every segment was recovered once");
      t.put(1, 1);
      model.put(1L, 1L);
      check(t, model);
    }
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void twoThreadsRecoveringTheSameSegmentsEnd() throws Exception {
    Map<Long, Long> model = new HashMap<>();
    Path copy = crashedWithEveryLockHeld(model);
    List<Long> keys = new ArrayList<>(model.keySet());
    try (DashLhTable t = (DashLhTable) PmHash.open(copy, TableOptions.any())) {
      ExecutorService ex = Executors.newFixedThreadPool(2);
      try {
        List<Future<?>> fs = new ArrayList<>();
        for (int th = 0; th < 2; th++) {
          int dirn = th;
          fs.add(ex.submit(() -> {
            for (int i = 0; i < keys.size(); i++) {
              long k = keys.get(dirn == 0 ? i : keys.size() - 1 - i);
              assertEquals(model.get(k), t.get(k, -1));
              if (i % 7 == 0) {
                t.put(k, model.get(k)); // writers recover too
              }
            }
            return null;
          }));
        }
        for (Future<?> f : fs) {
          f.get(100, TimeUnit.SECONDS);
        }
      } finally {
        ex.shutdownNow();
      }
      check(t, model);
      assertEquals(t.stats().details().get("segments"), t.recoveredSegments.get(), "each segment recovered exactly once");
    }
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aCrashDuringRecoveryIsRecoveredAgain() throws Exception {
    Map<Long, Long> model = new HashMap<>();
    Path copy = crashedWithEveryLockHeld(model);
    Path again = dir.resolve("crashed-again.pool");
    List<Long> keys = new ArrayList<>(model.keySet());
    try (DashLhTable t = (DashLhTable) PmHash.open(copy, TableOptions.any())) {
      for (int i = 0; i < keys.size() / 3; i++) {
        assertEquals(model.get(keys.get(i)), t.get(keys.get(i), -1));
      }
      assertTrue(t.recoveredSegments.get() > 0);
      // hold the recovery lock of every segment in this (second) version, as a crash in the
      // middle of recovering each of them would leave it
      MemorySegment m = t.pool.memory();
      long w = t.nNextWord();
      long total = (1L << (t.firstShift + roundOf(w))) + nextOf(w);
      for (long s = 0; s < total; s++) {
        long seg = t.segmentOffset(m, s);
        if (seg != 0 && DashLayout.stateOf(DashSegment.shapeAcquire(m, seg)) == LIVE) {
          LONG.set(m, seg + SEG_RECOVERY_LOCK, 2 * t.globalVersion + 1);
        }
      }
      Files.copy(copy, again);
    }
    try (DashLhTable t = (DashLhTable) PmHash.open(again, TableOptions.any())) {
      assertFalse(t.pool().lastShutdownClean());
      check(t, model);
    }
  }
}
