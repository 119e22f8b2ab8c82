package io.pmhash.jmh.workload;

import io.pmhash.core.Durability;
import io.pmhash.core.PersistenceStats;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.alloc.AllocatorStats;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The main job of pmhash: a workload against a real pool file, with a progress bar and a result
 * a person can read (and {@code --csv} for scripts). Run it with {@code ./pmhash workload
 * [options]}; {@code --help} lists the options.
 *
 * <p>Until the first hash-table scheme lands, the workload is {@code --scheme pool}: the core's
 * allocate / persist / publish / read / free path (see {@link PoolWorkload}), then a reopen.
 */
public final class WorkloadCommand {
  private WorkloadCommand() {}

  /**
   * Runs the workload.
   *
   * @param args the options; {@code --help} lists them
   */
  public static void main(String[] args) {
    if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
      System.setProperty("java.util.logging.SimpleFormatter.format", "  [%4$s] %5$s%6$s%n");
    }
    WorkloadOptions o;
    try {
      o = WorkloadOptions.parse(args);
    } catch (WorkloadOptions.UsageException e) {
      if (e.getMessage() != null) {
        System.err.println("pmhash workload: " + e.getMessage());
      }
      System.err.print(WorkloadOptions.USAGE);
      System.exit(e.getMessage() == null ? 0 : 2);
      return;
    }
    if (!o.scheme().equals("pool")) {
      System.err.println("pmhash workload: scheme '" + o.scheme() + "' is not implemented yet; available: pool");
      System.exit(2);
    }
    try {
      run(o, System.err, System.out);
    } catch (IOException | RuntimeException e) {
      System.err.println("pmhash workload failed: " + e);
      System.exit(1);
    }
  }

  static List<PhaseResult> run(WorkloadOptions o, PrintStream human, PrintStream csv) throws IOException {
    long records = o.preload() + o.ops();
    PoolOptions options = PoolOptions.defaults()
        .withScheme("pool-workload", 1, o.recordBytes())
        .withDurability(o.durability())
        .withInitialSize(Math.max(64L << 20, records * (8 + roundRecord(o.recordBytes())) * 5 / 4));
    human.printf("pmhash workload: scheme %s, %,d records of %d bytes (%,d preloaded), %d thread%s, seed %d%n",
        o.scheme(), records, o.recordBytes(), o.preload(), o.threads(), o.threads() == 1 ? "" : "s", o.seed());
    if (o.durability() != Durability.VOLATILE) {
      Files.deleteIfExists(o.file());
    }
    List<PhaseResult> results = new ArrayList<>();
    Pool pool = o.durability() == Durability.VOLATILE ? Pool.createVolatile(options) : Pool.create(o.file(), options);
    try {
      human.printf("  pool: %s, durability %s, persistence: %s%n",
          pool.path() == null ? "anonymous memory" : pool.path(), pool.durability(), pool.persistence().describe());
      results.addAll(measure(pool, o, records, human));
      if (o.durability() != Durability.VOLATILE) {
        pool.close();
        long t0 = System.nanoTime();
        pool = Pool.open(o.file(), options.withScheme("pool-workload", 1, o.recordBytes()));
        double ms = (System.nanoTime() - t0) / 1e6;
        human.printf("  reopen: %.2f ms (header validation, lane recovery; clean shutdown: %s)%n", ms, pool.lastShutdownClean());
      }
    } finally {
      pool.close();
      if (!o.keep() && o.durability() != Durability.VOLATILE) {
        Files.deleteIfExists(o.file());
      }
    }
    human.println();
    human.printf("  %-10s %12s %10s %10s %12s %12s%n", "phase", "ops", "seconds", "Mops/s", "flushes/op", "drains/op");
    for (PhaseResult r : results) {
      human.printf("  %-10s %,12d %10.3f %10.3f %12.2f %12.2f%n", r.phase(), r.ops(), r.seconds(), r.mops(), r.flushesPerOp(), r.drainsPerOp());
      if (o.csv()) {
        csv.println(String.join(",", o.scheme(), o.durability().name(), Integer.toString(o.threads()), r.phase(),
            Long.toString(r.ops()), fmt(r.seconds()), fmt(r.mops()), fmt(r.flushesPerOp()), fmt(r.drainsPerOp()), "NaN"));
      }
    }
    return results;
  }

  private static List<PhaseResult> measure(Pool pool, WorkloadOptions o, long records, PrintStream human) {
    List<PhaseResult> results = new ArrayList<>();
    long table = PoolWorkload.createTable(pool, records);
    if (o.preload() > 0) {
      phase(pool, "preload", 0, o.preload(), o.threads(), human, (from, to, p) ->
          PoolWorkload.publish(pool, table, from, to, o.recordBytes(), p));
    }
    long lo = o.preload();
    long hi = records;
    results.add(phase(pool, "publish", lo, hi, o.threads(), human, (from, to, p) ->
        PoolWorkload.publish(pool, table, from, to, o.recordBytes(), p)));
    long[] wrong = new long[1];
    results.add(phase(pool, "read", lo, hi, o.threads(), human, (from, to, p) -> {
      long w = PoolWorkload.read(pool, table, from, to, p);
      synchronized (wrong) {
        wrong[0] += w;
      }
    }));
    if (wrong[0] != 0) {
      throw new IllegalStateException(wrong[0] + " records read back wrong");
    }
    AllocatorStats heap = pool.allocator().stats();
    results.add(phase(pool, "free", lo, hi, o.threads(), human, (from, to, p) ->
        PoolWorkload.free(pool, table, from, to, p)));
    human.printf("  heap at the peak: %,d chunks in use (%,d bytes), %,d bytes owned in %,d blocks: %.1f bytes per record%n",
        heap.chunksInUse(), heap.chunksInUse() * pool.chunkSize(), heap.bytesOwned(), heap.blocksOwned(),
        (double) heap.chunksInUse() * pool.chunkSize() / records);
    return results;
  }

  private static String fmt(double d) {
    return String.format(Locale.ROOT, "%.4f", d);
  }

  private static long roundRecord(int bytes) {
    return (bytes + 15) & -16;
  }

  /** Work of one thread over [from, to). */
  interface Slice {
    void run(long from, long to, Progress progress) throws Exception;
  }

  private static PhaseResult phase(Pool pool, String name, long from, long to, int threads, PrintStream human, Slice slice) {
    long n = to - from;
    PersistenceStats before = pool.persistence().stats();
    long t0;
    long t1;
    try (Progress progress = new Progress(name, n, human)) {
      List<Thread> workers = new ArrayList<>();
      Throwable[] failure = new Throwable[1];
      for (int t = 0; t < threads; t++) {
        long a = from + n * t / threads;
        long b = from + n * (t + 1) / threads;
        workers.add(Thread.ofPlatform().name("pmhash-workload-" + t).unstarted(() -> {
          try {
            slice.run(a, b, progress);
          } catch (Throwable e) {
            synchronized (failure) {
              failure[0] = e;
            }
          }
        }));
      }
      t0 = System.nanoTime();
      workers.forEach(Thread::start);
      for (Thread w : workers) {
        try {
          w.join();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted", e);
        }
      }
      t1 = System.nanoTime();
      if (failure[0] != null) {
        throw new IllegalStateException("phase " + name + " failed", failure[0]);
      }
    }
    return new PhaseResult(name, n, (t1 - t0) / 1e9, pool.persistence().stats().minus(before), Double.NaN);
  }
}
