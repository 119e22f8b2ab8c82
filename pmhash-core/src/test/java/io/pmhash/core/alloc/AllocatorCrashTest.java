package io.pmhash.core.alloc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.crash.CrashHarness;
import io.pmhash.core.crash.CrashPoint;
import io.pmhash.core.crash.ImageKind;
import io.pmhash.core.log.Tx;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crashes publish, publish with extra SETs, deferred free, a transaction with snapshot, alloc and
 * free, an aborted transaction, and a huge block's free at every drain, in every image kind, and
 * crashes the recovery of each image again. Each image must show: no leak (owned blocks are
 * exactly the blocks reachable from the test's table), no double ownership (no two owned blocks
 * overlap; no slot points at a free block), the in-flight operation all or nothing, and an
 * allocator that still works.
 */
class AllocatorCrashTest {
  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;
  private static final int SLOTS = 6;
  private static final int COUNTER = 7;

  @TempDir Path dir;

  private static PoolOptions options() {
    return PoolOptions.defaults().withScheme("alloc-crash", 1)
        .withGeometry(2, 1024, 64 << 10).withInitialSize(320 << 10);
  }

  private static long slot(Pool pool, int i) {
    return pool.root(0) + 8L * i;
  }

  private static long get(Pool pool, long off) {
    return pool.memory().get(U64, off);
  }

  private static long[] state(Pool pool) {
    long[] s = new long[8];
    for (int i = 0; i < 8; i++) {
      s[i] = get(pool, slot(pool, i));
    }
    return s;
  }

  private static long filled(Pool pool, long size, long tag) {
    Reservation r = pool.allocator().reserve(size);
    return fill(pool, r, tag).offset();
  }

  private static Reservation fill(Pool pool, Reservation r, long tag) {
    pool.memory().set(U64, r.offset(), tag);
    pool.persistence().flush(r.offset(), 8);
    return r;
  }

  @Test
  void everyDrainEveryImageAndRecoveryCrashes() {
    List<long[]> states = new ArrayList<>();
    CrashHarness.Report report = CrashHarness.builder(dir, options())
        .images(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE)
        .randomImages(4, 0xA11CL)
        .crashDuringRecovery(true)
        .setup(pool -> {
          Allocator a = pool.allocator();
          Reservation t = a.reserve(64);
          pool.memory().asSlice(t.offset(), 64).fill((byte) 0);
          pool.persistence().flush(t.offset(), 64);
          a.publish(t, pool.rootWord(0));
        })
        .run((pool, ops) -> {
          Allocator a = pool.allocator();
          states.add(state(pool));
          int op = 0;
          // 0: publish
          ops.begin(op);
          a.publish(fill(pool, a.reserve(40), 0xA), slot(pool, 0));
          ops.end(op++);
          states.add(state(pool));
          // 1: publish two reservations plus an extra SET in one step
          ops.begin(op);
          Reservation b = fill(pool, a.reserve(100), 0xB);
          Reservation c = fill(pool, a.reserve(3000), 0xC);
          try (Publication p = a.begin()) {
            p.publish(b, slot(pool, 1)).publish(c, slot(pool, 2)).set(slot(pool, COUNTER), 1);
            p.commit();
          }
          ops.end(op++);
          states.add(state(pool));
          // 2: a huge block (the pool grows)
          ops.begin(op);
          a.publish(fill(pool, a.reserve(a.maxRunBlockSize() * 9), 0xD), slot(pool, 3));
          ops.end(op++);
          states.add(state(pool));
          // 3: deferred free and the SET that unlinks the block, in one step
          ops.begin(op);
          try (Publication p = a.begin()) {
            p.deferFree(get(pool, slot(pool, 1))).set(slot(pool, 1), 0);
            p.commit();
          }
          ops.end(op++);
          states.add(state(pool));
          // 4: a transaction: snapshot, alloc, free, commit
          ops.begin(op);
          try (Tx tx = pool.undoLog().begin()) {
            tx.snapshot(slot(pool, 0), 8);
            tx.snapshot(slot(pool, 4), 8);
            long e = tx.alloc(100); // another size class than the block it frees: another bitmap line
            pool.memory().set(U64, e, 0xE);
            tx.free(get(pool, slot(pool, 0)));
            pool.memory().set(U64, slot(pool, 0), 0);
            pool.memory().set(U64, slot(pool, 4), e);
            tx.commit();
          }
          ops.end(op++);
          states.add(state(pool));
          // 5: an aborted transaction changes nothing
          ops.begin(op);
          try (Tx tx = pool.undoLog().begin()) {
            tx.snapshot(slot(pool, 5), 8);
            tx.snapshot(slot(pool, 2), 8);
            tx.snapshot(slot(pool, COUNTER), 8);
            pool.memory().set(U64, slot(pool, COUNTER), 99);
            long f = tx.alloc(5000);
            pool.memory().set(U64, f, 0xF);
            pool.memory().set(U64, slot(pool, 5), f);
            tx.free(get(pool, slot(pool, 2)));
            pool.memory().set(U64, slot(pool, 2), 0);
            // no commit: close rolls back
          }
          ops.end(op++);
          states.add(state(pool));
          // 6: right after the rollback, a plain durable store over a word it restored: a
          // rollback whose log is not durably retired would be rolled back again over it
          ops.begin(op);
          pool.memory().set(U64, slot(pool, COUNTER), 4);
          pool.persistence().persist(slot(pool, COUNTER), 8);
          ops.end(op++);
          states.add(state(pool));
          // 7: free the huge block
          ops.begin(op);
          try (Publication p = a.begin()) {
            p.deferFree(get(pool, slot(pool, 3))).set(slot(pool, 3), 0);
            p.commit();
          }
          ops.end(op++);
          states.add(state(pool));
          // 8: a redo SET of the counter
          ops.begin(op);
          try (Publication p = a.begin()) {
            p.set(slot(pool, COUNTER), 2);
            p.commit();
          }
          ops.end(op++);
          states.add(state(pool));
          // 9: right after the redo step, a plain durable store over the word it set: a redo
          // record not durably retired would be replayed over it
          ops.begin(op);
          pool.memory().set(U64, slot(pool, COUNTER), 3);
          pool.persistence().persist(slot(pool, COUNTER), 8);
          ops.end(op++);
          states.add(state(pool));
        }, (pool, point) -> verify(pool, point, states));
    assertTrue(report.passed(), report.summary());
    assertTrue(report.crashPoints() > 20, report.summary());
    assertTrue(report.recoveryCrashPoints() > 0, report.summary());
    System.out.println("AllocatorCrashTest: " + report.summary());
  }

