package io.pmhash.jmh.workload;

import io.pmhash.core.Durability;
import io.pmhash.core.Persistence;
import io.pmhash.map.TableOptions;
import io.pmhash.map.TableStats;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The Dash benchmark's workload (Dash §6.2) on any scheme: preload N keys, then M inserts, M
 * positive searches, M negative searches and M deletes, each phase split over T threads, keys
 * precomputed from a seed. Checks what it reads (every positive search finds its value, no
 * negative search finds anything, every delete removes), then times reopening the pool after a
 * clean close and after a crash (a copy of the file taken while the table was open), both with the
 * open path warmed by one untimed open.
 */
final class TableWorkload {
  private TableWorkload() {}

  static List<PhaseResult> run(WorkloadOptions o, PrintStream human) throws IOException {
    long n = o.preload();
    long m = o.ops();
    TableOptions options = TableOptions.scheme(o.scheme()).withDurability(o.durability())
        .withInitialCapacity(o.initialCapacity());
    for (var p : o.params().entrySet()) {
      options = options.withParam(p.getKey(), p.getValue());
    }
    human.printf("pmhash workload: scheme %s, %,d preloaded keys, then %,d operations per phase, %d thread%s, seed %d%s%n",
        o.scheme(), n, m, o.threads(), o.threads() == 1 ? "" : "s", o.seed(),
        o.keyBytes() == 0 ? "" : ", " + o.keyBytes() + "-byte keys in pointer mode (PmHashMap<byte[], byte[]>)");
    if (o.valueBytes() > 0) {
      human.printf("  values: %d-byte blocks of the pool's heap, the table holds their offsets"
          + " (not crash-consistent as a whole: a crash mid-insert or mid-delete leaks a block)%n", o.valueBytes());
    }
    boolean file = o.durability() != Durability.VOLATILE;
    Path crashCopy = o.file().resolveSibling(o.file().getFileName() + ".crash");
    if (file) {
      Files.deleteIfExists(o.file());
      Files.deleteIfExists(crashCopy);
    }
    List<PhaseResult> results = new ArrayList<>();
    try {
      Target table = Target.create(o, options);
      boolean copied = false;
      try {
        human.printf("  pool: %s, durability %s, persistence: %s%n",
            table.pool().path() == null ? "anonymous memory" : table.pool().path(),
            table.pool().durability(), table.pool().persistence().describe());
        Persistence persistence = table.pool().persistence();
        int threads = o.threads();
        if (n > 0) {
          long[] preload = Keys.range(o.seed(), 0, n);
          PhaseRunner.run("preload", 0, n, threads, persistence, human, (from, to, p) -> insert(table, preload, from, to, p));
        }
        long[] inserted = Keys.range(o.seed(), n, n + m);
        long[] absent = Keys.range(o.seed(), n + m, n + 2 * m);
        results.add(phase(o, "insert", m, persistence, human,
            (from, to, p) -> insert(table, inserted, from, to, p),
            (from, to, p, h) -> timed(table, inserted, from, to, p, h, PUT)).withLoadFactor(table.loadFactor()));
        if (file && Files.size(o.file()) <= (8L << 30)) {
          // What a kill -9 would leave: the file as it is while the table is open.
          try {
            Files.copy(o.file(), crashCopy, StandardCopyOption.REPLACE_EXISTING);
          } catch (IOException e) {
            throw new IOException("copying the pool to " + crashCopy + " (the file as a kill -9 leaves it, for the reopen after a crash) failed: "
                + e.getMessage() + "; the copy needs as much free space beside the pool file as the pool (" + Files.size(o.file()) + " bytes)", e);
          }
          copied = true;
        } else if (file && o.freshOpen()) {
          human.printf("  --fresh-open: no crash copy of a pool above 8 GiB, so no reopen in a new JVM%n");
        }
        LongAdder found = new LongAdder();
        results.add(phase(o, "search+", m, persistence, human,
            (from, to, p) -> found.add(search(table, inserted, true, from, to, p)),
            (from, to, p, h) -> found.add(timed(table, inserted, from, to, p, h, FOUND))).withLoadFactor(table.loadFactor()));
        check(found.sum() == m, "positive search found " + found.sum() + " of " + m + " keys with their values");
        found.reset();
        results.add(phase(o, "search-", m, persistence, human,
            (from, to, p) -> found.add(search(table, absent, false, from, to, p)),
            (from, to, p, h) -> found.add(timed(table, absent, from, to, p, h, ANY))).withLoadFactor(table.loadFactor()));
        check(found.sum() == 0, "negative search found " + found.sum() + " keys that were never inserted");
        LongAdder removed = new LongAdder();
        results.add(phase(o, "delete", m, persistence, human,
            (from, to, p) -> removed.add(delete(table, inserted, from, to, p)),
            (from, to, p, h) -> removed.add(timed(table, inserted, from, to, p, h, REMOVE))).withLoadFactor(table.loadFactor()));
        check(removed.sum() == m, "delete removed " + removed.sum() + " of " + m + " keys");
        TableStats stats = table.stats();
        human.printf("  table: %,d records, %,d slots, load factor %.3f, pool %,d bytes; %s%n",
            stats.size(), stats.slots(), stats.loadFactor(), stats.poolBytes(), stats.details());
      } finally {
        table.close();
      }
      if (file) {
        // One untimed open and close first: this JVM has run create's code, not open's, so the first
        // open would time class loading and the interpreter, not the library's work, and the two
        // reopens below would not compare (a new JVM's first open is --fresh-open's measurement).
        Target.open(o, o.file()).close();
        long t0 = System.nanoTime();
        try (Target reopened = Target.open(o, o.file())) {
          double ms = (System.nanoTime() - t0) / 1e6;
          human.printf("  reopen after a clean close: %.2f ms (%,d records; the open path run once before, untimed)%n", ms, reopened.size());
        }
        if (copied && o.freshOpen()) {
          // First, while the copy is as a kill left it (the in-process reopen below closes it cleanly).
          FreshOpen.Result r = FreshOpen.run(o.durability(), crashCopy, o.keyBytes() > 0);
          human.printf("  reopen after a crash in a new JVM (--fresh-open, %,d records): %.2f ms, after %d ms of JVM start before main%n",
              r.records(), r.openMillis(), r.jvmMillisBeforeMain());
          check(r.records() == n + m, "the new JVM found " + r.records() + " records in the crash copy, expected " + (n + m));
        }
        if (copied) {
          t0 = System.nanoTime();
          try (Target crashed = Target.open(o, crashCopy)) {
            double ms = (System.nanoTime() - t0) / 1e6;
            long t1 = System.nanoTime();
            long size = crashed.size();
            double scanMs = (System.nanoTime() - t1) / 1e6;
            human.printf("  reopen after a crash (copy taken while open, %,d records): %.2f ms; then the first size(), which"
                + " finishes every lazy recovery left (a full scan): %.2f ms%n", size, ms, scanMs);
            check(size == n + m, "the crash copy holds " + size + " records, expected " + (n + m));
          }
        }
      }
      return results;
    } finally {
      // also when a phase failed (a full file system, say): the files are the run's own
      if (file) {
        if (!o.keep()) {
          Files.deleteIfExists(o.file());
        }
        Files.deleteIfExists(crashCopy);
      }
    }
  }

