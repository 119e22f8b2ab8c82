package io.pmhash.schemes.level;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.crash.CrashHarness;
import io.pmhash.core.crash.CrashPoint;
import io.pmhash.core.crash.ImageKind;
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
 * at every drain of the workload (and, when asked, of recovery), and the verifier every crash
 * test shares. The verifier opens the image (recovery: lane replay, then the duplicate-removing
 * scan) and checks: no completed write lost, no deleted key back, the in-flight operation all or
 * nothing, no key twice, every record in one of its buckets, size equal to a scan, the header
 * naming the levels in use, exactly three owned blocks (no leaked level), and that the table
 * keeps working.
 */
final class LevelCrashSupport {
  private LevelCrashSupport() {}

  enum Kind { PUT, REMOVE, PUT_IF_ABSENT, REPLACE }

  record Op(Kind kind, long key, long value) {
    static Op put(long k, long v) {
      return new Op(Kind.PUT, k, v);
    }

    static Op remove(long k) {
      return new Op(Kind.REMOVE, k, 0);
    }

    void apply(LevelTable t) {
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
    return PoolOptions.defaults().withScheme(LevelProvider.NAME, LevelLayout.LAYOUT_VERSION)
        .withGeometry(2, 4096, 64 << 10).withInitialSize(1 << 20);
  }

  /** Keys spread over the key space. */
  static long key(int i) {
    return (i + 1) * 0x9E3779B97F4A7C15L;
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
    Map<Long, Long> s = new HashMap<>();
    setup.forEach(o -> o.apply(s));
    List<Map<Long, Long>> states = new ArrayList<>();
    states.add(new HashMap<>(s));
    for (Op o : work) {
      o.apply(s);
      states.add(new HashMap<>(s));
    }
    return (pool, point) -> verify(pool, point, states, work);
  }

  static void verify(Pool pool, CrashPoint point, List<Map<Long, Long>> states, List<Op> work) {
    String at = point.describe();
    LevelTable t = LevelTable.open(pool);
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
    LevelInvariants.check(t, at);
    for (long k = 1; k <= 3; k++) {
      long key = -k * 0x7F4A7C159E3779B9L;
      t.put(key, k);
      assertEquals(k, t.get(key, -1), at + ": the table works after recovery");
      t.remove(key);
    }
  }
}
