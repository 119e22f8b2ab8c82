package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashLayout.LONG;
import static io.pmhash.schemes.dash.DashLhLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.crash.CrashHarness;
import io.pmhash.core.crash.CrashPoint;
import io.pmhash.core.crash.ImageKind;
import io.pmhash.core.hash.Hashing;
import io.pmhash.schemes.contract.CrashModel;
import io.pmhash.schemes.contract.CrashModel.Kind;
import io.pmhash.schemes.contract.CrashModel.Op;
import io.pmhash.schemes.contract.PmdkBlocks;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.function.ToLongFunction;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash tests of Dash-LH with the crash simulator, at every drain: insert, update, delete, stash
 * insert, chained-stash insert and delete, the advance of Next with the array allocation it
 * needs, the lazy split (the crash points between the advance and the split included: the split
 * runs in a later operation), array expansion into a doubled array, and crashes during recovery
 * (which finishes due splits). Every workload ends with a clean close of the table, whose
 * marker's images open clean and trust the segments without recovery (the close writes the whole
 * mapping back first: {@code docs/reliability.md}, "Clean close"). Each image is opened (O(1):
 * one drain after a crash, none after a clean close; no segment recovered),
 * every segment made ready by a scan, and checked: no completed write lost, no deleted key back,
 * the in-flight operation all or nothing, no duplicates, size equal to a scan, get and scan
 * agree, no leaked block (owned blocks are exactly the header, the segment arrays and the chain
 * nodes of LIVE segments), every segment LIVE at its due depth and recovered, and the table
 * keeps working. Tables use a first array of 1 segment and stride 1, so that a few hundred keys
 * reach chains, splits and doublings. Contraction: a merge of the pair split last (Next back by
 * one), a merge that takes the round back (Next was 0: N back by one), a merge that frees n's
 * chained stash bucket, and a merge that frees a segment array, each with crashes during the
 * recovery too; every workload is checked on a dry run to reach its path.
 */
