package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Pins a defect the bad-input fuzz test (pmhash-stress MutatedPoolFuzzTest) found: open checked
 * the directory offset but not the global depth stored in the directory, so a damaged depth made
 * the directory reach past the pool, and every lookup then waited for ever for a pool growth
 * that never comes (locate answers "beyond the mapping: retry"). Open now refuses such a pool
 * with a {@link CorruptPoolException}. (Since issue 9 the refused file is also left byte for
 * byte unchanged: {@code Pool.closeRefused}; see DashEhDamagedPoolTest.)
 */
class DashDirectoryPastThePoolTest {
  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(ints = {-1, 25, 32, 0x7fff_ffff})
  void aDirectoryDepthReachingPastThePoolIsRefusedAtOpen(int depth) throws Exception {
    Path file = dir.resolve("t.pool");
    try (LongHashTable t = PmHash.create(file, TableOptions.scheme("dash-eh").withDurability(Durability.PROCESS))) {
      for (long k = 0; k < 3_000; k++) {
        t.put(k, k);
      }
    }
    try (Pool pool = Pool.open(file, PoolOptions.defaults().withDurability(Durability.PROCESS)
        .withScheme(DashEhProvider.NAME, DashLayout.LAYOUT_VERSION))) {
      MemorySegment m = pool.memory();
      long directory = (long) DashLayout.LONG.get(m, pool.root(0) + DashLayout.HDR_DIRECTORY);
      DashLayout.INT.set(m, directory + DashLayout.DIR_DEPTH, depth);
    }
    CorruptPoolException e = assertThrows(CorruptPoolException.class, () -> PmHash.open(file, TableOptions.any()));
    assertTrue(e.getMessage().contains("global depth " + depth), e::getMessage);
  }

  @Test
  void anIntactDirectoryStillOpens() throws Exception {
    Path file = dir.resolve("ok.pool");
    try (LongHashTable t = PmHash.create(file, TableOptions.scheme("dash-eh").withDurability(Durability.PROCESS))) {
      for (long k = 0; k < 3_000; k++) {
        t.put(k, k);
      }
    }
    try (LongHashTable t = PmHash.open(file, TableOptions.any())) {
      assertEquals(3_000, t.size());
      assertEquals(2_999, t.get(2_999, -1));
    }
  }
}
