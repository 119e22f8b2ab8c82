package io.pmhash.schemes.esh;

import static io.pmhash.schemes.esh.EshCrashSupport.*;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * Crash tests with the crash simulator, at every drain, for insert, update and delete in the home
 * bucket, insert into, update in and delete from a neighbour bucket (Algorithm 4.1's overflow),
 * split with and without directory doubling, and crashes during (lazy) recovery; the checks are
 * {@link EshCrashSupport#verify}'s. Images per crash point: DRAINED, ALL_PENDING, EACH_LINE (up
 * to 64 lines) and 3 RANDOM.
 */
class EshCrashTest {
  @TempDir Path dir;

  @AfterEach
  void closeDryRunTables() {
    EshCrashSupport.closeDryRuns();
  }

  @AfterAll
  static void totals() {
    long[] sum = new long[3];
    TOTALS.values().forEach(v -> {
      for (int i = 0; i < 3; i++) {
        sum[i] += v[i];
      }
    });
    System.out.println("EshCrash totals: " + sum[0] + " crash points, " + sum[1] + " recovery crash points, " + sum[2] + " images");
  }

  @Test
  void insertUpdateDeleteInTheHomeBucket() {
    List<Op> setup = List.of(Op.put(1, 10), Op.put(2, 20), Op.put(3, 30));
    List<Op> work = List.of(
        Op.put(4, 40), Op.put(1, 11), Op.remove(2), Op.put(2, 22),
        new Op(Kind.PUT_IF_ABSENT, 5, 50), new Op(Kind.REPLACE, 3, 33), Op.remove(99));
    var r = crash(dir, "home", Geometry.ESH, 0, setup, work, true);
    assertTrue(r.crashPoints() >= 2 * 3 + 3, r.summary());
  }

  /**
   * Bucket 5 is full (14 records); the 15th and 16th of its keys overflow into bucket 6 (which
   * holds records of its own), a foreign record is updated and deleted, OC falls to 0 (OFRB
   * cleared), a home delete frees a slot while OC &gt; 0, and the next key goes home again.
   */
  @Test
  void overflowIntoANeighbour() {
    Geometry g = Geometry.ESH;
    List<Long> a = keysIn(g, 5, 0, 0, 19, 1);
    List<Long> b = keysIn(g, 6, 0, 0, 3, 1);
    List<Op> setup = new ArrayList<>();
    for (int i = 0; i < 14; i++) {
      setup.add(Op.put(a.get(i), i));
    }
    b.forEach(k -> setup.add(Op.put(k, -k)));
    List<Op> work = List.of(
        Op.put(a.get(14), 14), Op.put(a.get(15), 15), new Op(Kind.REPLACE, a.get(14), 140),
        Op.remove(a.get(14)), Op.remove(a.get(15)), Op.put(a.get(16), 16), Op.remove(a.get(0)),
        Op.put(a.get(17), 17), Op.put(a.get(18), 18));
    EshTable dry = dryRun(g, 0, setup);
    work.subList(0, 2).forEach(o -> o.apply(dry));
    assertTrue(dry.stats().details().get("overflowRecords") == 2, "the workload overflows: " + dry.stats());
    crash(dir, "overflow", g, 0, setup, work, true);
  }

  /** The only segment (depth 0) fills completely; the next insert splits it with a doubling. */
  @Test
  void splitWithDoubling() {
    Geometry g = Geometry.ESH;
    EshTable probe = dryRun(g, 0, List.of());
    long k = 0;
    while (probe.splits.get() == 0) {
      probe.put(++k * 7919, k);
    }
    List<Op> setup = new ArrayList<>();
    for (long i = 1; i < k; i++) {
      setup.add(Op.put(i * 7919, i));
    }
    List<Op> work = List.of(Op.put(k * 7919, k), Op.remove(7919), Op.put(2 * 7919, -2));
    EshTable dry = dryRun(g, 0, setup);
    assertTrue(dry.size() == g.slots(), "the setup fills the segment: " + dry.stats());
    work.forEach(o -> o.apply(dry));
    assertTrue(dry.doublings.get() == 1 && dry.splits.get() == 1, "the workload splits and doubles: " + dry.stats());
    crash(dir, "split-with-doubling", g, 0, setup, work, true, false);
  }

  /** A segment of local depth 1 under a directory of depth 2 fills: a split without doubling. */
  @Test
  void splitWithoutDoubling() {
    Geometry g = Geometry.SMALL;
    EshTable probe = dryRun(g, 0, List.of());
    long k = 0;
    for (;;) {
      long splits = probe.splits.get();
      long doublings = probe.doublings.get();
      probe.put(++k * 7919, k);
      if (probe.splits.get() > splits && probe.doublings.get() == doublings) {
        break;
      }
    }
    List<Op> setup = new ArrayList<>();
    for (long i = 1; i < k; i++) {
      setup.add(Op.put(i * 7919, i));
    }
    List<Op> work = List.of(Op.put(k * 7919, k), Op.remove(3 * 7919), Op.put(k * 7919 + 1, 1));
    crash(dir, "split-without-doubling", g, 0, setup, work, true);
  }

  /**
   * A table created with four segments (depth 2): inserts, an update and a delete spread over
   * them. Every other crash test starts from one segment of depth 0, whose shape, recovery lock
   * and states are zero or rebuilt by recovery; here the shapes written by create are not zero,
   * so an image whose segments create did not make durable fails invariant I at open.
   */
  @Test
  void insertUpdateDeleteInATableCreatedWithFourSegments() {
    Geometry g = Geometry.SMALL;
    long capacity = 4L * g.slots() * 3 / 4;
    EshTable dry = dryRun(g, capacity, List.of());
    assertTrue(dry.globalDepth() == 2, "create makes four segments: " + dry.stats());
    List<Op> work = new ArrayList<>();
    for (long i = 1; i <= 8; i++) {
      work.add(Op.put(i * 7919, i));
    }
    work.add(Op.put(7919, -1));
    work.add(Op.remove(2 * 7919));
    work.forEach(o -> o.apply(dry));
    assertTrue(dry.splits.get() == 0, "the workload does not split: " + dry.stats());
    crash(dir, "four-segments", g, capacity, List.of(), work, false);
  }

  /** Random puts and removes across several splits of four-bucket segments. */
  @Test
  void mixedWorkloadAcrossSplits() {
    mixed("mixed", Geometry.SMALL);
  }

  /** The same with ACCEH's 64-byte buckets (two records each, eight buckets per segment). */
  @Test
  void mixedWorkloadAcrossSplitsAcceh() {
    mixed("mixed-acceh", new Geometry(64, 8));
  }

  private void mixed(String name, Geometry g) {
    EshTable probe = dryRun(g, 0, List.of());
    long first = 0;
    long k = 0;
    while (probe.splits.get() < 5) {
      probe.put(++k * 7919, k);
      if (first == 0 && probe.splits.get() == 1) {
        first = k;
      }
    }
    List<Op> setup = new ArrayList<>();
    for (long i = 1; i < first - 5; i++) {
      setup.add(Op.put(i * 7919, i));
    }
    List<Op> work = new ArrayList<>();
    for (long i = Math.max(1, first - 5); i <= k + 2; i++) {
      work.add(Op.put(i * 7919, i));
      if (i % 3 == 0) {
        work.add(Op.remove((i - 7) * 7919));
      }
    }
    EshTable dry = dryRun(g, 0, setup);
    work.forEach(o -> o.apply(dry));
    assertTrue(dry.splits.get() >= 2, "the workload splits: " + dry.stats());
    crash(dir, name, g, 0, setup, work, false);
  }
}