  /** A measured phase: timed per operation only with {@code --latency}, so the default loop is unchanged. */
  private static PhaseResult phase(WorkloadOptions o, String name, long m, Persistence persistence, PrintStream human,
      PhaseRunner.Slice plain, PhaseRunner.TimedSlice timed) {
    return o.latency()
        ? PhaseRunner.runTimed(name, 0, m, o.threads(), persistence, human, timed)
        : PhaseRunner.run(name, 0, m, o.threads(), persistence, human, plain);
  }

  /** One operation of a timed phase; the constants below capture nothing. */
  private interface KeyOp {
    /** @return whether it counts as a hit (found with its value, found at all, removed) */
    boolean apply(Target table, long key, int i);
  }

  private static final KeyOp PUT = (t, k, i) -> {
    t.insert(k, i);
    return true;
  };
  private static final KeyOp FOUND = (t, k, i) -> t.get(k) == i;
  private static final KeyOp ANY = (t, k, i) -> t.get(k) != Long.MIN_VALUE;
  private static final KeyOp REMOVE = (t, k, i) -> t.delete(k);

  /** Runs {@code op} over {@code keys[from, to)} recording each call's latency; returns the hits. */
  private static long timed(Target table, long[] keys, long from, long to, Progress progress,
      LatencyHistogram latency, KeyOp op) {
    long hits = 0;
    for (int i = (int) from; i < to; i++) {
      long t0 = System.nanoTime();
      boolean hit = op.apply(table, keys[i], i);
      latency.record(System.nanoTime() - t0);
      if (hit) {
        hits++;
      }
      if ((i & 4095) == 4095) {
        progress.add(4096);
      }
    }
    progress.add((to - from) & 4095);
    return hits;
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new IllegalStateException("wrong result: " + what);
    }
  }

  private static void insert(Target table, long[] keys, long from, long to, Progress progress) {
    for (int i = (int) from; i < to; i++) {
      table.insert(keys[i], i);
      if ((i & 4095) == 4095) {
        progress.add(4096);
      }
    }
    progress.add((to - from) & 4095);
  }

  /** Counts keys found with their own value (positive) or found at all (negative). */
  private static long search(Target table, long[] keys, boolean positive, long from, long to, Progress progress) {
    long found = 0;
    for (int i = (int) from; i < to; i++) {
      long v = table.get(keys[i]);
      if (positive ? v == i : v != Long.MIN_VALUE) {
        found++;
      }
      if ((i & 4095) == 4095) {
        progress.add(4096);
      }
    }
    progress.add((to - from) & 4095);
    return found;
  }

  private static long delete(Target table, long[] keys, long from, long to, Progress progress) {
    long removed = 0;
    for (int i = (int) from; i < to; i++) {
      if (table.delete(keys[i])) {
        removed++;
      }
      if ((i & 4095) == 4095) {
        progress.add(4096);
      }
    }
    progress.add((to - from) & 4095);
    return removed;
  }
}
