package io.pmhash.core.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Persistence;
import io.pmhash.core.PersistenceStats;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.alloc.Allocator;
import io.pmhash.core.alloc.Reservation;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recovery touches only the lanes: opening a pool with an in-flight redo step in a lane costs the
 * same flushes and drains whether the heap is small or 16 times larger.
 */
class RecoveryCostTest {
  @TempDir Path dir;

  /** Counts like every persistence; throws at one chosen drain, to leave a step half done. */
  static final class Failing extends Persistence {
    long failAt = -1;
    long drainsSeen;

    @Override
    protected void flushLines(long offset, long length) {}

    @Override
    protected void drainFlushes() {
      if (++drainsSeen == failAt) {
        throw new IllegalStateException("simulated failure at drain " + drainsSeen);
      }
    }

    @Override
    public String describe() {
      return "counting, failing on request";
    }
  }

  private PersistenceStats openCost(String name, long heapBytes) throws Exception {
    Path file = dir.resolve(name);
    Failing f = new Failing();
    PoolOptions o = PoolOptions.defaults().withScheme("cost", 1).withGeometry(4, 1024, 64 << 10)
        .withInitialSize(heapBytes).withPersistence(() -> f);
    try (Pool pool = Pool.create(file, o)) {
      Allocator a = pool.allocator();
      Reservation table = a.reserve(64);
      a.publish(table, pool.rootWord(0));
      // fill most of the heap with owned blocks
      for (long used = 0; used < heapBytes * 3 / 4; used += 32 << 10) {
        a.publish(a.reserve(30 << 10), table.offset());
      }
      Reservation r = a.reserve(100);
      f.failAt = f.drainsSeen + 3; // entries and commit word durable, actions not yet
      assertThrows(IllegalStateException.class, () -> a.publish(r, table.offset() + 8));
      f.failAt = -1;
    }
    Failing g = new Failing();
    try (Pool pool = Pool.open(file, PoolOptions.defaults().withPersistence(() -> g))) {
      PersistenceStats cost = pool.persistence().stats();
      assertTrue(pool.allocator().owned(pool.memory().get(java.lang.foreign.ValueLayout.JAVA_LONG, pool.root(0) + 8)), "the in-flight publish was replayed");
      return cost;
    }
  }

  @Test
  void openCostDoesNotDependOnPoolSize() throws Exception {
    PersistenceStats small = openCost("small", 1 << 20);
    PersistenceStats large = openCost("large", 16 << 20);
    System.out.println("RecoveryCostTest: open of a 1 MiB pool " + small + ", of a 16 MiB pool " + large);
    assertEquals(small, large, "flushes and drains of open with one replayed lane");
    assertTrue(small.drains() >= 3, "open persisted its marker and replayed the lane: " + small);
  }
}
