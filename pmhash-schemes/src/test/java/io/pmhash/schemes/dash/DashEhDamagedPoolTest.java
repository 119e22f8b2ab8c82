package io.pmhash.schemes.dash;

import static io.pmhash.schemes.contract.DamagedPools.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.hash.Hashing;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 9 for Dash-EH: the defects the bad-input fuzz test (pmhash-stress MutatedPoolFuzzTest)
 * listed as known, pinned one damage at a time. Open validates the directory (every entry an
 * allocated segment block, covering its entries when the segment is current) and the side-link
 * chain (allocated blocks, no loop) and refuses a damaged pool with a {@link
 * io.pmhash.core.CorruptPoolException}, leaving the file unchanged; before, open accepted them
 * and gets threw {@code IndexOutOfBoundsException} / misalignment {@code
 * IllegalArgumentException} or retried for ever. A bucket lock left set in a cleanly closed pool
 * (which recovery does not reset) is reported as "lock held for ever" instead of a reader or
 * writer spinning for ever.
 */
class DashEhDamagedPoolTest {
  @TempDir Path dir;

  /** A clean dash-eh pool of 3 000 keys (several segments), and what the tests damage in it. */
  private record Table(Path file, long header, long directory, long[] segments) {}

  private Table table(String name) throws Exception {
    Path file = dir.resolve(name);
    try (DashEhTable t = (DashEhTable) PmHash.create(file, TableOptions.scheme("dash-eh").withDurability(Durability.PROCESS))) {
      fill(t, 3_000);
      long directory = (long) DashLayout.LONG.get(t.pool.memory(), t.header + DashLayout.HDR_DIRECTORY);
      long[] segs = t.segmentOffsets();
      assertTrue(segs.length >= 4, "the table needs several segments");
      return new Table(file, t.header, directory, segs);
    }
  }

  private static long entry(Table t, int i) {
    return t.directory() + DashLayout.DIR_ENTRIES + 8L * i;
  }

  @ParameterizedTest
  @ValueSource(strings = {"outside the heap", "not 64-byte aligned", "not an allocated block"})
  void aDirectoryEntryThatNamesNoSegmentIsRefusedAtOpen(String problem) throws Exception {
    Table t = table("entry.pool");
    long seg = peek64(t.file(), entry(t, 1));
    long bad = switch (problem) {
      case "outside the heap" -> 1L << 40;
      case "not 64-byte aligned" -> seg + 8;
      default -> seg + 64 * 5; // inside a segment: aligned, but no block starts there
    };
    poke64(t.file(), entry(t, 1), bad);
    assertRefusedUnchanged(t.file(), "dash-eh directory entry 1", "offset " + bad, problem);
  }

  @Test
  void aDirectoryEntryNamingAnotherRangesSegmentIsRefusedAtOpen() throws Exception {
    Table t = table("swap.pool");
    int depth = (int) peek64(t.file(), t.directory() + DashLayout.DIR_DEPTH);
    long last = peek64(t.file(), entry(t, (1 << depth) - 1));
    poke64(t.file(), entry(t, 0), last); // entry 0 names the last range's segment
    assertRefusedUnchanged(t.file(), "dash-eh directory entries 0..", "covers entries");
  }

  @Test
  void aCrashedPoolWithADamagedEntryIsRefusedAndLeftAsFound() throws Exception {
    Table t = table("live.pool");
    Path crashed = dir.resolve("crashed.pool");
    try (LongHashTable live = PmHash.open(t.file(), reopen())) {
      live.put(key(5_000), 1);
      Files.copy(t.file(), crashed); // as kill -9 leaves it: open will recover
    }
    poke64(crashed, entry(t, 1), 1L << 40);
    assertRefusedUnchanged(crashed, "dash-eh directory entry 1", "outside the heap");
  }

  @Test
  void aSideLinkOutsideThePoolIsRefusedAtOpen() throws Exception {
    Table t = table("side.pool");
    long last = t.segments()[t.segments().length - 1];
    poke64(t.file(), last + DashLayout.SEG_SIDE, 1L << 40);
    assertRefusedUnchanged(t.file(), "dash-eh side-link chain node " + t.segments().length, "outside the heap");
  }

  @Test
  void aSideLinkLoopIsRefusedAtOpen() throws Exception {
    Table t = table("loop.pool");
    long last = t.segments()[t.segments().length - 1];
    poke64(t.file(), last + DashLayout.SEG_SIDE, t.segments()[1]);
    assertRefusedUnchanged(t.file(), "dash-eh side-link chain loops");
  }

  @Test
  void aSegmentInASplitStateAfterACleanShutdownIsRefusedAtOpen() throws Exception {
    Table t = table("state.pool");
    long seg = t.segments()[0];
    long shape = peek64(t.file(), seg + DashLayout.SEG_SHAPE);
    poke64(t.file(), seg + DashLayout.SEG_SHAPE, DashLayout.shape(DashLayout.depthOf(shape), DashLayout.SPLITTING, DashLayout.patternOf(shape)));
    assertRefusedUnchanged(t.file(), "SMO state 1 after a clean shutdown");
  }

  @Test
  void aBucketLockLeftSetInACleanPoolIsReportedNotSpunOn() throws Exception {
    Table t = table("lock.pool");
    long lock;
    try (DashEhTable open = (DashEhTable) PmHash.open(t.file(), reopen())) {
      long h = Hashing.hash(key(7));
      long seg = open.locate(open.pool.memory(), h);
      lock = DashSegment.bucket(seg, DashSegment.bucketIndex(h, DashLayout.NORMAL_BUCKETS - 1)) + DashLayout.LOCK;
    }
    poke32(t.file(), lock, 0x8000_0005); // locked, version 5: no thread will ever unlock it
    int y = DashSegment.bucketIndex(Hashing.hash(key(7)), DashLayout.NORMAL_BUCKETS - 1);
    int other = 8;
    while (((DashSegment.bucketIndex(Hashing.hash(key(other)), DashLayout.NORMAL_BUCKETS - 1) - y + 1) & 63) <= 2) { // not y - 1, y, y + 1
      other++;
    }
    try (LongHashTable open = PmHash.open(t.file(), reopen())) {
      assertEquals(other, open.get(key(other), -1), "the other buckets work");
      assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
        assertCorruptOnUse(() -> open.get(key(7), -1), "dash-eh bucket lock", "lock held for ever");
        assertCorruptOnUse(() -> open.put(key(7), 1), "dash bucket lock", "lock held for ever");
      });
    }
  }
}
