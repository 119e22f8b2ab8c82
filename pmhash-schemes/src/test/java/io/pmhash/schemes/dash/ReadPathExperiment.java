package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashBucket.allocated;
import static io.pmhash.schemes.dash.DashBucket.bitmap;
import static io.pmhash.schemes.dash.DashBucket.find;
import static io.pmhash.schemes.dash.DashBucket.value;
import static io.pmhash.schemes.dash.DashLayout.BITMAP;
import static io.pmhash.schemes.dash.DashLayout.DIR_DEPTH;
import static io.pmhash.schemes.dash.DashLayout.DIR_ENTRIES;
import static io.pmhash.schemes.dash.DashLayout.FP;
import static io.pmhash.schemes.dash.DashLayout.HDR_DIRECTORY;
import static io.pmhash.schemes.dash.DashLayout.INT;
import static io.pmhash.schemes.dash.DashLayout.LOCK;
import static io.pmhash.schemes.dash.DashLayout.LONG;
import static io.pmhash.schemes.dash.DashLayout.NORMAL_BUCKETS;
import static io.pmhash.schemes.dash.DashLayout.PAIRS;
import static io.pmhash.schemes.dash.DashLayout.PAIR_BYTES;
import static io.pmhash.schemes.dash.DashLayout.SEG_SHAPE;
import static io.pmhash.schemes.dash.DashLayout.SLOT_MASK;
import static io.pmhash.schemes.dash.DashLayout.prefix;
import static io.pmhash.schemes.dash.DashSegment.bucket;
import static io.pmhash.schemes.dash.DashSegment.bucketIndex;
import static io.pmhash.schemes.dash.DashSegment.covers;
import static io.pmhash.schemes.dash.DashSegment.fingerprintOf;
import static io.pmhash.schemes.dash.DashSegment.shapeAcquire;

