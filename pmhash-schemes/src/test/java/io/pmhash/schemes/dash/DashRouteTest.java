package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.PoolFullException;
import io.pmhash.core.PoolOptions;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.Routes;
import io.pmhash.schemes.internal.DirectoryRoute;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dash-EH's DRAM route to the directory ({@link DirectoryRoute}): it names the published
 * directory and its depth whenever no doubling or halving is in flight, it is 0 while one is, and
 * a table whose route is 0 routes every operation through the table header and stays correct.
 */
class DashRouteTest {
  @TempDir Path dir;

  @Test
  void theRouteFollowsEveryDoublingAndHalving() {
    try (LongHashTable t = PmHash.createVolatile(TableOptions.scheme("dash-eh"))) {
      DashEhTable d = (DashEhTable) t;
      Routes.assertPublished(d.pool(), d.route, "at create");
      SplittableRandom r = new SplittableRandom(7);
      long[] keys = new long[40_000];
      long doublings = 0;
      for (int i = 0; i < keys.length; i++) {
        keys[i] = r.nextLong();
        t.put(keys[i], i);
        if (d.doublings.get() != doublings) {
          doublings = d.doublings.get();
          Routes.assertPublished(d.pool(), d.route, "after doubling " + doublings);
        }
      }
      assertTrue(doublings >= 5, "doublings " + doublings);
      assertEquals(d.globalDepth(), DirectoryRoute.depthOf(d.route.get()), "the route's depth");
      long halvings = 0;
      for (int i = 0; i < keys.length - 100; i++) {
        assertTrue(t.remove(keys[i]));
        if (d.halvings.get() != halvings) {
          halvings = d.halvings.get();
          Routes.assertPublished(d.pool(), d.route, "after halving " + halvings);
        }
      }
      assertTrue(halvings > 0, "halvings " + halvings);
      for (int i = keys.length - 100; i < keys.length; i++) {
        assertEquals(i, t.get(keys[i], -1), "key " + i);
      }
    }
  }

  @Test
  void withTheRouteClearedEveryOperationGoesThroughTheHeaderAndStaysCorrect() {
    try (LongHashTable t = PmHash.createVolatile(TableOptions.scheme("dash-eh"))) {
      DashEhTable d = (DashEhTable) t;
      Map<Long, Long> model = new HashMap<>();
      SplittableRandom r = new SplittableRandom(11);
      for (int i = 0; i < 5_000; i++) {
        long k = r.nextLong();
        t.put(k, i);
        model.put(k, (long) i);
      }
      d.route.changing(); // as while a doubling or halving is in flight
      assertEquals(0, d.route.get());
      for (int i = 0; i < 5_000; i++) {
        long k = r.nextLong();
        t.put(k, i);
        model.put(k, (long) i);
      }
      DashEhTableTest.checkAgainst(t, model);
      DashEhTableTest.randomOps(t, model, 12, 10_000, 20_000);
      DashEhTableTest.checkAgainst(t, model);
      d.route.published(d.pool().memory());
      Routes.assertPublished(d.pool(), d.route, "after the change");
      DashEhTableTest.checkAgainst(t, model);
    }
  }

  @Test
  void aFullPoolLeavesTheRouteOnThePublishedDirectory() throws Exception {
    PoolOptions pool = PoolOptions.defaults().withInitialSize(4L << 20).withMaxSize(4L << 20);
    try (LongHashTable t = PmHash.create(dir.resolve("full.pool"), TableOptions.scheme("dash-eh").withPoolOptions(pool))) {
      DashEhTable d = (DashEhTable) t;
      Map<Long, Long> model = new HashMap<>();
      SplittableRandom r = new SplittableRandom(13);
      assertThrows(PoolFullException.class, () -> {
        for (long i = 0; ; i++) {
          long k = r.nextLong();
          t.put(k, i);
          model.put(k, i);
        }
      });
      assertNotEquals(0, d.route.get(), "a failed structural change left the route cleared");
      Routes.assertPublished(d.pool(), d.route, "after the change");
      DashEhTableTest.checkAgainst(t, model);
    }
  }
}
