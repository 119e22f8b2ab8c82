package io.pmhash.schemes.esh;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.crash.CrashHarness;
import io.pmhash.core.crash.CrashPoint;
import io.pmhash.core.crash.ImageKind;
import io.pmhash.core.hash.Hashing;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.CrashModel;
import io.pmhash.schemes.contract.CrashModel.Op;
import io.pmhash.schemes.internal.ExtendibleDirectory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The crash-test machinery of this package: operations with a model, a harness run that crashes
 * at every drain of the workload (and, optionally, of recovery), and the verifier every crash
 * test shares. The verifier checks the raw image first (invariant I of {@link EshSplit}), then
 * opens the table (O(1): one drain, no segment recovered), recovers every segment by touching it,
 * and checks: no completed write lost, no deleted key back, the in-flight operation all or
 * nothing, no duplicates, exact metadata ({@link EshInvariants#check}), size equal to a scan, no
 * leaked block, and the table keeps working.
 */
final class EshCrashSupport {
  private EshCrashSupport() {}

  /** A bucket size and a segment size. */
  record Geometry(int bucketBytes, int buckets) {
    static final Geometry ESH = new Geometry(256, EshLayout.DEFAULT_BUCKETS);
    static final Geometry SMALL = new Geometry(256, 4);

    int slots() {
      return buckets * EshTable.pairsOf(bucketBytes);
    }

    PoolOptions poolOptions() {
      return PoolOptions.defaults().withScheme(EshProvider.NAME, EshLayout.LAYOUT_VERSION, bucketBytes, buckets)
          .withGeometry(2, 4096, 64 << 10).withInitialSize(1 << 20);
    }

    TableOptions tableOptions() {
      return TableOptions.scheme(EshProvider.NAME).withParam(EshProvider.BUCKET_BYTES, bucketBytes).withParam(EshProvider.BUCKETS, buckets);
    }
  }

  /** Keys whose home is bucket {@code bucket} and whose top {@code depth} hash bits are {@code prefix}, from {@code from} up. */
  static List<Long> keysIn(Geometry g, int bucket, int depth, long prefix, int count, long from) {
    List<Long> out = new ArrayList<>();
    for (long k = from; out.size() < count; k++) {
      long h = Hashing.hash(k);
      if (((h >>> 8) & (g.buckets() - 1)) == bucket && ExtendibleDirectory.prefix(h, depth) == prefix) {
        out.add(k);
      }
    }
    return out;
  }

  /** The volatile tables of {@link #dryRun}, closed after each test (each maps its own reserve). */
  static final List<EshTable> DRY = new ArrayList<>();

  static void closeDryRuns() {
    DRY.forEach(EshTable::close);
    DRY.clear();
  }

  /** Runs the setup on a volatile table, for tests that check their workload's shape. */
  static EshTable dryRun(Geometry g, long capacity, List<Op> setup) {
    EshTable t = (EshTable) PmHash.createVolatile(g.tableOptions().withInitialCapacity(capacity));
    DRY.add(t);
    setup.forEach(o -> o.apply(t));
    return t;
  }

  /** Totals over all crash tests of the package, for the closing report. */
  static final Map<String, long[]> TOTALS = new HashMap<>();

  static CrashHarness.Report crash(Path dir, String name, Geometry g, long capacity, List<Op> setup, List<Op> work, boolean recoveryCrashes) {
    return crash(dir, name, g, capacity, setup, work, recoveryCrashes, true);
  }

  /**
   * {@code eachLineRecovery}: recovery is crashed with EACH_LINE images too (else DRAINED and
   * ALL_PENDING only: a 16 KB segment's split leaves 257 lines pending, and every image of it
   * would be recovered and crashed again).
   */
  static CrashHarness.Report crash(Path dir, String name, Geometry g, long capacity, List<Op> setup, List<Op> work, boolean recoveryCrashes, boolean eachLineRecovery) {
    List<Map<Long, Long>> states = CrashModel.states(setup, work);
    CrashHarness.Builder b = CrashHarness.builder(dir, g.poolOptions())
        .images(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE)
        .randomImages(3, 0xE5EL)
        .eachLineCap(64)
        .crashDuringRecovery(recoveryCrashes)
        .setup(pool -> {
          EshTable t = EshTable.create(pool, g.bucketBytes(), g.buckets(), capacity);
          setup.forEach(o -> o.apply(t));
        });
    if (recoveryCrashes && eachLineRecovery) {
      b.recoveryImages(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE);
    } else if (recoveryCrashes) {
      b.recoveryImages(ImageKind.DRAINED, ImageKind.ALL_PENDING);
    }
    CrashHarness.Report r = b.run(
        (pool, ops) -> {
          EshTable t = EshTable.open(pool);
          for (int i = 0; i < work.size(); i++) {
            ops.begin(i);
            work.get(i).apply(t);
            ops.end(i);
          }
          t.close(); // a clean shutdown: its marker's images open clean (docs/reliability.md, "Clean close")
        },
        (pool, point) -> verify(pool, point, states, work));
    System.out.println("EshCrash " + name + ": " + r.summary());
    synchronized (TOTALS) {
      TOTALS.put(name, new long[] {r.crashPoints(), r.recoveryCrashPoints(), r.imagesChecked()});
    }
    return r;
  }

  static void verify(Pool pool, CrashPoint point, List<Map<Long, Long>> states, List<Op> work) {
    String at = point.describe();
    EshInvariants.checkRouting(pool, at + " (image before recovery)");
    long drains = pool.persistence().stats().drains();
    EshTable t = EshTable.open(pool);
    // O(1) open (Table 4.1): the new global version is persisted; no segment is touched
    assertEquals(pool.lastShutdownClean() ? 0 : 1, pool.persistence().stats().drains() - drains, at + ": drains at open (a new global version after a crash)");
    assertEquals(0, t.recoveredSegments.get(), at + ": segments recovered at open");
    t.recoverAll(); // touches, and so recovers, every segment
    CrashHarness.recovered(pool);
    CrashModel.checkRecovered(t, point, states, work);
    EshInvariants.check(pool, t, at);
    CrashModel.checkStillWorks(t, at);
  }
}
