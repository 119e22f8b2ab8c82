package io.pmhash.jmh.workload;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The main job of pmhash: a workload against a real pool file, with a progress bar and a result
 * a person can read (and {@code --csv} for scripts). Run it with {@code ./pmhash workload
 * [options]}; {@code --help} lists the options.
 *
 * <p>For a hash-table scheme it runs the Dash benchmark's workload ({@link TableWorkload});
 * {@code --scheme pool} runs the core alone ({@link PoolWorkload}); {@code --rounds} and a list of
 * schemes run the table workload several times in this JVM and summarise ({@link Rounds}).
 */
public final class WorkloadCommand {
  /** The pool's {@code System.Logger} name (io.pmhash.core.Pool), a java.util.logging logger here. */
  private static final String POOL_LOGGER = "io.pmhash.pool";

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
      System.err.print(WorkloadOptions.usage());
      System.exit(e.getMessage() == null ? 0 : 2);
      return;
    }
    try {
      if (o.rounds() > 1 || o.schemes().size() > 1) {
        Rounds.run(o, System.err, System.out);
      } else {
        warmUp(o, System.err);
        List<PhaseResult> results = o.scheme().equals(WorkloadOptions.POOL)
            ? PoolWorkload.run(o, System.err)
            : TableWorkload.run(o, System.err);
        report(o, results, System.err, System.out);
      }
    } catch (IOException | RuntimeException e) {
      System.err.println("pmhash workload failed: " + e);
      System.exit(1);
    }
  }

  /**
   * Unless {@code --no-warmup}: runs {@code o}'s workload once at a tenth of its size ({@link
   * WorkloadOptions#forWarmup}), untimed and unreported but for one line, so that the measured
   * phases time compiled code. Without it each phase's first operations run in the interpreter and
   * the phase pays its code's compilation, and its recompilations when a path first taken (a
   * delete after a phase of inserts, a merge) invalidates code compiled for an earlier phase:
   * costs a native implementation never pays, and a service that has run for a while no longer
   * pays (docs/persistence.md, "Warm-up").
   */
  static void warmUp(WorkloadOptions o, PrintStream human) throws IOException {
    if (!o.warmup()) {
      return;
    }
    WorkloadOptions w = o.forWarmup();
    long t0 = System.nanoTime();
    PrintStream quiet = new PrintStream(OutputStream.nullOutputStream(), false, StandardCharsets.UTF_8);
    // its pool is created, reopened and recovered like the run's: those INFO lines would bury the run's own
    Logger poolLog = Logger.getLogger(POOL_LOGGER);
    Level level = poolLog.getLevel();
    poolLog.setLevel(Level.WARNING);
    try {
      if (w.scheme().equals(WorkloadOptions.POOL)) {
        PoolWorkload.run(w, quiet);
      } else {
        TableWorkload.run(w, quiet);
      }
    } finally {
      poolLog.setLevel(level);
    }
    human.printf("pmhash workload: warm-up of %s done: the same workload at %,d preloaded keys and %,d operations per phase,"
        + " untimed (%.1f s; --no-warmup times a cold JVM)%n", w.scheme(), w.preload(), w.ops(), (System.nanoTime() - t0) / 1e9);
  }

  static void report(WorkloadOptions o, List<PhaseResult> results, PrintStream human, PrintStream csv) {
    human.println();
    human.printf("  %-10s %12s %10s %10s %12s %12s %12s%s%n", "phase", "ops", "seconds", "Mops/s", "flushes/op", "drains/op", "load factor",
        o.latency() ? String.format(Locale.ROOT, " %12s %12s", "p99.9 us", "max us") : "");
    for (PhaseResult r : results) {
      LatencyHistogram l = r.latency();
      human.printf("  %-10s %,12d %10.3f %10.3f %12.2f %12.2f %12s%s%n", r.phase(), r.ops(), r.seconds(), r.mops(),
          r.flushesPerOp(), r.drainsPerOp(), Double.isNaN(r.loadFactor()) ? "-" : String.format(Locale.ROOT, "%.3f", r.loadFactor()),
          l == null ? "" : String.format(Locale.ROOT, " %12.2f %12.2f", l.percentile(0.999) / 1e3, l.max() / 1e3));
      if (o.csv()) {
        String line = String.join(",", o.scheme(), o.durability().name(), Integer.toString(o.threads()), r.phase(),
            Long.toString(r.ops()), fmt(r.seconds()), fmt(r.mops()), fmt(r.flushesPerOp()), fmt(r.drainsPerOp()),
            Double.isNaN(r.loadFactor()) ? "NaN" : fmt(r.loadFactor()));
        if (o.latency()) {
          line += "," + (l == null ? "NaN" : Long.toString(l.percentile(0.999))) + "," + (l == null ? "NaN" : Long.toString(l.max()));
        }
        csv.println(line);
      }
    }
    human.println("  (" + o.durability() + " on this machine; DRAM or tmpfs numbers are not persistent-memory numbers)");
  }

  private static String fmt(double d) {
    return String.format(Locale.ROOT, "%.4f", d);
  }
}
