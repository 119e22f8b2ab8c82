package io.pmhash.schemes.level;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.crash.CrashHarness;
import io.pmhash.core.crash.CrashPoint;
import io.pmhash.core.crash.ImageKind;
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
 * at every drain of the workload (and, when asked, of recovery), and the verifier every crash
 * test shares. The verifier opens the image (recovery: lane replay, then the duplicate-removing
 * scan) and checks: no completed write lost, no deleted key back, the in-flight operation all or
 * nothing, no key twice, every record in one of its buckets, size equal to a scan, the header
 * naming the levels in use, exactly three owned blocks (no leaked level), and that the table
 * keeps working.
 */
final class LevelCrashSupport {
  private LevelCrashSupport() {}

  static PoolOptions options() {
    return PoolOptions.defaults().withScheme(LevelProvider.NAME, LevelLayout.LAYOUT_VERSION)
        .withGeometry(2, 4096, 64 << 10).withInitialSize(1 << 20);
  }

  /** Keys spread over the key space. */
  static long key(int i) {
    return CrashModel.key(i);
  }

  /**
   * The volatile tables of {@link #dryRun}, closed after each test: each maps its own reserve of
   * address space, which a long run of the tests (the mutation check) would otherwise exhaust.
   */
  static final List<LevelTable> DRY = new ArrayList<>();

  /** Closes the tables of {@link #dryRun}. */
  static void closeDryRuns() {
    DRY.forEach(LevelTable::close);
    DRY.clear();
  }

  /** Runs setup and work on a volatile table and returns it, for tests that check their workload reaches the path they pin. */
  static LevelTable dryRun(long capacity, List<Op> setup, List<Op> work) {
    LevelTable t = (LevelTable) PmHash.createVolatile(TableOptions.scheme(LevelProvider.NAME).withInitialCapacity(capacity));
    DRY.add(t);
    setup.forEach(o -> o.apply(t));
    work.forEach(o -> o.apply(t));
    return t;
  }

  static CrashHarness.Report crash(Path dir, String name, long capacity, List<Op> setup, List<Op> work, boolean recoveryCrashes) {
    CrashHarness.Report r = builder(dir, capacity, setup, recoveryCrashes).run(workload(work), verifier(setup, work));
    System.out.println("LevelCrash " + name + ": " + r.summary());
    return r;
  }

  static CrashHarness.Builder builder(Path dir, long capacity, List<Op> setup, boolean recoveryCrashes) {
    CrashHarness.Builder b = CrashHarness.builder(dir, options())
        .images(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE)
        .randomImages(3, 0x1E7E1L)
        .eachLineCap(64)
        .crashDuringRecovery(recoveryCrashes)
        .setup(pool -> {
          LevelTable t = LevelTable.create(pool, capacity);
          setup.forEach(o -> o.apply(t));
          // the workload opens the created pool as after a clean shutdown, so it takes the count
          // from the header, as the next open after this table's close would
          t.persistCleanSize();
        });
    if (recoveryCrashes) {
      b.recoveryImages(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE);
    }
    return b;
  }

  static CrashHarness.Workload workload(List<Op> work) {
    return (pool, ops) -> {
      LevelTable t = LevelTable.open(pool);
      for (int i = 0; i < work.size(); i++) {
        ops.begin(i);
        work.get(i).apply(t);
        ops.end(i);
      }
      t.close(); // a clean shutdown: its marker's images open clean (docs/reliability.md, "Clean close")
    };
  }

  static CrashHarness.Verifier verifier(List<Op> setup, List<Op> work) {
    List<Map<Long, Long>> states = CrashModel.states(setup, work);
    return (pool, point) -> verify(pool, point, states, work);
  }

  static void verify(Pool pool, CrashPoint point, List<Map<Long, Long>> states, List<Op> work) {
    String at = point.describe();
    LevelTable t = LevelTable.open(pool);
    CrashHarness.recovered(pool);
    CrashModel.checkRecovered(t, point, states, work);
    LevelInvariants.check(t, at);
    CrashModel.checkStillWorks(t, at);
  }
}