import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.concurrent.EpochReclaimer;
import io.pmhash.core.concurrent.VersionLock;
import io.pmhash.core.hash.ByteMatch;
import io.pmhash.core.hash.Hashing;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where a Dash-EH positive search spends its time on the JVM: the shipped {@link DashEhTable#get}
 * beside copies of its read path with pieces taken away or its memory accesses done another way,
 * over the same table in the same JVM, alternating, so that the machine's drift hits every variant
 * alike. An experiment, not a test (no assertion on time; docs/persistence.md, "What one cache
 * miss costs", gives its results). Variants:
 *
 * <ul>
 *   <li>{@code get} — the shipped read path.
 *   <li>{@code copy} — Algorithm 3 as shipped (epoch, both buckets' version snapshots, shape
 *       check, validation) without the stash probe and without {@code locate}'s bounds checks,
 *       recovery-version check and side-link loop: the part every variant below keeps.
 *   <li>{@code bare} — {@code copy} without the epoch and the versions: directory, two buckets'
 *       fingerprints, one key, one value. Not a correct concurrent read; a floor.
 *   <li>{@code absolute} — {@code copy} with every access made through one constant segment that
 *       spans the address space ({@code MemorySegment.NULL.reinterpret(Long.MAX_VALUE)}, absolute
 *       addresses): FFM's per-access liveness, bounds and null checks fold away, so this is what
 *       the checks of the mapping segment cost. Not safe to ship as it is: an access past the
 *       mapping, or after the pool is closed, reads whatever is there or kills the JVM.
 *   <li>{@code unsafe} — {@code copy} through {@code sun.misc.Unsafe} (bound method handles, found
 *       reflectively, so the build stays free of its warnings): no check at all, the JVM's floor
 *       for this algorithm. Its memory-access methods are deprecated for removal; never shipped.
 * </ul>
 *
 * <p>Run (tmpfs file, {@code PMEM_EMULATED}: the workload's setting; 1M + 5M keys as the
 * workload's preload and insert, then positive searches of the 5M):
 *
 * <pre>
 *   ./pmhash mvn -q -pl pmhash-schemes -am test-compile
 *   "$(./pmhash java-home)/bin/java" --enable-native-access=ALL-UNNAMED \
 *       -cp pmhash-core/target/classes:pmhash-schemes/target/classes:pmhash-schemes/target/test-classes \
 *       io.pmhash.schemes.dash.ReadPathExperiment /dev/shm/read-path.pool
 * </pre>
 */
public final class ReadPathExperiment {
  private ReadPathExperiment() {}

  private static final int PRELOAD = 1_000_000;
  private static final int INSERTED = 5_000_000;
  private static final int ROUNDS = 6;

  /** The whole address space as one segment: constant, so the JIT folds its checks. */
  @SuppressWarnings("restricted")
  private static final MemorySegment EVERYTHING = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

  private static final MethodHandle UNSAFE_LONG;
  private static final MethodHandle UNSAFE_INT;
  private static final MethodHandle UNSAFE_LONG_VOLATILE;
  private static final MethodHandle UNSAFE_INT_VOLATILE;

  static {
    try {
      Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
      Field f = unsafeClass.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      Object unsafe = f.get(null);
      MethodHandles.Lookup l = MethodHandles.lookup();
      UNSAFE_LONG = l.findVirtual(unsafeClass, "getLong", MethodType.methodType(long.class, long.class)).bindTo(unsafe);
      UNSAFE_INT = l.findVirtual(unsafeClass, "getInt", MethodType.methodType(int.class, long.class)).bindTo(unsafe);
      UNSAFE_LONG_VOLATILE = MethodHandles.insertArguments(l.findVirtual(unsafeClass, "getLongVolatile",
          MethodType.methodType(long.class, Object.class, long.class)).bindTo(unsafe), 0, (Object) null);
      UNSAFE_INT_VOLATILE = MethodHandles.insertArguments(l.findVirtual(unsafeClass, "getIntVolatile",
          MethodType.methodType(int.class, Object.class, long.class)).bindTo(unsafe), 0, (Object) null);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private static long header;
  private static EpochReclaimer epochs;

  /**
   * Builds the table, then times each variant {@value #ROUNDS} times, alternating.
   *
   * @param args the pool file (it is replaced)
   * @throws Throwable if the pool cannot be created (or a method handle call fails)
   */
  public static void main(String[] args) throws Throwable {
    Path file = Path.of(args.length > 0 ? args[0] : "read-path.pool");
    Files.deleteIfExists(file);
    try (Pool pool = Pool.create(file, PoolOptions.defaults().withDurability(Durability.PMEM_EMULATED).withScheme(DashEhProvider.NAME, 1, 0))) {
      DashEhTable table = DashEhTable.create(pool, 2, 1000);
      header = table.header;
      epochs = pool.epochs();
      long[] keys = new long[PRELOAD + INSERTED];
      for (int i = 0; i < keys.length; i++) {
        keys[i] = key(i);
        table.put(keys[i], i);
      }
      long[] probe = new long[INSERTED];
      System.arraycopy(keys, PRELOAD, probe, 0, INSERTED);
      MemorySegment m = pool.memory();
      String[] variants = {"get", "located", "locatedNoStash", "copy", "bare", "absolute", "unsafe"};
      Map<String, List<Double>> ns = new LinkedHashMap<>();
      for (String v : variants) {
        ns.put(v, new ArrayList<>());
      }
      for (int round = 0; round <= ROUNDS; round++) {
        for (String v : variants) {
          long t0 = System.nanoTime();
          long sum = run(v, table, m, probe);
          double perOp = (double) (System.nanoTime() - t0) / probe.length;
          if (round > 0) { // round 0 compiles
            ns.get(v).add(perOp);
          }
          if (sum == 42) {
            System.out.println(); // keeps sum live
          }
        }
      }
      System.out.printf("dash-eh positive search, %,d records, %,d searches per round, %d rounds (epochs: %s)%n",
          keys.length, probe.length, ROUNDS, EpochReclaimer.fences());
      for (Map.Entry<String, List<Double>> e : ns.entrySet()) {
        List<Double> l = e.getValue();
        Collections.sort(l);
        System.out.printf("  %-9s min %6.1f  median %6.1f ns/op%n", e.getKey(), l.get(0), l.get(l.size() / 2));
      }
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /** The workload's keys ({@code io.pmhash.jmh.workload.Keys}, seed 42): SplitMix64's finalizer. */
  private static long key(long index) {
    long z = 42 * 0x9E3779B97F4A7C15L + index;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  private static long run(String variant, DashEhTable table, MemorySegment m, long[] probe) throws Throwable {
    long sum = 0;
    switch (variant) {
      case "get" -> {
        for (long k : probe) {
          sum += table.get(k, -1);
        }
      }
      case "copy" -> {
        for (long k : probe) {
          sum += copy(m, k);
        }
      }
      case "located" -> {
        for (long k : probe) {
          sum += located(table, k);
        }
      }
      case "locatedNoStash" -> {
        for (long k : probe) {
          sum += locatedNoStash(table, k);
        }
      }
      case "bare" -> {
        for (long k : probe) {
          sum += bare(m, k);
        }
      }
      case "absolute" -> {
        for (long k : probe) {
          sum += absolute(m.address(), k);
        }
      }
      default -> {
        for (long k : probe) {
          sum += unsafe(m.address(), k);
        }
      }
    }
    return sum;
  }

  private static long copy(MemorySegment m, long key) {
    EpochReclaimer e = epochs;
    e.enter();
    try {
      return versioned(m, key);
    } finally {
      e.exit();
    }
  }

  private static long absolute(long base, long key) {
    EpochReclaimer e = epochs;
    e.enter();
    try {
      return versionedAbsolute(base, key);
    } finally {
      e.exit();
    }
  }

  /** Algorithm 3 without the stash, on the mapping segment. */
  private static long versioned(MemorySegment m, long key) {
    long base = 0;
    long h = Hashing.hash(key);
    int fp = fingerprintOf(h);
    int y = bucketIndex(h, NORMAL_BUCKETS - 1);
    for (;;) {
      long dir = base + (long) LONG.getAcquire(m, base + header + HDR_DIRECTORY);
      int g = (int) INT.get(m, dir + DIR_DEPTH);
      long seg = base + (long) LONG.getAcquire(m, dir + DIR_ENTRIES + 8 * prefix(h, g));
      long b1 = bucket(seg, y);
      long b2 = bucket(seg, (y + 1) & (NORMAL_BUCKETS - 1));
      int v1 = VersionLock.snapshotAcquire(m, b1 + LOCK);
      int v2 = VersionLock.snapshotAcquire(m, b2 + LOCK);
      if (((v1 | v2) & VersionLock.LOCK_BIT) != 0 || !covers(shapeAcquire(m, seg), h)) {
        continue;
      }
      int slot = find(m, b1, bitmap(m, b1), key, fp);
      if (slot >= 0) {
        long v = value(m, b1, slot);
        if (VersionLock.validate(m, b1 + LOCK, v1)) {
          return v;
        }
        continue;
      }
      slot = find(m, b2, bitmap(m, b2), key, fp);
      if (slot >= 0) {
        long v = value(m, b2, slot);
        if (VersionLock.validate(m, b2 + LOCK, v2)) {
          return v;
        }
        continue;
      }
      if (VersionLock.validate(m, b1 + LOCK, v1) && VersionLock.validate(m, b2 + LOCK, v2)) {
        return -1;
      }
    }
  }

  /**
   * {@link #versioned} with every access at an absolute address of {@link #EVERYTHING}: the same
   * body, written against the constant so that the JIT sees it in this compiled method (sharing
   * one method between the two segments would make its segment neither constant nor one type).
   */
  private static long versionedAbsolute(long base, long key) {
    MemorySegment m = EVERYTHING;
    long h = Hashing.hash(key);
    int fp = fingerprintOf(h);
    int y = bucketIndex(h, NORMAL_BUCKETS - 1);
    for (;;) {
      long dir = base + (long) LONG.getAcquire(m, base + header + HDR_DIRECTORY);
      int g = (int) INT.get(m, dir + DIR_DEPTH);
      long seg = base + (long) LONG.getAcquire(m, dir + DIR_ENTRIES + 8 * prefix(h, g));
      long b1 = bucket(seg, y);
      long b2 = bucket(seg, (y + 1) & (NORMAL_BUCKETS - 1));
      int v1 = VersionLock.snapshotAcquire(m, b1 + LOCK);
      int v2 = VersionLock.snapshotAcquire(m, b2 + LOCK);
      if (((v1 | v2) & VersionLock.LOCK_BIT) != 0 || !covers(shapeAcquire(m, seg), h)) {
        continue;
      }
      int slot = find(m, b1, bitmap(m, b1), key, fp);
      if (slot >= 0) {
        long v = value(m, b1, slot);
        if (VersionLock.validate(m, b1 + LOCK, v1)) {
          return v;
        }
        continue;
      }
      slot = find(m, b2, bitmap(m, b2), key, fp);
      if (slot >= 0) {
        long v = value(m, b2, slot);
        if (VersionLock.validate(m, b2 + LOCK, v2)) {
          return v;
        }
        continue;
      }
      if (VersionLock.validate(m, b1 + LOCK, v1) && VersionLock.validate(m, b2 + LOCK, v2)) {
        return -1;
      }
    }
  }

  /** {@link #versioned} routed by the table's own {@code locate}, with the stash probe: {@code get} less its remaining differences. */
  private static long located(DashEhTable table, long key) {
    long h = Hashing.hash(key);
    int fp = fingerprintOf(h);
    int y = bucketIndex(h, NORMAL_BUCKETS - 1);
    EpochReclaimer e = epochs;
    e.enter();
    try {
      for (;;) {
        MemorySegment m = table.pool().memory();
        long seg = table.locate(m, h);
        if (seg < 0) {
          continue;
        }
        long b1 = bucket(seg, y);
        long b2 = bucket(seg, (y + 1) & (NORMAL_BUCKETS - 1));
        int v1 = VersionLock.snapshotAcquire(m, b1 + LOCK);
        int v2 = VersionLock.snapshotAcquire(m, b2 + LOCK);
        if (((v1 | v2) & VersionLock.LOCK_BIT) != 0 || !covers(shapeAcquire(m, seg), h)) {
          continue;
        }
        int slot = find(m, b1, bitmap(m, b1), key, fp);
        if (slot >= 0) {
          long v = value(m, b1, slot);
          if (VersionLock.validate(m, b1 + LOCK, v1)) {
            return v;
          }
          continue;
        }
        slot = find(m, b2, bitmap(m, b2), key, fp);
        if (slot >= 0) {
          long v = value(m, b2, slot);
          if (VersionLock.validate(m, b2 + LOCK, v2)) {
            return v;
          }
          continue;
        }
        long loc = table.segments.findInStash(m, seg, b1, b2, key, fp);
        long v = loc >= 0 ? value(m, loc & ~63L, (int) loc & 63) : -1;
        if (VersionLock.validate(m, b1 + LOCK, v1) && VersionLock.validate(m, b2 + LOCK, v2)) {
          return v;
        }
      }
    } finally {
      e.exit();
    }
  }

  /** {@link #located} without the stash probe. */
  private static long locatedNoStash(DashEhTable table, long key) {
    long h = Hashing.hash(key);
    int fp = fingerprintOf(h);
    int y = bucketIndex(h, NORMAL_BUCKETS - 1);
    EpochReclaimer e = epochs;
    e.enter();
    try {
      for (;;) {
        MemorySegment m = table.pool().memory();
        long seg = table.locate(m, h);
        if (seg < 0) {
          continue;
        }
        long b1 = bucket(seg, y);
        long b2 = bucket(seg, (y + 1) & (NORMAL_BUCKETS - 1));
        int v1 = VersionLock.snapshotAcquire(m, b1 + LOCK);
        int v2 = VersionLock.snapshotAcquire(m, b2 + LOCK);
        if (((v1 | v2) & VersionLock.LOCK_BIT) != 0 || !covers(shapeAcquire(m, seg), h)) {
          continue;
        }
        int slot = find(m, b1, bitmap(m, b1), key, fp);
        if (slot >= 0) {
          long v = value(m, b1, slot);
          if (VersionLock.validate(m, b1 + LOCK, v1)) {
            return v;
          }
          continue;
        }
        slot = find(m, b2, bitmap(m, b2), key, fp);
        if (slot >= 0) {
          long v = value(m, b2, slot);
          if (VersionLock.validate(m, b2 + LOCK, v2)) {
            return v;
          }
          continue;
        }
        long v = -1;
        if (VersionLock.validate(m, b1 + LOCK, v1) && VersionLock.validate(m, b2 + LOCK, v2)) {
          return v;
        }
      }
    } finally {
      e.exit();
    }
  }

  private static long bare(MemorySegment m, long key) {
    long h = Hashing.hash(key);
    int fp = fingerprintOf(h);
    int y = bucketIndex(h, NORMAL_BUCKETS - 1);
    long dir = (long) LONG.get(m, header + HDR_DIRECTORY);
    int g = (int) INT.get(m, dir + DIR_DEPTH);
    long seg = (long) LONG.get(m, dir + DIR_ENTRIES + 8 * prefix(h, g));
    long b1 = bucket(seg, y);
    int slot = find(m, b1, bitmap(m, b1), key, fp);
    if (slot >= 0) {
      return value(m, b1, slot);
    }
    long b2 = bucket(seg, (y + 1) & (NORMAL_BUCKETS - 1));
    slot = find(m, b2, bitmap(m, b2), key, fp);
    return slot >= 0 ? value(m, b2, slot) : -1;
  }

  private static long unsafe(long base, long key) throws Throwable {
    EpochReclaimer e = epochs;
    e.enter();
    try {
      long h = Hashing.hash(key);
      int fp = fingerprintOf(h);
      int y = bucketIndex(h, NORMAL_BUCKETS - 1);
      for (;;) {
        long dir = base + (long) UNSAFE_LONG_VOLATILE.invokeExact(base + header + HDR_DIRECTORY);
        int g = (int) UNSAFE_INT.invokeExact(dir + DIR_DEPTH);
        long seg = base + (long) UNSAFE_LONG_VOLATILE.invokeExact(dir + DIR_ENTRIES + 8 * prefix(h, g));
        long b1 = bucket(seg, y);
        long b2 = bucket(seg, (y + 1) & (NORMAL_BUCKETS - 1));
        int v1 = (int) UNSAFE_INT_VOLATILE.invokeExact(b1 + LOCK);
        int v2 = (int) UNSAFE_INT_VOLATILE.invokeExact(b2 + LOCK);
        if (((v1 | v2) & VersionLock.LOCK_BIT) != 0 || !covers((long) UNSAFE_LONG_VOLATILE.invokeExact(seg + SEG_SHAPE), h)) {
          continue;
        }
        long pair = unsafeFind(b1, key, fp);
        long bucket = b1;
        int version = v1;
        if (pair == 0) {
          pair = unsafeFind(b2, key, fp);
          bucket = b2;
          version = v2;
        }
        long v = pair == 0 ? -1 : (long) UNSAFE_LONG.invokeExact(pair + 8);
        VarHandle.acquireFence(); // the reads above before the validating re-reads
        if ((int) UNSAFE_INT_VOLATILE.invokeExact(bucket + LOCK) == version
            && (pair != 0 || (int) UNSAFE_INT_VOLATILE.invokeExact(b1 + LOCK) == v1)) {
          return v;
        }
      }
    } finally {
      e.exit();
    }
  }

  /** The address of the pair holding {@code key} in the bucket at address {@code b}, or 0. */
  private static long unsafeFind(long b, long key, int fp) throws Throwable {
    long pattern = ByteMatch.broadcast(fp);
    int lo = ByteMatch.match((long) UNSAFE_LONG.invokeExact(b + FP), pattern);
    int hi = ByteMatch.match((long) UNSAFE_LONG.invokeExact(b + FP + 8), pattern);
    int candidates = (lo | hi << 8) & SLOT_MASK & allocated((int) UNSAFE_INT.invokeExact(b + BITMAP));
    while (candidates != 0) {
      long pair = b + PAIRS + PAIR_BYTES * Integer.numberOfTrailingZeros(candidates);
      if ((long) UNSAFE_LONG.invokeExact(pair) == key) {
        return pair;
      }
      candidates &= candidates - 1;
    }
    return 0;
  }
}
