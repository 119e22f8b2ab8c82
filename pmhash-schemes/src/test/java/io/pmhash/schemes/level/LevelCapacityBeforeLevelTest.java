package io.pmhash.schemes.level;

import static io.pmhash.schemes.level.LevelCrashSupport.crash;
import static io.pmhash.schemes.level.LevelCrashSupport.dryRun;
import static io.pmhash.schemes.level.LevelCrashTest.firstInsertChanging;
import static io.pmhash.schemes.level.LevelCrashTest.inserts;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pins the published defect "resize published the new capacity before the new buckets existed":
 * a crash then left a header naming a level that was not built, and the records of the old
 * bottom level were lost. Here the new top level is rehashed and persisted first, and top,
 * bottom and k are published together in one allocator step. Crashes at every drain of the two
 * resizes from k = 2 to k = 4 (and of their recovery), and checks every record and that exactly
 * the header and two levels are owned.
 *
 * <p>Mutation check, done by hand: committing the publication of {@code LevelResize.expand}
 * before the rehash loop (capacity first) makes this test fail with lost keys.
 */
class LevelCapacityBeforeLevelTest {
  @TempDir Path dir;

  @Test
  void aResizeIsAllOrNothing() {
    int first = firstInsertChanging(t -> t.resizes.get());
    LevelTable t = dryRun(0, inserts(0, first + 1), List.of());
    assertEquals(1, t.resizes.get());
    crash(dir, "capacity before level", 0, inserts(0, first), inserts(first, first + 1), true);
  }
}
