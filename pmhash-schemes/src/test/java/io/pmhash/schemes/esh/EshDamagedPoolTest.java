package io.pmhash.schemes.esh;

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
 * Issue 9 for ESH: the defects the bad-input fuzz test listed as known, pinned one damage at a
 * time. Open validates the directory (each entry an allocated segment block whose shape covers
 * it: the split's invariant I) and refuses a damaged pool, leaving the file unchanged; recovery
 * checks a split child before it follows it; a bucket whose state or lock word was damaged in a
 * cleanly closed pool is reported instead of read for ever. Before, open accepted all of these;
 * gets threw untyped exceptions or looped (the timeouts below).
 */
class EshDamagedPoolTest {
  private static final Duration LIMIT = Duration.ofSeconds(30);

  @TempDir Path dir;

  private record Table(Path file, long directory, int depth, long[] segments) {}

  private Table table(String name) throws Exception {
    Path file = dir.resolve(name);
    try (EshTable t = (EshTable) PmHash.create(file, TableOptions.scheme("esh").withDurability(Durability.PROCESS))) {
      fill(t, 3_000);
      long d = t.directory(t.pool.memory());
      long[] segs = t.segmentOffsets();
      assertTrue(segs.length >= 4, "the table needs several segments");
      return new Table(file, d, t.globalDepth(), segs);
    }
  }

  private static long entry(Table t, long i) {
    return t.directory() + ExtendibleDirectory.ENTRIES + 8 * i;
  }

  /** The home bucket of key(i) in an open table. */
  private static long homeBucket(EshTable t, int i) {
    long h = Hashing.hash(key(i));
    for (long seg : t.segmentOffsets()) {
      long shape = EshSegment.shapeAcquire(t.pool.memory(), seg);
      if (ExtendibleDirectory.prefix(h, EshLayout.depthOf(shape)) == EshLayout.patternOf(shape)) {
        return t.segments.bucket(seg, t.segments.bucketIndex(h));
      }
    }
    throw new AssertionError("no segment covers key " + i);
  }

  @Test
  void aDirectoryEntryOutsideTheHeapIsRefusedAtOpen() throws Exception {
    Table t = table("entry.pool");
    poke64(t.file(), entry(t, 2), -64);
    assertRefusedUnchanged(t.file(), "esh directory entry 2", "outside the heap");
  }

  @Test
  void aDirectoryEntryNamingAnotherRangesSegmentIsRefusedAtOpen() throws Exception {
    Table t = table("swap.pool");
    poke64(t.file(), entry(t, 0), peek64(t.file(), entry(t, (1L << t.depth()) - 1)));
    assertRefusedUnchanged(t.file(), "esh directory entries 0..", "covers entries");
  }

  @Test
  void aCrashedPoolWithADamagedEntryIsRefusedAndLeftAsFound() throws Exception {
    Table t = table("live.pool");
    Path crashed = dir.resolve("crashed.pool");
    try (LongHashTable live = PmHash.open(t.file(), reopen())) {
      live.put(key(9_000), 1);
      Files.copy(t.file(), crashed);
    }
    poke64(crashed, entry(t, 1), t.segments()[0] + 8);
    assertRefusedUnchanged(crashed, "esh directory entry 1", "not 64-byte aligned");
  }

  @Test
  void aDamagedSplitChildIsCorruptionWhenRecoveryReachesIt() throws Exception {
    Table t = table("child.pool");
    Path crashed = dir.resolve("crashed.pool");
    long seg;
    try (EshTable live = (EshTable) PmHash.open(t.file(), reopen())) {
      long b = homeBucket(live, 3);
      seg = -1;
      for (long s : live.segmentOffsets()) {
        if (b >= s && b < s + live.segments.bytes) {
          seg = s;
        }
      }
      Files.copy(t.file(), crashed); // recovery will run on first touch of every segment
    }
    poke64(crashed, seg + EshLayout.SEG_CHILD, 1L << 40);
    try (LongHashTable open = PmHash.open(crashed, reopen())) {
      assertTimeoutPreemptively(LIMIT, () -> assertCorruptOnUse(() -> open.get(key(3), -1), "esh split child", "outside the heap"));
    }
  }

  @Test
  void aDamagedBucketStateIsReportedNotRetriedForEver() throws Exception {
    Table t = table("state.pool");
    long b;
    int k = 0;
    try (EshTable open = (EshTable) PmHash.open(t.file(), reopen())) {
      // a bucket other than its segment's last (whose state stands for the whole segment)
      while (open.segments.bucketIndex(Hashing.hash(key(k))) == open.segments.buckets - 1) {
        k++;
      }
      b = homeBucket(open, k);
    }
    poke32(t.file(), b + EshLayout.STATE, 12345);
    int key = k;
    try (LongHashTable open = PmHash.open(t.file(), reopen())) {
      assertTimeoutPreemptively(LIMIT, () -> assertCorruptOnUse(() -> open.get(key(key), -1), "state word was damaged"));
    }
  }

  @Test
  void aBucketLockLeftSetInACleanPoolIsReportedNotSpunOn() throws Exception {
    Table t = table("lock.pool");
    long b;
    try (EshTable open = (EshTable) PmHash.open(t.file(), reopen())) {
      b = homeBucket(open, 11);
    }
    poke32(t.file(), b + EshLayout.LOCK, 0x8000_0001);
    try (LongHashTable open = PmHash.open(t.file(), reopen())) {
      assertTimeoutPreemptively(LIMIT, () -> {
        assertCorruptOnUse(() -> open.get(key(11), -1), "esh bucket lock", "lock held for ever");
        assertCorruptOnUse(() -> open.put(key(11), 1), "esh bucket lock", "lock held for ever");
      });
    }
  }
}
