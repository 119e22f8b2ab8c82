package io.pmhash.core.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The negative control of the crash harness: a one-word commit protocol. Data word D and commit
 * word C lie in different cache lines; the invariant is "C == 1 implies D == 42", and a completed
 * operation must have C == 1. Storing and persisting D before C passes at every crash point and
 * image; persisting C before D (the bug {@code LevelTokenBeforeDataTest} pins in a real scheme)
 * must be reported.
 */
class CommitBeforeDataIsCaughtTest {
  private static final long DATA = 42;

  @TempDir Path dir;

  private static final CrashHarness.Verifier VERIFIER =
      (pool, point) -> {
        long d = Raw.get(pool, Raw.line(pool, 0));
        long c = Raw.get(pool, Raw.line(pool, 2));
        if (c == 1 && d != DATA) {
          throw new AssertionError("commit word is set but the data word is " + d);
        }
        if (point.opsCompleted() == 1 && c != 1) {
          throw new AssertionError("the completed commit was lost");
        }
      };

  /** Correct: store D, persist D, release-store C, persist C. */
  private static final CrashHarness.Workload DATA_FIRST =
      (pool, ops) -> {
        long d = Raw.line(pool, 0);
        long c = Raw.line(pool, 2);
        ops.begin(0);
        Raw.set(pool, d, DATA);
        pool.persistence().persist(d, 8); // PERSIST: data durable before the commit that publishes it
        Raw.setRelease(pool, c, 1);
        pool.persistence().persist(c, 8);
        ops.end(0);
      };

  /** Broken: store D, store C, persist C, persist D: the commit may be durable without its data. */
  private static final CrashHarness.Workload COMMIT_FIRST =
      (pool, ops) -> {
        long d = Raw.line(pool, 0);
        long c = Raw.line(pool, 2);
        ops.begin(0);
        Raw.set(pool, d, DATA);
        Raw.setRelease(pool, c, 1);
        pool.persistence().persist(c, 8);
        pool.persistence().persist(d, 8);
        ops.end(0);
      };

  @Test
  void dataBeforeCommitPassesAtEveryDrainAndImage() {
    CrashHarness.Report r = CrashHarness.builder(dir, Raw.OPTIONS)
        .images(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE)
        .randomImages(8, 7L)
        .crashDuringRecovery(true)
        .run(DATA_FIRST, VERIFIER);
    assertEquals(3, r.crashPoints(), r.summary()); // two drains and the end
    assertTrue(r.imagesChecked() >= 6, r.summary());
    assertTrue(r.recoveryCrashPoints() > 0, r.summary());
  }

  @Test
  void commitBeforeDataIsCaught() {
    CrashHarness.Report r = CrashHarness.builder(dir, Raw.OPTIONS)
        .images(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE)
        .randomImages(8, 7L)
        .collect(COMMIT_FIRST, VERIFIER);
    assertFalse(r.passed(), r.summary());
    // Crash before the drain of C: C's line alone written back (the heap starts at 64 KiB here).
    assertTrue(r.failures().stream().anyMatch(f -> f.point().kind() == ImageKind.EACH_LINE
        && f.point().drainIndex() == 0 && f.point().inFlightOp().getAsLong() == 0
        && f.point().line() == (64 << 10) + 128), r.summary());
    // Crash before the drain of D: C durable, D not.
    assertTrue(r.failures().stream().anyMatch(f -> f.point().kind() == ImageKind.DRAINED
        && f.point().drainIndex() == 1), r.summary());
    assertEquals(0, r.failures(ImageKind.ALL_PENDING), r.summary());
    // Random images with the same words as the failing EACH_LINE image are skipped as duplicates.
    assertEquals(2, r.failureCount(), r.summary());
    assertThrows(AssertionError.class, () -> CrashHarness.builder(dir, Raw.OPTIONS).run(COMMIT_FIRST, VERIFIER));
  }

  @Test
  void allPendingAloneCannotSeeAnOrderingBug() {
    // Every pending word at its current value is memory as it is: it checks that the final
    // state recovers, not the order of persists. This is why EACH_LINE and RANDOM exist.
    CrashHarness.Report r = CrashHarness.builder(dir, Raw.OPTIONS)
        .images(ImageKind.ALL_PENDING)
        .collect(COMMIT_FIRST, VERIFIER);
    assertTrue(r.passed(), r.summary());
  }

  @Test
  void failureMessageNamesDrainOpKindAndSeed() {
    AssertionError e = assertThrows(AssertionError.class, () -> CrashHarness.builder(dir, Raw.OPTIONS)
        .images(ImageKind.RANDOM)
        .randomImages(16, 0xC0FFEEL)
        .run(COMMIT_FIRST, VERIFIER));
    String m = e.getMessage();
    assertTrue(m.contains("drain 0 (0 ops completed, op 0 in flight), image RANDOM seed 0x"), m);
    assertTrue(m.contains("seed 0xc0ffee"), m);
    assertTrue(m.contains("onlyDrain"), m);
    assertTrue(e.getCause() instanceof AssertionError, String.valueOf(e.getCause()));
  }
}
