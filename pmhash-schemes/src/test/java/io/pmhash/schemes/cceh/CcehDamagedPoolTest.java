package io.pmhash.schemes.cceh;

import static io.pmhash.schemes.contract.DamagedPools.*;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.hash.Hashing;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.internal.ExtendibleDirectory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 9 for CCEH (the fuzz test at 5 000 cases found {@code CcehRecovery.run} following a
 * damaged split child): recovery validates the directory and every split child it will follow
 * before it writes anything, so a damaged crashed pool is refused and left as found; a segment
 * lock left set in a cleanly closed pool (recovery resets locks only after a crash) is reported
 * instead of spun on for ever.
 */
class CcehDamagedPoolTest {
  @TempDir Path dir;

  private record Table(Path file, long directory, int depth) {}

  private Table table(String name) throws Exception {
    Path file = dir.resolve(name);
    try (CcehTable t = (CcehTable) PmHash.create(file, TableOptions.scheme("cceh").withDurability(Durability.PROCESS))) {
      fill(t, 3_000);
      assertTrue(t.segmentOffsets().size() >= 4, "the table needs several segments");
      return new Table(file, t.directory(t.pool.memory()), t.globalDepth(t.pool.memory()));
    }
  }

  private static long entry(Table t, long i) {
    return t.directory() + ExtendibleDirectory.ENTRIES + 8 * i;
  }

  /** A copy of {@code t}'s file as a crash leaves it (open recovers it). */
  private Path crashed(Table t) throws Exception {
    Path crashed = dir.resolve("crashed-" + t.file().getFileName());
    try (LongHashTable live = PmHash.open(t.file(), reopen())) {
      live.put(key(9_000), 1);
      Files.copy(t.file(), crashed);
    }
    return crashed;
  }

  @Test
  void aCrashedPoolWithAnEntryOutsideTheHeapIsRefusedAndLeftAsFound() throws Exception {
    Table t = table("entry.pool");
    Path crashed = crashed(t);
    poke64(crashed, entry(t, (1L << t.depth()) - 1), 1L << 40);
    assertRefusedUnchanged(crashed, "cceh directory entry " + ((1L << t.depth()) - 1), "outside the heap");
  }

  @Test
  void aDamagedSplitChildIsRefusedBeforeRecoveryWrites() throws Exception {
    Table t = table("child.pool");
    Path crashed = crashed(t);
    long seg = peek64(crashed, entry(t, 0));
    poke64(crashed, seg + CcehLayout.SEG_CHILD, 12_345); // inside the pool header: not a segment
    assertRefusedUnchanged(crashed, "names a split child at 12345", "outside the heap");
  }

  @Test
  void aSplitChildOfTheWrongDepthIsRefused() throws Exception {
    Table t = table("depth.pool");
    Path crashed = crashed(t);
    long seg = peek64(crashed, entry(t, 0));
    long other = peek64(crashed, entry(t, 1L << t.depth() - 1));
    poke64(crashed, other + CcehLayout.SEG_SHAPE, CcehLayout.shape(t.depth() + 5, 0));
    poke64(crashed, seg + CcehLayout.SEG_CHILD, other);
    assertRefusedUnchanged(crashed, "names a split child at " + other, "does not follow");
  }

  @Test
  void aSegmentLockLeftSetInACleanPoolIsReportedNotSpunOn() throws Exception {
    Table t = table("lock.pool");
    long h = Hashing.hash(key(4));
    long seg = peek64(t.file(), entry(t, ExtendibleDirectory.prefix(h, t.depth())));
    poke64(t.file(), seg + CcehLayout.SEG_LOCK, CcehLayout.WRITER);
    try (LongHashTable open = PmHash.open(t.file(), reopen())) {
      assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
        assertCorruptOnUse(() -> open.get(key(4), -1), "cceh segment lock", "lock held for ever");
        assertCorruptOnUse(() -> open.put(key(4), 1), "cceh segment lock", "lock held for ever");
      });
    }
  }
}
