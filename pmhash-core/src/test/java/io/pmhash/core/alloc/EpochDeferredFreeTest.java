package io.pmhash.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** By default a freed block is reused only after every reader inside the pool's epoch left. */
class EpochDeferredFreeTest {
  @TempDir Path dir;

  @Test
  void freedBlockWaitsForTheReaderInsideThenIsReused() throws Exception {
    PoolOptions o = PoolOptions.defaults().withScheme("test", 1).withInitialSize(1 << 20).withGeometry(2, 1024, 64 << 10);
    try (Pool pool = Pool.create(dir.resolve("p"), o)) {
      Allocator a = pool.allocator();
      Reservation table = a.reserve(64);
      a.publish(table, pool.rootWord(0));
      Reservation r = a.reserve(48);
      a.publish(r, table.offset());

      CountDownLatch inside = new CountDownLatch(1);
      CountDownLatch leave = new CountDownLatch(1);
      Thread reader = Thread.ofPlatform().start(() -> {
        pool.epochs().enter();
        inside.countDown();
        try {
          leave.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        pool.epochs().exit();
      });
      inside.await();
      try (Publication p = a.begin()) {
        p.set(table.offset(), 0).deferFree(r.offset()).commit();
      }
      assertFalse(a.owned(r.offset()), "free is durable at once");
      Reservation whileReading = a.reserve(48);
      assertNotEquals(r.offset(), whileReading.offset(), "not reused while a reader may hold it");
      a.cancel(whileReading);

      leave.countDown();
      reader.join();
      pool.epochs().reclaim();
      pool.epochs().reclaim();
      assertEquals(0, pool.epochs().pending());
      assertEquals(r.offset(), a.reserve(48).offset(), "reused once the reader left");
    }
  }
}
