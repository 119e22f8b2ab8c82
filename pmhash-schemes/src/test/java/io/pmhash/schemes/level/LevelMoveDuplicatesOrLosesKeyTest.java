package io.pmhash.schemes.level;

import static io.pmhash.schemes.level.LevelCrashTest.firstInsertChanging;
import static io.pmhash.schemes.level.LevelCrashTest.inserts;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.crash.CrashHarness;
import io.pmhash.schemes.contract.CrashModel.Op;
import io.pmhash.schemes.level.LevelTable.Levels;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pins the published defect "moving a key set the new token and cleared the old one in two
 * separate persists: a crash left the key twice". Here the copy is published before the
 * original is retracted, so a crash between them leaves a duplicate, which recovery must remove;
 * retracting first would lose the key. Crashes at every drain of an insert that moves a record,
 * checks that the durable image of some crash point holds the moved key twice (the window is
 * reached) and that after recovery every key is there exactly once.
 *
 * <p>Mutation check, done by hand: swapping steps 2 and 3 of {@code LevelBucket.move} (retract,
 * then publish the copy) makes this test fail with a lost key; making {@code LevelRecovery}
 * keep duplicates makes it fail with "key ... twice".
 */
class LevelMoveDuplicatesOrLosesKeyTest {
  @TempDir Path dir;

  @Test
  void aCrashInAMovementLeavesTheKeyOnceAfterRecovery() {
    int moveAt = firstInsertChanging(t -> t.moves.get());
    List<Op> setup = inserts(0, moveAt);
    List<Op> work = inserts(moveAt, moveAt + 1);
    AtomicInteger imagesWithDuplicate = new AtomicInteger();
    CrashHarness.Verifier check = LevelCrashSupport.verifier(setup, work);
    CrashHarness.Report r = LevelCrashSupport.builder(dir, 0, setup, true)
        .run(LevelCrashSupport.workload(work), (pool, point) -> {
          if (!point.duringRecovery() && durableDuplicates(pool) > 0) {
            imagesWithDuplicate.incrementAndGet();
          }
          check.verify(pool, point);
        });
    System.out.println("LevelMoveDuplicatesOrLosesKeyTest: " + r.summary() + ", images with a duplicate before recovery: " + imagesWithDuplicate);
    assertTrue(imagesWithDuplicate.get() > 0, "some crash image holds the moved key twice before recovery");
  }

  /** Counts keys found twice in the image, before recovery touches it. */
  static int durableDuplicates(Pool pool) {
    Levels l = LevelRecovery.validate(pool, pool.root(0));
    MemorySegment m = pool.memory();
    Set<Long> keys = new HashSet<>();
    int dup = 0;
    for (int level = 0; level < 2; level++) {
      long base = level == 0 ? l.top() : l.bottom();
      for (long i = 0; i < 1L << (l.k() - level); i++) {
        long b = LevelTable.bucket(base, i);
        long tok = LevelBucket.tokenAcquire(m, b);
        while (tok != 0) {
          int s = Long.numberOfTrailingZeros(tok);
          tok &= tok - 1;
          dup += keys.add(LevelBucket.key(m, b, s)) ? 0 : 1;
        }
      }
    }
    return dup;
  }
}
