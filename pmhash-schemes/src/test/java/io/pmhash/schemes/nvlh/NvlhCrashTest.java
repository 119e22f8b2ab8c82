package io.pmhash.schemes.nvlh;

import static io.pmhash.schemes.contract.CrashModel.inserts;
import static io.pmhash.schemes.contract.CrashModel.key;
import static io.pmhash.schemes.nvlh.NvlhCrashSupport.crash;
import static io.pmhash.schemes.nvlh.NvlhCrashSupport.dryRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.crash.CrashHarness;
import io.pmhash.schemes.contract.CrashModel;
import io.pmhash.schemes.contract.CrashModel.Op;
import io.pmhash.schemes.nvlh.NvlhCrashSupport.Config;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Crash at every drain of each operation type of NVLH, and of its recovery: insert into a
 * primary bucket, insert chaining an overflow bucket (alone, and in one transaction with the
 * split it triggers), update, delete (one word, and emptying an
 * overflow bucket), split, round change, split allocating a segment, merge, merge freeing a
 * segment, the round going back; the split and merge tests both as one transaction (short
 * chains, the default) and through the flagged multi-transaction protocol (forced), whose
 * recovery finishes the pending split or merge. Each workload is checked on a volatile dry run to
 * reach the path it is named after.
 */
class NvlhCrashTest {
  /** Split on collision, merge below 20 %, segments of two buckets. */
  static final Config PAPER = Config.nvlh(1, 0, 20);
  /** As {@link #PAPER}, every split and merge taking the flagged multi-transaction protocol. */
  static final Config FLAGGED = PAPER.flagged();
  /** Never splits (the load bound is 100 % of the primary slots) nor merges: chains grow. */
  static final Config CHAINS = Config.nvlh(1, 100, 0);

  @TempDir Path dir;

  @AfterEach
  void closeDryRunTables() {
    NvlhCrashSupport.closeDryRuns();
  }

  /** The index of the first of {@code key(from), key(from + 1), ...} whose insert changes {@code counter}. */
  static int firstInsertChanging(Config c, int from, ToLongFunction<NvlhTable> counter) {
    NvlhTable t = (NvlhTable) dryRun(c, inserts(0, from), List.of());
    for (int i = from; ; i++) {
      long before = counter.applyAsLong(t);
      t.put(key(i), i);
      if (counter.applyAsLong(t) != before) {
        return i;
      }
    }
  }

  @Test
  void insertsIntoPrimaryBuckets() {
    int first = firstInsertChanging(PAPER, 0, t -> t.overflowBuckets.get());
    assertTrue(first >= 4, "a few inserts fit the primary buckets: " + first);
    CrashHarness.Report r = crash(dir, "insert into a primary bucket", PAPER, List.of(), inserts(0, first), false);
    assertTrue(r.crashPoints() >= 2 * first, r.summary());
  }

  @Test
  void insertChainingAnOverflowBucket() {
    int first = firstInsertChanging(CHAINS, 0, t -> t.overflowBuckets.get());
    crash(dir, "insert chaining an overflow bucket", CHAINS, inserts(0, first), inserts(first, first + 3), true);
  }

  @Test
  void updates() {
    List<Op> work = new ArrayList<>();
    for (int i = 0; i < 20; i += 4) {
      work.add(Op.put(key(i), -i));
    }
    crash(dir, "update", PAPER, inserts(0, 20), work, false);
  }

  @Test
  void deletesOfOneWord() {
    List<Op> work = new ArrayList<>();
    for (int i = 0; i < 20; i += 3) {
      work.add(Op.remove(key(i)));
    }
    NvlhTable t = (NvlhTable) dryRun(PAPER, inserts(0, 20), work);
    assertEquals(0, t.merges.get(), "no merge");
    crash(dir, "delete (one word)", PAPER, inserts(0, 20), work, false);
  }

