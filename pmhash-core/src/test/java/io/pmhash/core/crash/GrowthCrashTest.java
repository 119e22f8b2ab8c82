package io.pmhash.core.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A workload that grows the pool ({@link Pool#ensureSize}) and publishes data in the new region
 * through a pointer word in the old one: the images after the growth are of the grown size, and
 * the data is checked there.
 */
class GrowthCrashTest {
  private static final long DATA = 0xDA7AL;

  @TempDir Path dir;

  private static long pointerWord(Pool pool) {
    return Raw.line(pool, 2);
  }

  private static CrashHarness.Workload grow(boolean dataFirst) {
    return (pool, ops) -> {
      long old = pool.size();
      ops.begin(0);
      pool.ensureSize(old + 1);
      long data = old + 64;
      Raw.set(pool, data, DATA);
      if (dataFirst) {
        pool.persistence().persist(data, 8);
      }
      Raw.setRelease(pool, pointerWord(pool), data);
      pool.persistence().persist(pointerWord(pool), 8);
      if (!dataFirst) {
        pool.persistence().persist(data, 8);
      }
      ops.end(0);
    };
  }

  private static CrashHarness.Verifier verifier(List<CrashPoint> seen) {
    return (pool, point) -> {
      seen.add(point);
      assertEquals(point.imageSize(), pool.size(), point.describe());
      long ptr = Raw.get(pool, pointerWord(pool));
      if (ptr != 0) {
        assertTrue(ptr + 8 <= pool.size(), "pointer past the end of the pool: " + ptr);
        assertEquals(DATA, Raw.get(pool, ptr), "published data word");
      }
      if (point.opsCompleted() == 1) {
        assertTrue(ptr != 0, "completed publication lost");
      }
    };
  }

  @Test
  void growingThenPublishingDataFirstPasses() {
    List<CrashPoint> seen = new ArrayList<>();
    CrashHarness.Report r = CrashHarness.builder(dir, Raw.OPTIONS)
        .randomImages(4, 3L)
        .crashDuringRecovery(true)
        .run(grow(true), verifier(seen));
    assertEquals(4, r.crashPoints(), r.summary()); // file size, data, pointer, end
    long grown = (128 << 10) + (64 << 10); // growth adds a quarter, at least a chunk (64 KiB here)
    assertTrue(seen.stream().allMatch(p -> p.imageSize() == grown), seen.toString());
    // The header's file-size word is itself pending at the first drain: its DRAINED image
    // records the old size in a file of the new one, which open accepts.
    assertTrue(seen.stream().anyMatch(p -> p.drainIndex() == 0 && p.kind() == ImageKind.DRAINED), seen.toString());
  }

  @Test
  void publishingBeforeTheDataInTheGrownRegionIsCaught() {
    CrashHarness.Report r = CrashHarness.builder(dir, Raw.OPTIONS).collect(grow(false), verifier(new ArrayList<>()));
    assertFalse(r.passed(), r.summary());
    assertTrue(r.failures(ImageKind.EACH_LINE) > 0 && r.failures(ImageKind.DRAINED) > 0, r.summary());
  }
}
