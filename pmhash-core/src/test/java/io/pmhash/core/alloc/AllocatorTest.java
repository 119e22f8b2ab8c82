package io.pmhash.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolFullException;
import io.pmhash.core.PoolOptions;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AllocatorTest {
  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;

  @TempDir Path dir;

  private static PoolOptions small() {
    return PoolOptions.defaults().withScheme("alloc-test", 1).withDurability(Durability.PROCESS)
        .withGeometry(4, 1024, 64 << 10).withInitialSize(256 << 10);
  }

  /** A table of 64 pointer words published at root 0. */
  private static long table(Pool pool) {
    Allocator a = pool.allocator();
    Reservation t = a.reserve(512);
    pool.memory().asSlice(t.offset(), 512).fill((byte) 0);
    pool.persistence().flush(t.offset(), 512);
    a.publish(t, pool.rootWord(0));
    return t.offset();
  }

  private static Map<Long, Long> owned(Allocator a) {
    Map<Long, Long> m = new TreeMap<>();
    a.forEachOwned((off, size) -> assertNull(m.put(off, size), "block listed twice"));
    return m;
  }

  @Test
  void reservePublishCancelFree() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), small())) {
      Allocator a = pool.allocator();
      a.useDeferredFree(a.graceQueue()); // this test ends grace periods by hand
      long table = table(pool);
      assertEquals(table, pool.root(0));
      Reservation r = a.reserve(100);
      assertTrue(r.size() >= 100);
      assertEquals(0, r.offset() % 64, "blocks of 64 bytes and more are cache-line aligned");
      assertFalse(a.owned(r.offset()), "reserved is not owned");
      pool.memory().set(U64, r.offset(), 42L);
      a.publish(r, table);
      assertTrue(r.isPublished());
      assertTrue(a.owned(r.offset()));
      assertEquals(r.offset(), pool.memory().get(U64, table));
      assertThrows(IllegalStateException.class, () -> a.publish(r, table + 8), "published twice");
      assertThrows(IllegalStateException.class, () -> a.cancel(r));

      Reservation c = a.reserve(100);
      assertNotEquals(r.offset(), c.offset());
      a.cancel(c);
      assertFalse(a.owned(c.offset()));
      assertEquals(c.offset(), a.reserve(100).offset(), "a cancelled block is reused at once");

      AllocatorStats before = a.stats();
      assertEquals(2, before.blocksOwned());
      a.free(r.offset());
      assertFalse(a.owned(r.offset()));
      assertThrows(IllegalArgumentException.class, () -> a.free(r.offset()), "double free");
      assertEquals(1, a.graceQueue().pending());
      assertEquals(1, a.stats().blocksOwned());
      assertEquals(1, a.graceQueue().releaseRetired());
      assertThrows(IllegalArgumentException.class, () -> a.free(r.offset() + 16), "not a block start");
    }
  }

  @Test
  void sizeClassesAndAlignment() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), small())) {
      Allocator a = pool.allocator();
      long[] classes = a.sizeClasses();
      assertEquals(16, classes[0]);
      assertEquals(a.maxRunBlockSize(), classes[classes.length - 1]);
      assertEquals((64 << 10) / 8, a.maxRunBlockSize());
      for (long size : new long[] {1, 15, 16, 17, 33, 48, 49, 64, 65, 200, 1000, 3000, 5000, 8192}) {
        Reservation r = a.reserve(size);
        assertTrue(r.size() >= size);
        assertEquals(0, r.offset() % (r.size() >= 64 ? 64 : 16), size + " -> " + r);
        assertTrue(r.size() < 2 * size + 16, "class waste for " + size + ": " + r.size());
        a.cancel(r);
      }
      for (long c : classes) {
        assertEquals(c, a.reserve(c).size());
      }
    }
  }

  @Test
  void hugeBlocksSpanChunksAndAreReused() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), small())) {
      Allocator a = pool.allocator();
      a.useDeferredFree(a.graceQueue()); // this test ends grace periods by hand
      long table = table(pool);
      long size = 3L << 20;
      Reservation h = a.reserve(size);
      assertTrue(h.size() >= size);
      assertEquals(0, h.offset() % 64);
      assertTrue(pool.size() >= h.offset() + h.size(), "pool grew to hold it");
      pool.memory().set(U64, h.offset() + size - 8, 7L);
      a.publish(h, table);
      assertTrue(a.owned(h.offset()));
      AllocatorStats s = a.stats();
      assertEquals(1, s.hugeBlocksOwned());
      assertEquals(h.size(), s.bytesOwned() - 512);
      try (Publication p = a.begin()) {
        p.deferFree(h.offset()).set(table, 0);
        p.commit();
      }
      a.graceQueue().releaseRetired();
      assertEquals(0, a.stats().hugeBlocksOwned());
      Reservation small = a.reserve(1 << 20);
      assertEquals(h.offset(), small.offset(), "the free span is split and reused");
      Reservation rest = a.reserve(1 << 20);
      assertTrue(rest.offset() > small.offset() && rest.offset() < h.offset() + h.size());
      a.cancel(small);
      a.cancel(rest);
      assertEquals(h.offset(), a.reserve(size).offset(), "free spans merge again");
    }
  }

  @Test
  void growthKeepsBlocksDistinct() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), small())) {
      Allocator a = pool.allocator();
      long table = table(pool);
      long size0 = pool.size();
      TreeMap<Long, Long> seen = new TreeMap<>();
      for (int i = 0; i < 200; i++) {
        Reservation r = a.reserve(4000 + 37 * i);
        Map.Entry<Long, Long> below = seen.floorEntry(r.offset());
        assertTrue(below == null || below.getValue() <= r.offset(), "overlap at " + r);
        seen.put(r.offset(), r.offset() + r.size());
        if (i < 60) {
          a.publish(r, table + 8L * i);
        }
      }
      assertTrue(pool.size() > size0, "the pool grew");
      assertEquals(61, a.stats().blocksOwned());
    }
  }

  @Test
  void poolFullChangesNothing() throws Exception {
    PoolOptions o = small().withMaxSize(512 << 10);
    try (Pool pool = Pool.create(dir.resolve("p"), o)) {
      Allocator a = pool.allocator();
      long table = table(pool);
      AllocatorStats before = a.stats();
      long size = pool.size();
      long hw = pool.memory().get(U64, pool.allocatorWord(0));
      assertThrows(PoolFullException.class, () -> a.reserve(1 << 20));
      assertEquals(before, a.stats());
      assertEquals(size, pool.size());
      assertEquals(hw, pool.memory().get(U64, pool.allocatorWord(0)));
      int n = 0;
      try {
        for (;; n++) {
          a.reserve(8192);
        }
      } catch (PoolFullException expected) {
        // the heap is full of runs
      }
      assertTrue(n > 10);
      assertEquals(before.blocksOwned(), a.stats().blocksOwned(), "reservations own nothing");
      assertEquals(table, pool.root(0));
    }
  }

  @Test
  void reopenLoadsChunksLazilyAndNeverHandsOutAnOwnedBlock() throws Exception {
    Path file = dir.resolve("p");
    Map<Long, Long> ownedBefore;
    try (Pool pool = Pool.create(file, small())) {
      Allocator a = pool.allocator();
      long table = table(pool);
      for (int i = 0; i < 63; i++) {
        Reservation r = a.reserve(i % 3 == 0 ? 48 : i % 3 == 1 ? 1000 : 100_000);
        a.publish(r, table + 8L * i);
      }
      for (int i = 0; i < 63; i += 4) {
        long b = pool.memory().get(U64, table + 8L * i);
        try (Publication p = a.begin()) {
          p.deferFree(b).set(table + 8L * i, 0);
          p.commit();
        }
      }
      ownedBefore = owned(a);
    }
    try (Pool pool = Pool.open(file, small())) {
      Allocator a = pool.allocator();
      assertEquals(ownedBefore, owned(a));
    }
    try (Pool pool = Pool.open(file, small())) {
      Allocator a = pool.allocator();
      for (int i = 0; i < 300; i++) {
        Reservation r = a.reserve(i % 3 == 0 ? 48 : i % 3 == 1 ? 1000 : 100_000);
        Map.Entry<Long, Long> below = ((TreeMap<Long, Long>) ownedBefore).floorEntry(r.offset() + r.size() - 1);
        assertTrue(below == null || below.getKey() + below.getValue() <= r.offset(), "reserved " + r + " overlaps owned block " + below);
      }
    }
  }

  @Test
  void concurrentReserveCancelPublishFreeNeverHandsOutABlockTwice() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), small().withGeometry(8, 1024, 64 << 10))) {
      Allocator a = pool.allocator();
      a.useDeferredFree(a.graceQueue()); // this test ends grace periods by hand
      long table = table(pool);
      int threads = 8;
      int rounds = 3000;
      // the model: blocks held (reserved or owned) by some thread, as [offset, end)
      TreeMap<Long, Long> held = new TreeMap<>();
      ConcurrentHashMap<Long, Integer> heldBy = new ConcurrentHashMap<>();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      CyclicBarrier start = new CyclicBarrier(threads);
      List<Thread> ts = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        final int id = t;
        ts.add(Thread.ofPlatform().start(() -> {
          try {
            start.await();
            long slot = table + 8L * id;
            java.util.SplittableRandom rnd = new java.util.SplittableRandom(id);
            for (int i = 0; i < rounds; i++) {
              long size = rnd.nextInt(4) == 0 ? 16 : rnd.nextInt(1, 3000);
              Reservation r = a.reserve(size);
              synchronized (held) {
                Map.Entry<Long, Long> below = held.floorEntry(r.offset() + r.size() - 1);
                if (below != null && below.getValue() > r.offset()) {
                  throw new AssertionError("thread " + id + " got " + r + " overlapping held [" + below.getKey() + ", " + below.getValue() + ") of thread " + heldBy.get(below.getKey()));
                }
                held.put(r.offset(), r.offset() + r.size());
                heldBy.put(r.offset(), id);
              }
              if (rnd.nextBoolean()) {
                synchronized (held) {
                  held.remove(r.offset());
                }
                a.cancel(r);
              } else {
                a.publish(r, slot);
                synchronized (held) {
                  held.remove(r.offset()); // this thread lets go of it before freeing it
                }
                a.free(r.offset());
                if (i % 64 == 0) {
                  // no thread holds a pointer to a retired block: the grace period is over
                  a.graceQueue().releaseRetired();
                }
              }
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        }));
      }
      for (Thread t : ts) {
        t.join();
      }
      if (failure.get() != null) {
        throw new AssertionError(failure.get());
      }
      a.graceQueue().releaseRetired();
      assertEquals(1, a.stats().blocksOwned(), "only the table is owned");
      assertEquals(Map.of(table, 512L), owned(a));
    }
  }
}
