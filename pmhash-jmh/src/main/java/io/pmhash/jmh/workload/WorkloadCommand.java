package io.pmhash.jmh.workload;

import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

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
