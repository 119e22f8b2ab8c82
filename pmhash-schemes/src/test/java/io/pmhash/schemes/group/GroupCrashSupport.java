package io.pmhash.schemes.group;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.PoolOptions;
import io.pmhash.core.crash.CrashHarness;
import io.pmhash.core.crash.ImageKind;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.CrashModel;
import io.pmhash.schemes.contract.CrashModel.Op;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The crash-test machinery of this package: operations with a model, a harness run that crashes
 * at every drain of the workload (and, when asked, of recovery), and the verifier every crash
 * test shares ({@link CrashModel} plus {@link GroupInvariants}). Tables have groups of 64 cells and start at one group, so that a few dozen
 * inserts reach level 2 and expand the table. The verifier opens the image (lane replay, then
 * Algorithm 4) and checks: no completed write lost, no deleted key back, the in-flight operation
 * all or nothing, no key twice, every record in its level-1 cell or its level-2 group, size equal
 * to a scan, every free cell zero, root 0 naming the table in use and exactly one owned block (no
 * leaked table), and that the table keeps working.
 */
final class GroupCrashSupport {
  private GroupCrashSupport() {}

  static final int GROUP_SIZE = 64;

  static PoolOptions options() {
    return PoolOptions.defaults().withScheme(GroupProvider.NAME, GroupLayout.LAYOUT_VERSION, GROUP_SIZE, 1)
        .withGeometry(2, 4096, 64 << 10).withInitialSize(1 << 20);
  }

  /** Keys spread over the key space; 0 is among them. */
  static long key(int i) {
    return i * 0x9E3779B97F4A7C15L;
  }

  static List<Op> inserts(int from, int to) {
    List<Op> ops = new ArrayList<>();
    for (int i = from; i < to; i++) {
      ops.add(Op.put(key(i), i + 1));
    }
    return ops;
  }

  /** The volatile tables of {@link #dryRun}, closed after each test (each maps its own reserve). */
  static final List<GroupTable> DRY = new ArrayList<>();

  static void closeDryRuns() {
    DRY.forEach(GroupTable::close);
    DRY.clear();
  }

  /** Runs setup and work on a volatile table and returns it, for tests that check their workload reaches the path they pin. */
  static GroupTable dryRun(List<Op> setup, List<Op> work) {
    GroupTable t = (GroupTable) PmHash.createVolatile(TableOptions.scheme(GroupProvider.NAME).withParam(GroupProvider.GROUP_SIZE, GROUP_SIZE));
    DRY.add(t);
    setup.forEach(o -> o.apply(t));
    work.forEach(o -> o.apply(t));
    return t;
  }

  /** @return the keys of the table's records in level 2 */
  static Set<Long> inLevel2(GroupTable t) {
    GroupCells c = t.current;
    Set<Long> keys = new HashSet<>();
    for (long cell = c.cells; cell < c.capacity(); cell++) {
      if ((((long) GroupLayout.LONG.get(t.pool().memory(), c.bitmapWord(cell)) >>> cell) & 1) != 0) {
        keys.add(c.key(t.pool().memory(), cell));
      }
    }
    return keys;
  }

  static CrashHarness.Report crash(Path dir, String name, List<Op> setup, List<Op> work, boolean recoveryCrashes) {
    // the workload continues on the table the setup built: opening it again in the same pool would
    // trust the clean-close count of a pool that was never closed
    AtomicReference<GroupTable> built = new AtomicReference<>();
    CrashHarness.Builder b = CrashHarness.builder(dir, options())
        .images(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE)
        .randomImages(3, 0x6A09E667L)
        .eachLineCap(64)
        .crashDuringRecovery(recoveryCrashes)
        .setup(pool -> {
          GroupTable t = GroupTable.create(pool, GROUP_SIZE, true, 0);
          setup.forEach(o -> o.apply(t));
          built.set(t);
        });
    if (recoveryCrashes) {
      b.recoveryImages(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE);
    }
    CrashHarness.Report r = b.run(workload(built, work), verifier(setup, work));
    System.out.println("GroupCrash " + name + ": " + r.summary());
    assertTrue(r.passed(), r.summary());
    return r;
  }

  static CrashHarness.Workload workload(AtomicReference<GroupTable> built, List<Op> work) {
    return (pool, ops) -> {
      GroupTable t = built.get();
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
    return (pool, point) -> {
      String at = point.describe();
      GroupTable t = GroupTable.open(pool);
      CrashHarness.recovered(pool);
      CrashModel.checkRecovered(t, point, states, work);
      GroupInvariants.check(t, at, true);
      CrashModel.checkStillWorks(t, at);
    };
  }
}
