package io.pmhash.core.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash during recovery: a two-word update (D1, D2 from 7 to 8, equal at all times after
 * recovery) protected by a tiny undo log (old values L1, L2 and a valid flag V). Recovery rolls
 * back when V is set. Restoring the data before clearing V survives a crash during recovery;
 * clearing V first does not, and only crashing the recovery itself shows it.
 */
class MisorderedRecoveryIsCaughtTest {
  @TempDir Path dir;

  private static long log(Pool p) {
    return Raw.line(p, 0); // L1 at +0, L2 at +8
  }

  private static long valid(Pool p) {
    return Raw.line(p, 1);
  }

  private static long d1(Pool p) {
    return Raw.line(p, 2);
  }

  private static long d2(Pool p) {
    return Raw.line(p, 4);
  }

  private static final CrashHarness.Setup SETUP =
      pool -> {
        Raw.set(pool, d1(pool), 7);
        Raw.set(pool, d2(pool), 7);
        pool.persistence().persist(d1(pool), 8);
        pool.persistence().persist(d2(pool), 8);
      };

  private static final CrashHarness.Workload UPDATE =
      (pool, ops) -> {
        Persistence p = pool.persistence();
        ops.begin(0);
        Raw.set(pool, log(pool), Raw.get(pool, d1(pool)));
        Raw.set(pool, log(pool) + 8, Raw.get(pool, d2(pool)));
        p.persist(log(pool), 16); // PERSIST: old values durable before the log is valid
        Raw.setRelease(pool, valid(pool), 1);
        p.persist(valid(pool), 8); // PERSIST: log valid before the data changes
        Raw.set(pool, d1(pool), 8);
        p.persist(d1(pool), 8);
        Raw.set(pool, d2(pool), 8);
        p.persist(d2(pool), 8);
        Raw.setRelease(pool, valid(pool), 0);
        p.persist(valid(pool), 8); // PERSIST: commit
        ops.end(0);
      };

  /** Roll back: restore and persist the data, then clear the log. */
  static void recoverCorrectly(Pool pool) {
    if (Raw.get(pool, valid(pool)) == 1) {
      Raw.set(pool, d1(pool), Raw.get(pool, log(pool)));
      Raw.set(pool, d2(pool), Raw.get(pool, log(pool) + 8));
      pool.persistence().persist(d1(pool), 8);
      pool.persistence().persist(d2(pool), 8); // PERSIST: data restored before the log is dropped
      Raw.setRelease(pool, valid(pool), 0);
      pool.persistence().persist(valid(pool), 8);
    }
  }

  /** Broken: drops the log before the restored data is durable. */
  static void recoverLogFirst(Pool pool) {
    if (Raw.get(pool, valid(pool)) == 1) {
      Raw.setRelease(pool, valid(pool), 0);
      pool.persistence().persist(valid(pool), 8);
      Raw.set(pool, d1(pool), Raw.get(pool, log(pool)));
      Raw.set(pool, d2(pool), Raw.get(pool, log(pool) + 8));
      pool.persistence().persist(d1(pool), 8);
      pool.persistence().persist(d2(pool), 8);
    }
  }

  private static CrashHarness.Verifier verifier(boolean correct) {
    return (pool, point) -> {
      if (correct) {
        recoverCorrectly(pool);
      } else {
        recoverLogFirst(pool);
      }
      CrashHarness.recovered(pool);
      long a = Raw.get(pool, d1(pool));
      long b = Raw.get(pool, d2(pool));
      if (a != b || (a != 7 && a != 8)) {
        throw new AssertionError("torn update after recovery: D1=" + a + " D2=" + b);
      }
      if (point.opsCompleted() == 1 && a != 8) {
        throw new AssertionError("completed update lost");
      }
    };
  }

  private CrashHarness.Builder harness() {
    return CrashHarness.builder(dir, Raw.OPTIONS).setup(SETUP).randomImages(4, 11L);
  }

  @Test
  void restoringBeforeDroppingTheLogSurvivesACrashDuringRecovery() {
    CrashHarness.Report r = harness().crashDuringRecovery(true).run(UPDATE, verifier(true));
    assertEquals(6, r.crashPoints(), r.summary()); // five drains and the end
    assertTrue(r.recoveryCrashPoints() > r.imagesChecked() / 2, r.summary());
  }

  @Test
  void droppingTheLogFirstPassesWithoutCrashingRecovery() {
    assertTrue(harness().crashDuringRecovery(false).collect(UPDATE, verifier(false)).passed());
  }

  @Test
  void droppingTheLogFirstIsCaughtByACrashDuringRecovery() {
    CrashHarness.Report r = harness().crashDuringRecovery(true).collect(UPDATE, verifier(false));
    assertFalse(r.passed(), r.summary());
    assertTrue(r.failures().stream().allMatch(f -> f.point().duringRecovery()), r.summary());
    CrashHarness.Failure f = r.failures().get(0);
    assertTrue(f.point().parent().inFlightOp().isPresent(), f.describe());
    assertTrue(f.describe().contains("then a crash during its recovery at recovery drain"), f.describe());
  }
}