  @Test
  void deletesEmptyingAnOverflowBucket() {
    int n = 40;
    NvlhTable t = (NvlhTable) dryRun(CHAINS, inserts(0, n), List.of());
    assertTrue(t.overflowBuckets.get() > 0, "the chains have overflow buckets");
    List<Op> work = new ArrayList<>();
    MemorySegment m = t.pool.memory();
    for (long b = 0; b < t.buckets() && work.isEmpty(); b++) {
      long x = NvlhBucket.next(m, t.bucketOffset(b));
      if (x != 0) {
        for (long bits = NvlhBucket.meta(m, x) & NvlhLayout.ALL_SLOTS; bits != 0; bits &= bits - 1) {
          work.add(Op.remove(NvlhBucket.key(m, x, Long.numberOfTrailingZeros(bits))));
        }
      }
    }
    long before = t.overflowBuckets.get();
    work.forEach(o -> o.apply(t));
    assertEquals(before - 1, t.overflowBuckets.get(), "the last delete unlinks the overflow bucket");
    crash(dir, "delete emptying an overflow bucket", CHAINS, inserts(0, n), work, true);
  }

  /** The split and merge tests run twice: one transaction each (short chains), and the flagged protocol. */
  static Config config(boolean flagged) {
    return flagged ? FLAGGED : PAPER;
  }

  @ParameterizedTest(name = "flagged {0}")
  @ValueSource(booleans = {false, true})
  void split(boolean flagged) {
    Config c = config(flagged);
    // the first split in one transaction with the insert that collided or, flagged, the first
    // split (after the insert's own transaction)
    int at = firstInsertChanging(c, 0, t -> flagged ? t.splits.get() : t.splitsWithInsert.get());
    NvlhTable before = (NvlhTable) dryRun(c, inserts(0, at), List.of());
    long splits = before.splits.get();
    NvlhTable t = (NvlhTable) dryRun(c, inserts(0, at + 1), List.of());
    assertEquals(splits + 1, t.splits.get());
    assertEquals(flagged ? 0 : 1, t.splitsWithInsert.get(), "the split in the insert's transaction");
    crash(dir, "split" + (flagged ? " (flagged)" : ""), c, inserts(0, at), inserts(at, at + 2), true);
  }

  @ParameterizedTest(name = "flagged {0}")
  @ValueSource(booleans = {false, true})
  void roundChangeAndNewSegmentAndDirectoryLevel(boolean flagged) {
    Config c = config(flagged);
    int at = firstInsertChanging(c, 0, t -> t.round());
    NvlhTable t = (NvlhTable) dryRun(c, inserts(0, at), List.of());
    assertEquals(0, t.round());
    long p = t.splitPointer();
    t.put(key(at), at);
    assertEquals(1, t.round());
    assertEquals(0, t.splitPointer());
    assertEquals(3, p, "the split of the last bucket of round 0 (n0 = 4) wraps p");
    crash(dir, "round change" + (flagged ? " (flagged)" : ""), c, inserts(0, at), inserts(at, at + 1), true);
  }

  @ParameterizedTest(name = "flagged {0}")
  @ValueSource(booleans = {false, true})
  void splitAllocatingASegment(boolean flagged) {
    Config c = config(flagged);
    // with segments of two buckets, the split of p = 2 in round 1 creates bucket 10 (segment 5)
    int at = firstInsertChanging(c, 0, t -> t.segs.length > 5 && t.segs[5] != 0 ? 1 : 0);
    crash(dir, "split allocating a segment" + (flagged ? " (flagged)" : ""), c, inserts(0, at), inserts(at, at + 1), true);
  }

