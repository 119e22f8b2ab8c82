package io.pmhash.schemes.dash;

import static io.pmhash.schemes.contract.DamagedPools.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

  /**
   * A damaged link in the middle of the chain, the last link still 0: open checks the chain with
   * the directory when every link names the next run's segment, and this one does not, so the
   * chain is walked and the link refused (a check that looked only at the last link would let
   * routing follow it).
   */
  @ParameterizedTest
  @ValueSource(strings = {"outside the heap", "not an allocated block"})
  void aSideLinkInTheMiddleOfTheChainIsRefusedAtOpen(String problem) throws Exception {
    Table t = table("middle.pool");
    long bad = problem.equals("outside the heap") ? 1L << 40 : t.segments()[2] + 64 * 5;
    poke64(t.file(), t.segments()[1] + DashLayout.SEG_SIDE, bad);
    assertRefusedUnchanged(t.file(), "dash-eh side-link chain node 2", "offset " + bad, problem);
  }

  /**
   * A chain that skips a segment the directory names (as a merge left in flight leaves it, the
   * right buddy still in the directory) is not the directory's order, so it is walked node by
   * node, as before; it is no damage, and the table opens with every record.
   */
  @Test
  void aChainThatSkipsASegmentIsWalkedAndAccepted() throws Exception {
    Table t = table("skip.pool");
    poke64(t.file(), t.segments()[0] + DashLayout.SEG_SIDE, t.segments()[2]);
    try (LongHashTable open = PmHash.open(t.file(), reopen())) {
      for (int i = 0; i < 3_000; i++) {
        assertEquals(i, open.get(key(i), -1), "key " + i);
      }
    }
  }

  /**
   * What open concludes from the side links it reads with the directory's runs: only a chain that
   * is the runs' segments in order, ending in 0, is taken as checked; a segment named by two runs
   * (a loop: its one side link cannot lead on from both) or a link elsewhere is walked.
   */
  @Test
  void theChainIsTakenAsCheckedOnlyWhenItIsTheDirectorysRunsInOrder() {
    assertTrue(links(new long[][] {{100, 0}}), "one segment, side 0");
    assertTrue(links(new long[][] {{100, 200}, {200, 300}, {300, 0}}), "three in order");
    assertFalse(links(new long[][] {{100, 200}, {200, 100}, {100, 200}}), "a segment in two runs: a loop");
    assertFalse(links(new long[][] {{100, 200}, {200, 300}, {300, 200}}), "the last link leads back");
    assertFalse(links(new long[][] {{100, 150}, {200, 300}, {300, 0}}), "a link to a segment no run names");
    assertFalse(links(new long[][] {{100, 300}, {200, 300}, {300, 0}}), "a link that skips a run");
    assertFalse(links(new long[][] {{100, -1}, {200, 300}, {300, 0}}), "a link of all ones (found by the fuzz test)");
  }

  private static boolean links(long[][] runs) {
    DashEhTable.SideLinks links = new DashEhTable.SideLinks();
    for (long[] run : runs) {
      links.next(run[0], run[1]);
    }
    return links.followTheDirectory();
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
