package io.pmhash.schemes.cceh;

import static io.pmhash.schemes.cceh.CcehLayout.*;

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
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The crash-test machinery of this package: operations with a model, a harness run that crashes
 * at every drain of the workload (and of recovery), and the verifier every crash test shares.
 * The verifier checks the raw image first (invariant I of {@link CcehSplit}: every directory
 * entry names a segment whose durable shape covers it, no local depth above the global depth),
 * then opens the table (the directory-scan recovery) and checks: no completed write lost, no
 * deleted key back, the in-flight operation all or nothing, no duplicates, size equal to a scan,
 * no leaked block, and the table keeps working.
 */
final class CcehCrashSupport {
  private CcehCrashSupport() {}

  static PoolOptions options() {
    return PoolOptions.defaults().withScheme(CcehProvider.NAME, LAYOUT_VERSION)
        .withGeometry(2, 4096, 64 << 10).withInitialSize(1 << 20);
  }

  /** Keys whose start bucket is {@code bucket} and whose top {@code depth} hash bits are {@code prefix}, from {@code from} up. */
  static List<Long> keysIn(int bucket, int depth, long prefix, int count, long from) {
    List<Long> out = new ArrayList<>();
    for (long k = from; out.size() < count; k++) {
      long h = Hashing.hash(k);
      if (startSlot(h) == bucket * PAIRS_PER_BUCKET && prefix(h, depth) == prefix) {
        out.add(k);
      }
    }
    return out;
  }

  /**
   * The volatile tables of {@link #dryRun}, closed after each test: each maps its own reserve of
   * address space, which a long run of the tests (the mutation check) would otherwise exhaust.
   */
  static final List<CcehTable> DRY = new ArrayList<>();

  /** Closes the tables of {@link #dryRun}. */
  static void closeDryRuns() {
    DRY.forEach(CcehTable::close);
    DRY.clear();
  }

  /** Runs the setup on a volatile table, for tests that pick their workload from its shape. */
  static CcehTable dryRun(long capacity, List<Op> setup) {
    CcehTable t = (CcehTable) PmHash.createVolatile(TableOptions.scheme(CcehProvider.NAME).withInitialCapacity(capacity));
    DRY.add(t);
    setup.forEach(o -> o.apply(t));
    return t;
  }

  /** Totals over all crash tests of the package, for the closing report. */
  static final Map<String, long[]> TOTALS = new HashMap<>();

  static CrashHarness.Report crash(Path dir, String name, long capacity, List<Op> setup, List<Op> work, boolean recoveryCrashes) {
    List<Map<Long, Long>> states = CrashModel.states(setup, work);
    CrashHarness.Builder b = CrashHarness.builder(dir, options())
        .images(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE)
        .randomImages(3, 0xCCE4L)
        .eachLineCap(64)
        .crashDuringRecovery(recoveryCrashes)
        .setup(pool -> {
          CcehTable t = CcehTable.create(pool, capacity);
          setup.forEach(o -> o.apply(t));
        });
    if (recoveryCrashes) {
      b.recoveryImages(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE);
    }
    CrashHarness.Report r = b.run(
        (pool, ops) -> {
          CcehTable t = CcehTable.open(pool);
          for (int i = 0; i < work.size(); i++) {
            ops.begin(i);
            work.get(i).apply(t);
            ops.end(i);
          }
          t.close(); // a clean shutdown: its marker's images open clean (docs/reliability.md, "Clean close")
        },
        (pool, point) -> verify(pool, point, states, work));
    System.out.println("CcehCrash " + name + ": " + r.summary());
    synchronized (TOTALS) {
      TOTALS.put(name, new long[] {r.crashPoints(), r.recoveryCrashPoints(), r.imagesChecked()});
    }
    return r;
  }

  static void verify(Pool pool, CrashPoint point, List<Map<Long, Long>> states, List<Op> work) {
    String at = point.describe();
    // invariant I on the durable image, before recovery touches it
    CcehInvariants.checkRouting(pool, at + " (image before recovery)");
    CcehTable t = CcehTable.open(pool);
    CrashHarness.recovered(pool);
    CrashModel.checkRecovered(t, point, states, work);
    CcehInvariants.check(pool, t, at);
    CrashModel.checkStillWorks(t, at);
  }
}
