package io.pmhash.core.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.PersistenceStats;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.alloc.Allocator;
import io.pmhash.core.alloc.Reservation;
import io.pmhash.core.spi.PoolBackend;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogTest {
  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;

  @TempDir Path dir;

  private static PoolOptions small(int lanes) {
    return PoolOptions.defaults().withScheme("log-test", 1).withDurability(Durability.PROCESS)
        .withGeometry(lanes, 1024, 64 << 10).withInitialSize(256 << 10);
  }

  private static long block(Pool pool, long size) {
    Allocator a = pool.allocator();
    Reservation r = a.reserve(size);
    pool.memory().asSlice(r.offset(), size).fill((byte) 0);
    a.publish(r, pool.rootWord(0));
    return r.offset();
  }

  @Test
  void redoAppliesSetOrAndNotWithFourDrains() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), small(2))) {
      long b = block(pool, 64);
      pool.memory().set(U64, b + 8, 0b1100);
      pool.memory().set(U64, b + 16, 0b1111);
      PersistenceStats before = pool.persistence().stats();
      try (Redo redo = pool.lanes().beginRedo()) {
        redo.set(b, 77).or(b + 8, 0b0011).andNot(b + 16, 0b0101);
        redo.commit();
      }
      PersistenceStats d = pool.persistence().stats().minus(before);
      assertEquals(4, d.drains(), "entries, commit word, actions, retire");
      assertEquals(77, pool.memory().get(U64, b));
      assertEquals(0b1111, pool.memory().get(U64, b + 8));
      assertEquals(0b1010, pool.memory().get(U64, b + 16));
      assertEquals(0, pool.memory().get(U64, pool.lanesOffset()), "commit word cleared");
    }
  }

  @Test
  void redoOverflowSaysTheLimitAndHowToRaiseIt() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), small(1))) {
      long b = block(pool, 1024);
      try (Redo redo = pool.lanes().beginRedo()) {
        for (int i = 0; i < redo.capacity(); i++) {
          redo.set(b + 8L * i, i);
        }
        LaneOverflowException e = assertThrows(LaneOverflowException.class, () -> redo.set(b, 1));
        assertTrue(e.getMessage().contains(redo.capacity() + " redo actions"), e.getMessage());
        assertTrue(e.getMessage().contains("PoolOptions.withGeometry"), e.getMessage());
      }
      assertThrows(IllegalArgumentException.class, () -> {
        try (Redo redo = pool.lanes().beginRedo()) {
          redo.set(pool.lanesOffset(), 1);
        }
      }, "the lanes are not a destination");
    }
  }

  @Test
  void txCommitKeepsAbortRestores() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), small(2))) {
      Allocator a = pool.allocator();
      long b = block(pool, 256);
      a.publish(a.reserve(48), b + 200); // an owned block to free
      long toFree = pool.memory().get(U64, b + 200);
      long allocated;
      try (Tx tx = pool.undoLog().begin()) {
        tx.snapshot(b, 16);
        pool.memory().set(U64, b, 1);
        allocated = tx.alloc(100);
        pool.memory().set(U64, allocated, 5);
        pool.memory().set(U64, b + 8, allocated);
        tx.free(toFree);
        assertTrue(a.owned(toFree), "a free takes effect at commit");
        assertFalse(a.owned(allocated), "an allocation takes effect at commit");
        tx.commit();
      }
      assertTrue(a.owned(allocated));
      assertFalse(a.owned(toFree));
      assertEquals(1, pool.memory().get(U64, b));

      long aborted;
      try (Tx tx = pool.undoLog().begin()) {
        tx.snapshot(b, 16);
        pool.memory().set(U64, b, 2);
        aborted = tx.alloc(100);
        pool.memory().set(U64, b + 8, aborted);
        tx.free(allocated);
        // closed without commit
      }
      assertEquals(1, pool.memory().get(U64, b), "rolled back");
      assertEquals(allocated, pool.memory().get(U64, b + 8));
      assertTrue(a.owned(allocated), "the free did not happen");
      assertFalse(a.owned(aborted), "the allocation did not happen");
    }
  }

  @Test
  void txSnapshotOfSeveralRangesDrainsOnceAndRollsEachBack() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), small(2))) {
      long b = block(pool, 512);
      long[] offsets = {b, b + 128, b + 320};
      long[] lengths = {8, 16, 40};
      for (int i = 0; i < 3; i++) {
        pool.memory().asSlice(offsets[i], lengths[i]).fill((byte) (i + 1));
      }
      try (Tx tx = pool.undoLog().begin()) {
        PersistenceStats before = pool.persistence().stats();
        tx.snapshot(offsets, lengths, 3);
        assertEquals(1, pool.persistence().stats().minus(before).drains(), "three entries, one drain");
        for (int i = 0; i < 3; i++) {
          pool.memory().asSlice(offsets[i], lengths[i]).fill((byte) 9);
        }
        // closed without commit
      }
      for (int i = 0; i < 3; i++) {
        for (long j = 0; j < lengths[i]; j++) {
          assertEquals((byte) (i + 1), pool.memory().get(ValueLayout.JAVA_BYTE, offsets[i] + j), "range " + i + " byte " + j);
        }
      }
      try (Tx tx = pool.undoLog().begin()) {
        tx.snapshot(offsets, lengths, 3);
        pool.memory().set(U64, b + 320, 77);
        tx.commit();
      }
      assertEquals(77, pool.memory().get(U64, b + 320), "committed");
    }
  }

  /**
   * A free waits for the readers inside an epoch; a free without grace is handed out again as
   * soon as its transaction commits. Blocks of two chunks (spans), which a reserve of the same
   * size gets back whenever they are free.
   */
  @Test
  void aFreeWithoutGraceIsReusedAtOnceAFreeWaitsForTheReaders() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), small(2))) {
      Allocator a = pool.allocator();
      long size = 100_000;
      long root = block(pool, 64);
      pool.epochs().enter(); // a reader that may still read a block freed with grace
      try {
        for (boolean grace : new boolean[] {true, false}) {
          Reservation r = a.reserve(size);
          a.publish(r, root);
          long pending = pool.epochs().pending();
          try (Tx tx = pool.undoLog().begin()) {
            tx.snapshot(root, 8);
            pool.memory().set(U64, root, 0);
            if (grace) {
              tx.free(r.offset());
            } else {
              tx.freeWithoutGrace(r.offset());
            }
            tx.commit();
          }
          assertFalse(a.owned(r.offset()));
          assertEquals(pending + (grace ? 1 : 0), pool.epochs().pending(), "retired to the epochs: " + grace);
          Reservation again = a.reserve(size);
          assertEquals(!grace, again.offset() == r.offset(), "handed out again at once: " + !grace);
          a.cancel(again);
        }
      } finally {
        pool.epochs().exit();
      }
    }
  }

  @Test
  void txOverflowSaysTheLimitAndRollsBackOnClose() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), small(1))) {
      long b = block(pool, 2048);
      pool.memory().set(U64, b, 9);
      try (Tx tx = pool.undoLog().begin()) {
        tx.snapshot(b, 8);
        pool.memory().set(U64, b, 10);
        LaneOverflowException e = assertThrows(LaneOverflowException.class, () -> tx.snapshot(b + 64, 1024));
        assertTrue(e.getMessage().contains("of the lane's " + pool.undoLog().capacityBytes()), e.getMessage());
        assertTrue(e.getMessage().contains("PoolOptions.withGeometry"), e.getMessage());
      }
      assertEquals(9, pool.memory().get(U64, b));
    }
  }

  @Test
  void aThreadWaitsForABusyLane() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), small(1))) {
      long b = block(pool, 64);
      AtomicLong seen = new AtomicLong(-1);
      CountDownLatch started = new CountDownLatch(1);
      Thread other;
      try (Redo mine = pool.lanes().beginRedo()) {
        mine.set(b, 1);
        other = Thread.ofPlatform().start(() -> {
          started.countDown();
          try (Redo r = pool.lanes().beginRedo()) { // waits: the only lane is ours
            seen.set(pool.memory().get(U64, b));
            r.set(b, 2);
            r.commit();
          }
        });
        started.await();
        mine.commit();
      }
      other.join();
      assertEquals(1, seen.get(), "the second step ran after the first released the lane");
      assertEquals(2, pool.memory().get(U64, b));
    }
  }

  /** A backend's transactions come with its allocator: one without the other is refused. */
  @Test
  void backendTransactionsWithoutTheBackendsAllocatorAreRefused() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), small(1))) {
      PoolBackend.Transactions tx = new PoolBackend.Transactions() {
        @Override
        public void begin() {}

        @Override
        public void addRange(long offset, long length) {}

        @Override
        public void commit() {}

        @Override
        public void abort() {}

        @Override
        public String describe() {
          return "test transactions";
        }
      };
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> new UndoLog(pool.lanes(), pool.allocator(), tx, null));
      assertTrue(e.getMessage().contains("both or neither"), e.getMessage());
    }
  }
}
