package io.pmhash.schemes.esh;

import static io.pmhash.schemes.contract.DamagedPools.fill;
import static io.pmhash.schemes.contract.DamagedPools.key;
import static io.pmhash.schemes.contract.DamagedPools.reopen;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The first walk over the segments after a crash recovers each stale segment it meets and goes
 * on from the entry it recovered ({@link EshTable#segmentOffsets}): it must list every segment
 * once, in hash order, as the walk over the live table did, and recover each exactly once.
 */
class EshRecoveryWalkTest {
  private static final int RECORDS = 20_000;

  @TempDir Path dir;

  @Test
  void theFirstWalkAfterACrashListsEverySegmentOnceAndRecoversEachOnce() throws Exception {
    Path file = dir.resolve("live.pool");
    Path crashed = dir.resolve("crashed.pool");
    long[] live;
    try (EshTable t = (EshTable) PmHash.create(file, TableOptions.scheme("esh").withDurability(Durability.PROCESS)
        .withParam(EshProvider.BUCKETS, 4))) {
      fill(t, RECORDS);
      live = t.segmentOffsets();
      Files.copy(file, crashed); // while open: every bucket's state is stale at the next open
    }
    assertTrue(live.length >= 64, "the walk needs many segments to go on from, had " + live.length);
    try (EshTable t = (EshTable) PmHash.open(crashed, reopen())) {
      assertEquals(0, t.recoveredSegments.get(), "open recovers nothing");
      assertArrayEquals(live, t.segmentOffsets(), "the first walk after the crash");
      assertEquals(live.length, t.recoveredSegments.get(), "each segment recovered once");
      assertArrayEquals(live, t.segmentOffsets(), "a second walk");
      assertEquals(live.length, t.recoveredSegments.get(), "nothing recovered twice");
      assertEquals(RECORDS, t.size());
      for (int i = 0; i < RECORDS; i += 97) {
        assertEquals(i, t.get(key(i), -1), "key " + i);
      }
    }
  }
}