  private static void verify(Pool pool, CrashPoint point, List<long[]> states) {
    Allocator a = pool.allocator();
    CrashHarness.recovered(pool);
    long table = pool.root(0);
    assertTrue(table != 0, "the table survives");
    long[] now = state(pool);
    long[] done = states.get(point.opsCompleted());
    if (point.inFlightOp().isPresent() && !java.util.Arrays.equals(now, done)) {
      assertArrayEquals(states.get(point.opsCompleted() + 1), now, "in-flight operation is all or nothing");
    } else {
      assertArrayEquals(done, now, "completed operations survive");
    }
    // reachable == owned, no overlaps
    TreeMap<Long, Long> owned = new TreeMap<>();
    a.forEachOwned(owned::put);
    TreeMap<Long, Long> reachable = new TreeMap<>();
    reachable.put(table, 64L);
    for (int i = 0; i < SLOTS; i++) {
      if (now[i] != 0) {
        assertTrue(a.owned(now[i]), "slot " + i + " points at a free block " + now[i]);
        reachable.put(now[i], owned.get(now[i]));
      }
    }
    assertEquals(reachable.keySet(), owned.keySet(), "owned blocks are exactly the reachable ones (no leak)");
    long end = 0;
    for (Map.Entry<Long, Long> e : owned.entrySet()) {
      if (e.getKey() < end) {
        fail("owned blocks overlap at " + e.getKey());
      }
      end = e.getKey() + e.getValue();
    }
    for (int i = 0; i < SLOTS; i++) {
      if (now[i] != 0) {
        long tag = get(pool, now[i]);
        assertTrue(tag >= 0xA && tag <= 0xF, "slot " + i + " block holds its data, got " + tag);
      }
    }
    // the allocator works after recovery and never hands out an owned block
    for (long size : new long[] {40, 100, 3000, a.maxRunBlockSize() * 9}) {
      Reservation r = a.reserve(size);
      Map.Entry<Long, Long> below = owned.floorEntry(r.offset() + r.size() - 1);
      assertTrue(below == null || below.getKey() + below.getValue() <= r.offset(), "reserved " + r + " overlaps an owned block");
      a.cancel(r);
    }
  }
}