@Timeout(value = 30, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a hang (a lock left held) fails
class DashLhCrashTest {
  @TempDir Path dir;

  static final int FIRST = 1;
  static final int STRIDE = 1;

  static PoolOptions options(int first) {
    return PoolOptions.defaults().withScheme("dash-lh", DashLhLayout.LAYOUT_VERSION, 2, first, STRIDE)
        .withGeometry(2, 4096, 64 << 10).withInitialSize(1 << 20);
  }

  static DashLhTable fresh(int first) {
    return DashLhTable.create(Pool.createVolatile(options(first)), 2, first, STRIDE);
  }

  private CrashHarness.Report crash(String name, List<Op> setup, List<Op> work, boolean recoveryCrashes) {
    return crash(name, FIRST, setup, work, recoveryCrashes);
  }

  private CrashHarness.Report crash(String name, int first, List<Op> setup, List<Op> work, boolean recoveryCrashes) {
    return crash(name, first, setup, work, recoveryCrashes, t -> { });
  }

  private CrashHarness.Report crash(String name, int first, List<Op> setup, List<Op> work, boolean recoveryCrashes,
      java.util.function.Consumer<DashLhTable> afterSetup) {
    return crash(name, first, setup, work, recoveryCrashes, afterSetup, 3);
  }

  private CrashHarness.Report crash(String name, int first, List<Op> setup, List<Op> work, boolean recoveryCrashes,
      java.util.function.Consumer<DashLhTable> afterSetup, int randomImages) {
    List<Map<Long, Long>> states = CrashModel.states(setup, work);
    CrashHarness.Builder b = CrashHarness.builder(dir, options(first))
        .images(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE)
        .randomImages(randomImages, 0xD1L)
        .eachLineCap(24)
        .crashDuringRecovery(recoveryCrashes)
        .setup(pool -> {
          DashLhTable t = DashLhTable.create(pool, 2, first, STRIDE);
          for (Op o : setup) {
            o.apply(t);
          }
          afterSetup.accept(t);
        });
    if (recoveryCrashes) {
      b.recoveryImages(ImageKind.DRAINED, ImageKind.ALL_PENDING);
    }
    CrashHarness.Report r = b.run(
        (pool, ops) -> {
          DashLhTable t = DashLhTable.open(pool);
          for (int i = 0; i < work.size(); i++) {
            ops.begin(i);
            work.get(i).apply(t);
            ops.end(i);
          }
          t.close(); // a clean shutdown: its marker's images open clean and trust what was flushed
        },
        (pool, point) -> verify(pool, point, states, work));
    System.out.println("DashLhCrashTest " + name + ": " + r.summary());
    return r;
  }

  private static void verify(Pool pool, CrashPoint point, List<Map<Long, Long>> states, List<Op> work) {
    String at = point.describe();
    long drains = pool.persistence().stats().drains();
    DashLhTable t = DashLhTable.open(pool);
    // instant recovery (§4.8): open persists a new global version (after a crash; a clean
    // shutdown's is kept) and touches no segment
    assertEquals(pool.lastShutdownClean() ? 0 : 1, pool.persistence().stats().drains() - drains, at + ": drains at open");
    assertEquals(0, t.recoveredSegments.get(), at + ": segments recovered at open");
    t.size(); // makes every segment ready: recovers it, finishes due splits
    CrashHarness.recovered(pool);
    CrashModel.checkRecovered(t, point, states, work);
    checkNoLeak(pool, t, at);
    checkSegments(pool, t, at);
    CrashModel.checkStillWorks(t, at);
  }

  /** Owned blocks are exactly the header, the segment arrays and the chain nodes of LIVE segments. */
  static void checkNoLeak(Pool pool, DashLhTable t, String at) {
    MemorySegment m = pool.memory();
    Set<Long> reachable = new TreeSet<>();
    reachable.add(t.header);
    for (int e = 0; e < DIRECTORY_ENTRIES; e++) {
      long a = t.arrayOffset(m, e);
      if (a != 0) {
        reachable.add(a);
      }
    }
    for (long seg : t.segmentOffsets()) {
      for (long node = DashLhSegment.chainHead(m, seg); node != 0; node = DashLhSegment.nextNode(m, node)) {
        assertTrue(reachable.add(node), at + ": chain node " + node + " linked twice");
      }
    }
    PmdkBlocks.requireOwnedExactly(pool, reachable, at); // pmhash's allocator on FFM, PMDK's on llpl
  }

  /** Every segment of the table is LIVE at the depth N|Next gives it, recovered, and holds only keys it covers. */
  static void checkSegments(Pool pool, DashLhTable t, String at) {
    long[] segs = t.segmentOffsets();
    MemorySegment m = pool.memory();
    long w = t.nNextWord();
    int level = t.firstShift + roundOf(w);
    long next = nextOf(w);
    assertEquals((1L << level) + next, segs.length, at + ": segments");
    for (int s = 0; s < segs.length; s++) {
      int depth = s < next || s >= 1L << level ? level + 1 : level;
      long shape = DashSegment.shapeAcquire(m, segs[s]);
      assertEquals(DashLayout.shape(depth, LIVE, s), shape, at + ": shape of segment " + s);
      assertEquals(t.globalVersion, (long) LONG.get(m, segs[s] + SEG_VERSION), at + ": version of segment " + s);
      long seg = segs[s];
      for (int i = 0; i < DashLayout.NORMAL_BUCKETS + t.stash; i++) {
        checkCovered(m, shape, DashSegment.bucket(seg, i), at);
      }
      for (long node = DashLhSegment.chainHead(m, seg); node != 0; node = DashLhSegment.nextNode(m, node)) {
        checkCovered(m, shape, node + NODE_BUCKET, at);
      }
    }
  }

  private static void checkCovered(MemorySegment m, long shape, long b, String at) {
    for (int a = DashBucket.allocated(DashBucket.bitmap(m, b)); a != 0; a &= a - 1) {
      long k = DashBucket.key(m, b, Integer.numberOfTrailingZeros(a));
      assertTrue(DashLhTable.covers(shape, Hashing.hash(k)), at + ": key " + k + " in a segment that does not cover it");
    }
  }

  // ------------------------------------------------------------------ key helpers

  private static List<Op> seeded(long seed, int n) {
    SplittableRandom r = new SplittableRandom(seed);
    List<Op> ops = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ops.add(Op.put(r.nextLong(), i));
    }
    return ops;
  }

  /** Index of the seeded insert at which {@code counter} first reaches {@code target}. */
  private static int indexWhere(long seed, ToLongFunction<DashLhTable> counter, long target) {
    try (DashLhTable t = fresh(FIRST)) {
      SplittableRandom r = new SplittableRandom(seed);
      for (int i = 0; ; i++) {
        t.put(r.nextLong(), i);
        if (counter.applyAsLong(t) >= target) {
          return i;
        }
      }
    }
  }

  // ------------------------------------------------------------------ tests

  @Test
  void insertUpdateDeleteAndCrashDuringRecovery() {
    List<Op> setup = List.of(Op.put(100, 1), Op.put(200, 2), Op.put(300, 3));
    List<Op> work = List.of(
        Op.put(1, 10), Op.put(2, 20), Op.put(200, 22), Op.remove(100), new Op(Kind.PUT_IF_ABSENT, 3, 30),
        new Op(Kind.REPLACE, 300, 33), Op.remove(2), Op.put(2, 21));
    CrashHarness.Report r = crash("insert-update-delete", setup, work, true);
    assertTrue(r.crashPoints() >= 11, r.summary());
    assertTrue(r.recoveryCrashPoints() > 0, r.summary());
  }

  /**
   * Fixed stash, then the chain, in segment 1 of a 2-segment first array (so that the advance the
   * first chained bucket makes is due in segment 0, and segment 1's chain stays while the chained
   * operations run): keys of one bucket fill it and its neighbour, then the two fixed stash
   * buckets, then the first chained bucket is allocated (with the segment array of segment 2 and
   * the advance of Next), a second chained record goes into it, and chained and stashed records
   * are updated and deleted.
   */
  @Test
  void stashAndChainedStashInsertDeleteWithAdvance() {
    long[] keys = keysFor(20, 1, 80, 1);
    int full = fillToChain(keys);
    List<Op> setup = new ArrayList<>();
    for (int i = 0; i < full - 2; i++) {
      setup.add(Op.put(keys[i], i));
    }
    List<Op> work = new ArrayList<>();
    work.add(Op.put(keys[full - 2], -1)); // a fixed stash insert
    work.add(Op.put(keys[full - 1], -2)); // fills the fixed stash
    work.add(Op.put(keys[full], -3)); // first chained bucket: node, array, advance
    work.add(Op.put(keys[full + 1], -4)); // into the chained bucket
    work.add(Op.put(keys[full], -33)); // update of a chained record
    work.add(Op.remove(keys[full + 1])); // delete of a chained record
    work.add(Op.remove(keys[full - 2])); // delete of a stashed record
    work.add(Op.get(keys[3])); // segment 1 stays at depth 1 (Next is 1: only segment 0 is due)
    CrashHarness.Report r = crash("stash+chain", 2, setup, work, true);
    assertTrue(r.crashPoints() >= 14, r.summary());
  }

  /** Keys whose target bucket is {@code y} in segment {@code s} of a 2-segment table. */
  static long[] keysFor(int y, int s, int n, long start) {
    long[] out = new long[n];
    int i = 0;
    for (long k = start; i < n; k++) {
      long h = Hashing.hash(k);
      if (DashSegment.bucketIndex(h, DashLayout.NORMAL_BUCKETS - 1) == y && ((h >>> SEGMENT_HASH_SHIFT) & 1) == s) {
        out[i++] = k;
      }
    }
    return out;
  }

  /** How many keys of {@code keys} a fresh 2-segment table takes before the next one allocates a chained bucket in segment 1. */
  private static int fillToChain(long[] keys) {
    try (DashLhTable t = fresh(2)) {
      for (int i = 0; ; i++) {
        t.put(keys[i], i);
        if (DashLhSegment.chainHead(t.pool.memory(), t.segmentOffset(t.pool.memory(), 1)) != 0) {
          return i;
        }
      }
    }
  }

  /**
   * The lazy split: the insert that advances Next, then operations that make the split happen
   * (a get of segment 0's half splits it: LHlf), so crashes fall after the advance and before,
   * during and after the split; then inserts and a delete on both halves.
   */
  @Test
  void splitAfterAdvance() {
    long seed = 0x5B11L;
    int at = indexWhere(seed, t -> t.advances.get(), 1);
    List<Op> all = seeded(seed, at + 4);
    List<Op> work = new ArrayList<>();
    work.add(all.get(at)); // allocates the chained bucket and advances Next
    work.add(Op.get(all.get(3).key())); // the split (whichever half the key is in)
    work.add(all.get(at + 1));
    work.add(all.get(at + 2));
    work.add(Op.remove(all.get(5).key()));
    CrashHarness.Report r = crash("split", all.subList(0, at), work, true);
    assertTrue(r.crashPoints() >= 12, r.summary());
  }

  /**
   * A split that empties p's chained bucket, then inserts into p until that bucket is full again
   * and a new node is appended (whose link makes p's header line, with the depth the split wrote
   * without a persist of its own, durable). Invariant C (p's chain holds only its half, durably,
   * before its depth says d + 1) is what keeps a refill that reuses a dropped slot from writing
   * its pair under a valid bit still durable from the dropped record: without the split's flush
   * of p's chained buckets, an image that tore that pair shows a record nobody wrote (the new key
   * with the old value), which 24 random images per crash point find (the mutation check, suite
   * {@code dashlh}). One segment, bucket 20's keys: the chained record that makes the split due
   * is one of n's. Crash points: the chain allocation and advance, the split (in a get), every
   * refill, the append.
   */
  @Test
  void splitDroppingChainedRecordsThenAppendOnP() {
    long[] half0 = keysFor(20, 0, 200, 1);
    long[] half1 = keysFor(20, 1, 200, 1);
    long[] mixed = new long[200];
    for (int i = 0; i < mixed.length; i++) {
      mixed[i] = i % 2 == 0 ? half0[i / 2] : half1[i / 2];
    }
    int chained; // the first of mixed that needs a chained bucket in a one-segment table
    try (DashLhTable dry = fresh(FIRST)) {
      MemorySegment m = dry.pool.memory();
      for (chained = 0; ; chained++) {
        dry.put(mixed[chained], chained);
        if (DashLhSegment.chainHead(m, dry.segmentOffset(m, 0)) != 0) {
          break;
        }
      }
    }
    List<Op> setup = new ArrayList<>();
    for (int i = 0; i < chained; i++) {
      setup.add(Op.put(mixed[i], i));
    }
    List<Op> work = new ArrayList<>();
    try (DashLhTable t = fresh(FIRST)) {
      MemorySegment m = t.pool.memory();
      long p = t.segmentOffset(m, 0);
      setup.forEach(o -> o.apply(t));
      work.add(Op.put(half1[150], -1)); // one of n's: the first chained bucket, the advance
      work.add(Op.get(half0[0])); // the split of p: n takes the chained record, p's chained bucket empties
      work.get(0).apply(t);
      work.get(1).apply(t);
      long node = DashLhSegment.chainHead(m, p);
      assertTrue(node != 0 && DashBucket.count(DashBucket.bitmap(m, node + NODE_BUCKET)) == 0,
          "the split emptied p's chained bucket (dry run)");
      for (int k = (chained + 1) / 2; DashLhSegment.chainHead(m, p) == node; k++) { // p's half refills up to the append
        Op o = Op.put(half0[k], 1000 + k);
        o.apply(t);
        work.add(o);
      }
      assertTrue(DashLhSegment.nextNode(m, DashLhSegment.chainHead(m, p)) == node, "a node was appended to p's chain (dry run)");
    }
    work.add(Op.get(half1[150]));
    CrashHarness.Report r = crash("split-chained-then-append", FIRST, setup, work, false, t -> { }, 24);
    assertTrue(r.crashPoints() >= 2 * (work.size() - 2), r.summary());
  }

  /** Growth into a doubled segment array (first array 1, stride 1: arrays of 1, 1, 2, 4 segments). */
  @Test
  void arrayExpansionIntoDoubledArray() {
    long seed = 0xA77A1L;
    int at = indexWhere(seed, t -> t.arrays.get(), 2); // the second array: 2 segments
    List<Op> all = seeded(seed, at + 3);
    List<Op> work = new ArrayList<>(all.subList(at, at + 3));
    work.add(Op.remove(all.get(11).key()));
    CrashHarness.Report r = crash("array-doubling", all.subList(0, at), work, false);
    assertTrue(r.crashPoints() >= 8, r.summary());
  }

  // ------------------------------------------------------------------ contraction

  /** What the dry run of a delete that merges must have seen. */
  enum MergePath { NEXT_BACK, ROUND_BACK, CHAINED_BUCKET_FREED, ARRAY_FREED }

  /**
   * The seeded inserts of {@code keys} keys, then their deletes in insertion order, until the
   * delete whose merge takes the given path (a dry run on a fresh table).
   *
   * @return {n, d}: the inserts, and the index of the delete that merges along {@code path}
   */
  private static int[] mergeWhere(long seed, int keys, MergePath path) {
    List<Op> ins = seeded(seed, keys);
    try (DashLhTable t = fresh(FIRST)) {
      for (Op o : ins) {
        o.apply(t);
      }
      for (int i = 0; i < keys; i++) {
        MemorySegment m = t.pool.memory();
        long w = t.nNextWord();
        long next = nextOf(w);
        int level = t.firstShift + roundOf(w);
        long n = next > 0 ? (1L << level) + next - 1 : (1L << level) - 1;
        long nseg = w == 0 ? 0 : t.segmentOffset(m, n);
        long chain = nseg == 0 ? 0 : DashLhSegment.chainLength(m, nseg);
        long merges = t.merges.get();
        long freed = t.arraysFreed.get();
        Op.remove(ins.get(i).key()).apply(t);
        if (t.merges.get() == merges + 1) {
          boolean hit = switch (path) {
            case NEXT_BACK -> next > 0;
            case ROUND_BACK -> next == 0;
            case CHAINED_BUCKET_FREED -> chain > 0;
            case ARRAY_FREED -> t.arraysFreed.get() > freed;
          };
          if (hit) {
            return new int[] {keys, i};
          }
        }
      }
    }
    throw new AssertionError("no delete of the " + keys + " keys of seed " + seed + " merges along " + path);
  }

  private CrashHarness.Report mergeCrash(String name, long seed, int keys, MergePath path, int minPoints) {
    int[] at = mergeWhere(seed, keys, path);
    List<Op> ins = seeded(seed, at[0]);
    List<Op> setup = new ArrayList<>(ins);
    for (int i = 0; i < at[1]; i++) {
      setup.add(Op.remove(ins.get(i).key()));
    }
    List<Op> work = new ArrayList<>();
    work.add(Op.remove(ins.get(at[1]).key())); // the delete that merges along the path
    work.add(Op.put(ins.get(at[1]).key(), -1)); // and the table keeps working after it
    work.add(Op.remove(ins.get(at[1] + 1).key()));
    // every segment header durable, as a recovery (its version) or a chain append (its link)
    // leaves it: a split does not persist p's new depth, and the merge must not rely on that
    CrashHarness.Report r = crash(name, FIRST, setup, work, true, t -> {
      for (long seg : t.segmentOffsets()) {
        t.persistence.persist(seg, 64);
      }
    });
    assertTrue(r.crashPoints() >= minPoints, r.summary());
    assertTrue(r.recoveryCrashPoints() > 0, r.summary());
    return r;
  }

  /** A merge taking Next back by one: n's records into p, n ABSENT, the word back. */
  @Test
  void mergeTakingNextBack() {
    mergeCrash("merge", 0x3E61L, 3000, MergePath.NEXT_BACK, 10);
  }

  /** A merge at Next = 0: the word goes back a round (N − 1, Next = 2^(L−1) − 1). */
  @Test
  void mergeTakingTheRoundBack() {
    mergeCrash("merge-round-back", 0x3E62L, 3000, MergePath.ROUND_BACK, 10);
  }

  /** A merge of an n with a chained stash bucket, which the merge frees. */
  @Test
  void mergeFreeingAChainedStashBucket() {
    mergeCrash("merge-chained-bucket", 0x3E63L, 3000, MergePath.CHAINED_BUCKET_FREED, 12);
  }

  /** A merge after which a segment array is no longer addressed and is freed. */
  @Test
  void mergeFreeingASegmentArray() {
    mergeCrash("merge-array-freed", 0x3E64L, 3000, MergePath.ARRAY_FREED, 12);
  }
}
