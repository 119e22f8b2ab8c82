package io.pmhash.schemes.nvlh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.crash.CrashHarness;
import io.pmhash.core.crash.CrashPoint;
import io.pmhash.core.crash.ImageKind;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The crash-test machinery of this package, for NVLH and NVDH: operations with a model, a
 * harness run that crashes at every drain of the workload (and, when asked, of recovery), and
 * one verifier. It opens the image (lane rollback, then the scheme's recovery) and checks: no
 * completed write lost, no deleted key back, the in-flight operation all or nothing, no key
 * twice, get and a scan agree, the scheme's invariants ({@link NvlhInvariants}: nothing pending,
 * no flag, no leaked block), and that the table keeps working.
 */
final class NvlhCrashSupport {
  private NvlhCrashSupport() {}

  /** A table configuration under test. */
  record Config(String scheme, long capacity, int segShift, int splitLoad, int mergeLoad, int singleTxChain) {
    static Config nvlh(int segShift, int splitLoad, int mergeLoad) {
      return new Config(NvlhProvider.NAME, 0, segShift, splitLoad, mergeLoad, 4);
    }

    static final Config NVDH = new Config(NvdhProvider.NAME, 0, 0, 0, 0, 0);

    /** @return this configuration with every split and merge taking the flagged multi-transaction protocol */
    Config flagged() {
      return new Config(scheme, capacity, segShift, splitLoad, mergeLoad, 0);
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
      return tune(isNvlh() ? NvlhTable.create(pool, capacity, segShift, splitLoad, mergeLoad) : NvdhTable.create(pool, capacity));
    }

    LongHashTable open(Pool pool) {
      return tune(isNvlh() ? NvlhTable.open(pool, splitLoad, mergeLoad) : NvdhTable.open(pool));
    }

    TableOptions options() {
      TableOptions o = TableOptions.scheme(scheme).withInitialCapacity(capacity);
      return isNvlh()
          ? o.withParam(NvlhProvider.SEGMENT_SHIFT, segShift).withParam(NvlhProvider.SPLIT_LOAD, splitLoad).withParam(NvlhProvider.MERGE_LOAD, mergeLoad)
          : o;
    }

    PoolOptions poolOptions() {
      int version = isNvlh() ? NvlhLayout.LAYOUT_VERSION : NvdhLayout.LAYOUT_VERSION;
      return PoolOptions.defaults().withScheme(scheme, version)
          .withGeometry(2, 4096, 64 << 10).withInitialSize(1 << 20);
    }
  }

  enum Kind { PUT, REMOVE, PUT_IF_ABSENT, REPLACE }

  record Op(Kind kind, long key, long value) {
    static Op put(long k, long v) {
      return new Op(Kind.PUT, k, v);
    }

    static Op remove(long k) {
      return new Op(Kind.REMOVE, k, 0);
    }

    void apply(LongHashTable t) {
      switch (kind) {
        case PUT -> t.put(key, value);
        case REMOVE -> t.remove(key);
        case PUT_IF_ABSENT -> t.putIfAbsent(key, value);
        case REPLACE -> t.replace(key, value);
      }
    }

    void apply(Map<Long, Long> m) {
      switch (kind) {
        case PUT -> m.put(key, value);
        case REMOVE -> m.remove(key);
        case PUT_IF_ABSENT -> m.putIfAbsent(key, value);
        case REPLACE -> m.replace(key, value);
      }
    }
  }

  /** Keys spread over the key space. */
  static long key(int i) {
    return (i + 1) * 0x9E3779B97F4A7C15L;
  }

  static List<Op> inserts(int from, int to) {
    List<Op> ops = new ArrayList<>();
    for (int i = from; i < to; i++) {
      ops.add(Op.put(key(i), i));
    }
    return ops;
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
    CrashHarness.Report r = b.run(workload(c, work), verifier(c, setup, work));
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
    };
  }

  static CrashHarness.Verifier verifier(Config c, List<Op> setup, List<Op> work) {
    Map<Long, Long> s = new HashMap<>();
    setup.forEach(o -> o.apply(s));
    List<Map<Long, Long>> states = new ArrayList<>();
    states.add(new HashMap<>(s));
    for (Op o : work) {
      o.apply(s);
      states.add(new HashMap<>(s));
    }
    return (pool, point) -> verify(c, pool, point, states, work);
  }

  static void verify(Config c, Pool pool, CrashPoint point, List<Map<Long, Long>> states, List<Op> work) {
    String at = point.describe();
    LongHashTable t = c.open(pool);
    CrashHarness.recovered(pool);
    int done = point.opsCompleted();
    Map<Long, Long> before = states.get(done);
    Map<Long, Long> after = point.inFlightOp().isPresent() ? states.get(done + 1) : before;
    Long inFlightKey = point.inFlightOp().isPresent() ? work.get((int) point.inFlightOp().getAsLong()).key() : null;
    Map<Long, Long> seen = new HashMap<>();
    t.forEach((k, v) -> {
      if (seen.put(k, v) != null) {
        throw new AssertionError(at + ": key " + k + " twice");
      }
    });
    assertEquals(seen.size(), t.size(), at + ": size equals a scan");
    Set<Long> keys = new HashSet<>(before.keySet());
    keys.addAll(after.keySet());
    keys.addAll(seen.keySet());
    for (long k : keys) {
      Long got = seen.get(k);
      Long viaGet = t.containsKey(k) ? t.get(k, 0) : null;
      assertEquals(got, viaGet, at + ": get and scan agree on " + k);
      if (inFlightKey != null && k == inFlightKey) {
        assertTrue(Objects.equals(got, before.get(k)) || Objects.equals(got, after.get(k)),
            at + ": in-flight key " + k + " is " + got + ", neither " + before.get(k) + " nor " + after.get(k));
      } else {
        assertEquals(before.get(k), got, at + ": key " + k);
      }
    }
    if (t instanceof NvlhTable n) {
      NvlhInvariants.check(n, at);
    } else {
      NvlhInvariants.check((NvdhTable) t, at);
    }
    for (long k = 1; k <= 3; k++) {
      long key = -k * 0x7F4A7C159E3779B9L;
      t.put(key, k);
      assertEquals(k, t.get(key, -1), at + ": the table works after recovery");
      t.remove(key);
    }
  }
}
