package io.pmhash.schemes.nvlh;


import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.crash.CrashHarness;
import io.pmhash.core.crash.CrashPoint;
import io.pmhash.core.crash.ImageKind;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.CrashModel;
import io.pmhash.schemes.contract.CrashModel.Op;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The crash-test machinery of this package, for NVLH and NVDH: table configurations, a
 * harness run that crashes at every drain of the workload (and, when asked, of recovery), and
 * one verifier. It opens the image (lane rollback, then the scheme's recovery) and checks the
 * contents against the model ({@link Op#checkContents}), the scheme's invariants ({@link
 * NvlhInvariants}: nothing pending, no flag, no leaked block), and that the table keeps working.
 */
final class NvlhCrashSupport {
  private NvlhCrashSupport() {}

  /** A table configuration under test; {@code n0} is NVLH's round-0 buckets (4, as in Fig. 1). */
  record Config(String scheme, long n0, int segShift, int splitLoad, int mergeLoad, int singleTxChain, boolean nvdhTransactions) {
    static Config nvlh(int segShift, int splitLoad, int mergeLoad) {
      return new Config(NvlhProvider.NAME, 4, segShift, splitLoad, mergeLoad, 4, false);
    }

    static final Config NVDH = new Config(NvdhProvider.NAME, 0, 0, 0, 0, 0, false);

    /** NVDH with every write a durable transaction, as the paper's baseline. */
    static final Config NVDH_TX = new Config(NvdhProvider.NAME, 0, 0, 0, 0, 0, true);

    /** @return this configuration with every split and merge taking the flagged multi-transaction protocol */
    Config flagged() {
      return new Config(scheme, n0, segShift, splitLoad, mergeLoad, 0, nvdhTransactions);
    }

    private LongHashTable tune(LongHashTable t) {
      if (t instanceof NvlhTable n) {
        n.singleTxChain = singleTxChain;
      }
      return t;
    }

    boolean isNvlh() {
      return scheme.equals(NvlhProvider.NAME);
    }

    LongHashTable create(Pool pool) {
      return tune(isNvlh() ? NvlhTable.create(pool, n0, segShift, splitLoad, mergeLoad) : NvdhTable.create(pool, 0, nvdhTransactions));
    }

    LongHashTable open(Pool pool) {
      return tune(isNvlh() ? NvlhTable.open(pool, splitLoad, mergeLoad) : NvdhTable.open(pool, nvdhTransactions));
    }

    TableOptions options() {
      TableOptions o = TableOptions.scheme(scheme);
      return isNvlh()
          ? o.withParam(NvlhProvider.INITIAL_BUCKETS, n0).withParam(NvlhProvider.SEGMENT_SHIFT, segShift).withParam(NvlhProvider.SPLIT_LOAD, splitLoad).withParam(NvlhProvider.MERGE_LOAD, mergeLoad)
          : o.withParam(NvdhProvider.TRANSACTIONS, nvdhTransactions ? 1 : 0);
    }

    PoolOptions poolOptions() {
      int version = isNvlh() ? NvlhLayout.LAYOUT_VERSION : NvdhLayout.LAYOUT_VERSION;
      return PoolOptions.defaults().withScheme(scheme, version)
          .withGeometry(2, 4096, 64 << 10).withInitialSize(1 << 20);
    }
  }

  /** The volatile tables of {@link #dryRun}, closed after each test (each maps its own reserve). */
  static final List<LongHashTable> DRY = new ArrayList<>();

  static void closeDryRuns() {
    DRY.forEach(LongHashTable::close);
    DRY.clear();
  }

  /** Runs setup and work on a volatile table, for tests that check their workload reaches the path they pin. */
  static LongHashTable dryRun(Config c, List<Op> setup, List<Op> work) {
    LongHashTable t = c.tune(PmHash.createVolatile(c.options()));
    DRY.add(t);
    setup.forEach(o -> o.apply(t));
    work.forEach(o -> o.apply(t));
    return t;
  }

  static CrashHarness.Report crash(Path dir, String name, Config c, List<Op> setup, List<Op> work, boolean recoveryCrashes) {
    return crash(dir, name, c, setup, work, recoveryCrashes, (t, point) -> {});
  }

  /**
   * {@link #crash(Path, String, Config, List, List, boolean)} with a further check of each
   * recovered table, after the invariants and before the table's last use ({@link
   * CrashModel#checkStillWorks}).
   */
  static CrashHarness.Report crash(Path dir, String name, Config c, List<Op> setup, List<Op> work, boolean recoveryCrashes,
      BiConsumer<LongHashTable, CrashPoint> then) {
    CrashHarness.Builder b = CrashHarness.builder(dir, c.poolOptions())
        .images(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE)
        .randomImages(3, 0x1E7E1L)
        .eachLineCap(64)
        .crashDuringRecovery(recoveryCrashes)
        .setup(pool -> {
          LongHashTable t = c.create(pool);
          setup.forEach(o -> o.apply(t));
        });
    if (recoveryCrashes) {
      b.recoveryImages(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE);
    }
    List<Map<Long, Long>> states = CrashModel.states(setup, work);
    CrashHarness.Report r = b.run(workload(c, work), (pool, point) -> verify(c, pool, point, states, work, then));
    System.out.println("NvlhCrash " + c.scheme() + " " + name + ": " + r.summary());
    return r;
  }

  static CrashHarness.Workload workload(Config c, List<Op> work) {
    return (pool, ops) -> {
      LongHashTable t = c.open(pool);
      for (int i = 0; i < work.size(); i++) {
        ops.begin(i);
        work.get(i).apply(t);
        ops.end(i);
      }
      t.close(); // a clean shutdown: its marker's images open clean (docs/reliability.md, "Clean close")
    };
  }

  static void verify(Config c, Pool pool, CrashPoint point, List<Map<Long, Long>> states, List<Op> work,
      BiConsumer<LongHashTable, CrashPoint> then) {
    LongHashTable t = c.open(pool);
    CrashHarness.recovered(pool);
    CrashModel.checkRecovered(t, point, states, work);
    if (t instanceof NvlhTable n) {
      NvlhInvariants.check(n, point.describe());
    } else {
      NvlhInvariants.check((NvdhTable) t, point.describe());
    }
    then.accept(t, point);
    CrashModel.checkStillWorks(t, point.describe());
  }
}
