package io.pmhash.schemes.cceh;

import static io.pmhash.schemes.cceh.CcehLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.crash.CrashHarness;
import io.pmhash.core.crash.CrashPoint;
import io.pmhash.core.crash.ImageKind;
import io.pmhash.core.hash.Hashing;
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

  enum Kind { PUT, REMOVE, PUT_IF_ABSENT, REPLACE }

  record Op(Kind kind, long key, long value) {
    static Op put(long k, long v) {
      return new Op(Kind.PUT, k, v);
    }

    static Op remove(long k) {
      return new Op(Kind.REMOVE, k, 0);
    }

    void apply(CcehTable t) {
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
    Map<Long, Long> s = new HashMap<>();
    setup.forEach(o -> o.apply(s));
    List<Map<Long, Long>> states = new ArrayList<>();
    states.add(new HashMap<>(s));
    for (Op o : work) {
      o.apply(s);
      states.add(new HashMap<>(s));
    }
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
    CcehInvariants.check(pool, t, at);
    for (long k = 1; k <= 3; k++) {
      long key = -k * 0x9E3779B97F4A7C15L;
      t.put(key, k);
      assertEquals(k, t.get(key, -1), at + ": the table works after recovery");
      t.remove(key);
    }
  }
}