  /**
   * A single-transaction split logs nothing of its receiving bucket q, which is beyond the table
   * until the commit: a crash before the commit leaves in q whatever of the moved records, meta
   * bits and next word reached the medium. The next split of q, in one transaction or through the
   * flagged protocol, must empty it first: after it the invariants hold and every record is found
   * with its value. The table: n0 = 4 in segments of 8 buckets (q = 4 exists before the split,
   * so a rollback keeps it), splitting above 100 % load; 10 of the first 29 keys go from bucket
   * 0 to q = 4, more than a bucket holds, so q gets an overflow bucket. The recovered images in
   * which q held records, and those in which its next word named a bucket, are counted, and some
   * of each are required.
   */
  @ParameterizedTest(name = "next split flagged {0}")
  @ValueSource(booleans = {false, true})
  void theNextSplitEmptiesWhatARolledBackSplitLeftInItsNewBucket(boolean nextFlagged) {
    Config c = new Config(NvlhProvider.NAME, 4, 3, 100, 0, 4, false);
    List<Op> setup = new ArrayList<>();
    int toQ = 0;
    int others = 0;
    for (int i = 0; setup.size() < 28; i++) {
      long h = NvlhTable.hash(key(i));
      if ((h & 7) == 4 && toQ < 10) {
        toQ++;
        setup.add(Op.put(key(i), i));
      } else if ((h & 3) != 0 && others < 18) {
        others++;
        setup.add(Op.put(key(i), i));
      }
    }
    List<Op> work = List.of(Op.put(-1, -1));
    NvlhTable dry = (NvlhTable) dryRun(c, setup, work);
    assertEquals(1, dry.splits.get(), "the 29th insert splits bucket 0");
    assertTrue(NvlhBucket.next(dry.pool.memory(), dry.bucketOffset(4)) != 0, "q got an overflow bucket");
    AtomicInteger records = new AtomicInteger();
    AtomicInteger links = new AtomicInteger();
    crash(dir, "split, then the next split of its q" + (nextFlagged ? " (flagged)" : ""), c, setup, work, false,
        (table, point) -> {
          NvlhTable t = (NvlhTable) table;
          MemorySegment m = t.pool.memory();
          long s = t.state;
          long q = NvlhLayout.splitPointer(s) + (t.n0 << NvlhLayout.level(s));
          int seg = (int) (q >>> t.segShift);
          if (seg < t.segs.length && t.segs[seg] != 0) {
            records.addAndGet((NvlhBucket.meta(m, t.bucketOffset(q)) & NvlhLayout.ALL_SLOTS) != 0 ? 1 : 0);
            links.addAndGet(NvlhBucket.next(m, t.bucketOffset(q)) != 0 ? 1 : 0);
          }
          Map<Long, Long> before = new HashMap<>();
          t.forEach(before::put);
          t.singleTxChain = nextFlagged ? 0 : 4;
          NvlhResize.split(t);
          String after = point.describe() + ", then the next split";
          NvlhInvariants.check(t, after);
          assertEquals(before.size(), t.size(), after + ": size");
          before.forEach((k, v) -> assertEquals(v, t.get(k, Long.MIN_VALUE), after + ": key " + k));
        });
    assertTrue(records.get() > 0, "some crash images left records in q: " + records.get());
    assertTrue(links.get() > 0, "some crash images left q naming a bucket: " + links.get());
  }

  /**
   * Fills {@code setup} with inserts up to round 2 and removes, newest first, up to the one whose
   * merge changes {@code counter}; returns that remove.
   */
  static List<Op> mergeWorkload(Config c, List<Op> setup, ToLongFunction<NvlhTable> counter) {
    NvlhTable t = (NvlhTable) dryRun(c, List.of(), List.of());
    int n = 0;
    while (t.round() < 2) {
      t.put(key(n), n);
      setup.add(Op.put(key(n), n));
      n++;
    }
    for (int i = n - 1; i >= 0; i--) {
      long before = counter.applyAsLong(t);
      t.remove(key(i));
      if (counter.applyAsLong(t) != before) {
        return List.of(Op.remove(key(i)));
      }
      setup.add(Op.remove(key(i)));
    }
    throw new AssertionError("nothing changed after removing every key");
  }

  @ParameterizedTest(name = "flagged {0}")
  @ValueSource(booleans = {false, true})
  void merge(boolean flagged) {
    Config c = config(flagged);
    List<Op> setup = new ArrayList<>();
    List<Op> work = mergeWorkload(c, setup, t -> t.merges.get());
    crash(dir, "merge" + (flagged ? " (flagged)" : ""), c, setup, work, true);
  }

  @ParameterizedTest(name = "flagged {0}")
  @ValueSource(booleans = {false, true})
  void mergeFreeingASegment(boolean flagged) {
    Config c = config(flagged);
    List<Op> setup = new ArrayList<>();
    List<Op> work = mergeWorkload(c, setup, t -> {
      long n = 0;
      for (long s : t.segs) {
        n += s != 0 ? 1 : 0;
      }
      return n;
    });
    crash(dir, "merge freeing a segment" + (flagged ? " (flagged)" : ""), c, setup, work, true);
  }

  @ParameterizedTest(name = "flagged {0}")
  @ValueSource(booleans = {false, true})
  void mergeTakingTheRoundBack(boolean flagged) {
    Config c = config(flagged);
    List<Op> setup = new ArrayList<>();
    List<Op> work = mergeWorkload(c, setup, t -> t.round());
    crash(dir, "merge taking the round back" + (flagged ? " (flagged)" : ""), c, setup, work, true);
  }
}
