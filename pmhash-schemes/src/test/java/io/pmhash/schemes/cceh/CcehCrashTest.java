package io.pmhash.schemes.cceh;

import static io.pmhash.schemes.cceh.CcehCrashSupport.*;
import static io.pmhash.schemes.cceh.CcehLayout.*;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.crash.CrashHarness;
import io.pmhash.schemes.contract.CrashModel.Kind;
import io.pmhash.schemes.contract.CrashModel.Op;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash tests with the crash simulator, at every drain, for insert, update, delete, split, split
 * with directory doubling, and crashes during recovery; the checks are {@link
 * CcehCrashSupport#verify}'s. Images per crash point: DRAINED, ALL_PENDING, EACH_LINE (up to 64
 * lines) and 3 RANDOM.
 */
class CcehCrashTest {
  @TempDir Path dir;

  @AfterEach
  void closeDryRunTables() {
    CcehCrashSupport.closeDryRuns();
  }

  @AfterAll
  static void totals() {
    long[] sum = new long[3];
    TOTALS.values().forEach(v -> {
      for (int i = 0; i < 3; i++) {
        sum[i] += v[i];
      }
    });
    System.out.println("CcehCrash totals: " + sum[0] + " crash points, " + sum[1] + " recovery crash points, " + sum[2] + " images");
  }

  @Test
  void insertUpdateDelete() {
    List<Op> setup = List.of(Op.put(1, 10), Op.put(2, 20), Op.put(3, 30));
    List<Op> work = List.of(
        Op.put(4, 40), Op.put(1, 11), Op.remove(2), Op.put(2, 22),
        new Op(Kind.PUT_IF_ABSENT, 5, 50), new Op(Kind.REPLACE, 3, 33), Op.remove(99));
    CrashHarness.Report r = crash(dir, "insert-update-delete", 0, setup, work, true);
    assertTrue(r.crashPoints() >= 2 * 3 + 4, r.summary());
  }

  /** 16 keys fill one probe window of the only segment; the 17th splits it with a doubling. */
  @Test
  void splitWithDoubling() {
    List<Long> keys = keysIn(7, 0, 0, 17, 1);
    List<Op> setup = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      setup.add(Op.put(keys.get(i), i));
    }
    List<Op> work = List.of(Op.put(keys.get(16), 16), Op.remove(keys.get(0)), Op.put(keys.get(1), -1));
    CcehTable dry = dryRun(0, setup);
    work.forEach(o -> o.apply(dry));
    assertTrue(dry.doublings.get() >= 1 && dry.splits.get() >= 1, "the workload doubles: " + dry.stats());
    crash(dir, "split-with-doubling", 0, setup, work, true);
  }

  /**
   * A directory of depth 2 over segments of depth 2 and 1 (after a setup that splits); the
   * workload overflows a window of the depth-1 segment: a split without doubling.
   */
  @Test
  void splitWithoutDoubling() {
    // depth 1 from the start (capacity of two segments); overflow segment 0 twice in one bucket
    // so it reaches depth 2 while segment 1 stays at depth 1
    List<Op> setup = new ArrayList<>();
    List<Long> a = keysIn(3, 2, 0b00, 9, 1);
    List<Long> b = keysIn(3, 2, 0b01, 8, 1);
    for (int i = 0; i < 8; i++) {
      setup.add(Op.put(a.get(i), i));
      setup.add(Op.put(b.get(i), i));
    }
    setup.add(Op.put(a.get(8), 8));
    CcehTable dry = dryRun(800, setup);
    assertTrue(dry.globalDepth(dry.pool().memory()) == 2, "setup reaches depth 2: " + dry.stats());
    // segment 1 (prefix 1 at depth 1) is at depth 1 < 2: fill a window there
    List<Long> c = keysIn(9, 1, 1, 17, 1);
    List<Op> work = new ArrayList<>();
    for (int i = 0; i < 15; i++) {
      setup.add(Op.put(c.get(i), i));
    }
    for (int i = 15; i < 17; i++) {
      work.add(Op.put(c.get(i), i));
    }
    CcehTable dry2 = dryRun(800, setup);
    long doublings = dry2.doublings.get();
    long splits = dry2.splits.get();
    work.forEach(o -> o.apply(dry2));
    assertTrue(dry2.splits.get() > splits && dry2.doublings.get() == doublings, "a split without doubling: " + dry2.stats());
    crash(dir, "split-without-doubling", 800, setup, work, true);
  }

  /** A few hundred random operations with a few splits, crashing at every drain but without recovery crashes. */
  @Test
  void mixedWorkloadAcrossSplits() {
    // find where the first two splits happen, and crash the 30 operations around them
    CcehTable probe = dryRun(0, List.of());
    long first = 0;
    long k = 0;
    while (probe.splits.get() < 2) {
      probe.put(++k * 7919, k);
      if (first == 0 && probe.splits.get() == 1) {
        first = k;
      }
    }
    List<Op> setup = new ArrayList<>();
    for (long i = 1; i < first - 10; i++) {
      setup.add(Op.put(i * 7919, i));
    }
    List<Op> work = new ArrayList<>();
    for (long i = first - 10; i <= Math.max(k, first + 10); i++) {
      work.add(Op.put(i * 7919, i));
      if (i % 4 == 0) {
        work.add(Op.remove((i - 200) * 7919));
      }
    }
    CcehTable dry = dryRun(0, setup);
    work.forEach(o -> o.apply(dry));
    assertTrue(dry.splits.get() >= 1, "the workload splits: " + dry.stats());
    crash(dir, "mixed", 0, setup, work, false);
  }
}
