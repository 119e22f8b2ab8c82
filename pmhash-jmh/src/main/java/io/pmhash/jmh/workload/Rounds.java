package io.pmhash.jmh.workload;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code --rounds} and lists of schemes: the table workload run once per scheme per round, one
 * after another in this JVM, each on a new pool, the schemes' order rotating from round to round
 * (A B, B A, ... so that neither always runs first). Every run prints its own report (and its
 * {@code --csv} lines, as a single run does); the summary at the end gives each phase's median and
 * range per scheme, and each scheme's ratio to the first scheme's, round by round.
 *
 * <p>Why in one JVM and alternating: on a virtual machine throughput drifts by tens of per cent
 * between minutes, so two schemes measured by two commands a minute apart compare the machine's
 * phases as much as the schemes (docs/persistence.md, "A/B on this VM needs one process"). Within
 * a round both run in the same minutes, and the median of the rounds' ratios discounts the drift.
 * With more than two schemes the JIT sees more than two table classes at the workload's call sites
 * and compiles them as virtual calls, which every scheme then pays alike. Each scheme is warmed up
 * once, before the first round ({@link WorkloadCommand#warmUp}), so that no round times the JIT's
 * first compilation of a scheme's code.
 */
final class Rounds {
  private Rounds() {}

  /** One run of the workload: its round (from 0), its scheme, and its measured phases. */
  record Run(int round, String scheme, List<PhaseResult> phases) {}

  /**
   * Runs every scheme of {@code o} {@code o.rounds()} times, reporting each run and then the
   * summary on {@code human}.
   *
   * @return the runs, in the order they ran
   */
  static List<Run> run(WorkloadOptions o, PrintStream human, PrintStream csv) throws IOException {
    List<String> schemes = o.schemes();
    List<Run> runs = new ArrayList<>();
    for (String scheme : schemes) {
      WorkloadCommand.warmUp(o.forScheme(scheme), human);
    }
    for (int round = 0; round < o.rounds(); round++) {
      for (int j = 0; j < schemes.size(); j++) {
        String scheme = schemes.get((round + j) % schemes.size());
        human.printf("%n== round %d of %d: %s ==%n", round + 1, o.rounds(), scheme);
        WorkloadOptions one = o.forScheme(scheme);
        List<PhaseResult> results = TableWorkload.run(one, human);
        WorkloadCommand.report(one, results, human, csv);
        runs.add(new Run(round, scheme, results));
      }
    }
    human.println();
    for (String line : summary(schemes, runs)) {
      human.println(line);
    }
    return runs;
  }

  /**
   * The summary of {@code runs}: per scheme and phase (in the order the first run measured the
   * phases) the median, lowest and highest Mops/s; for every scheme after the first, the median of
   * its per-round ratios to the first scheme's Mops/s and in how many rounds it was faster.
   */
  static List<String> summary(List<String> schemes, List<Run> runs) {
    List<String> phases = runs.get(0).phases().stream().map(PhaseResult::phase).toList();
    int rounds = runs.stream().mapToInt(Run::round).max().orElse(0) + 1;
    String first = schemes.get(0);
    List<String> lines = new ArrayList<>();
    lines.add(String.format(Locale.ROOT, "summary of %d round%s (Mops/s; ratio: median of the rounds' ratios to %s)",
        rounds, rounds == 1 ? "" : "s", first));
    lines.add(String.format(Locale.ROOT, "  %-10s %-10s %10s %21s %12s %14s", "scheme", "phase", "median", "lowest..highest",
        "ratio", "rounds ahead"));
    for (String scheme : schemes) {
      for (String phase : phases) {
        double[] mops = mops(runs, scheme, phase, rounds);
        double[] sorted = mops.clone();
        Arrays.sort(sorted);
        String versus = "";
        if (!scheme.equals(first)) {
          double[] base = mops(runs, first, phase, rounds);
          double[] ratios = new double[rounds];
          int ahead = 0;
          for (int r = 0; r < rounds; r++) {
            ratios[r] = mops[r] / base[r];
            ahead += mops[r] > base[r] ? 1 : 0;
          }
          versus = String.format(Locale.ROOT, " %12.3f %14s", median(ratios), ahead + " of " + rounds);
        }
        lines.add(String.format(Locale.ROOT, "  %-10s %-10s %10.3f %21s%s", scheme, phase, median(sorted),
            String.format(Locale.ROOT, "%.3f..%.3f", sorted[0], sorted[rounds - 1]), versus));
      }
    }
    return lines;
  }

  /** {@code scheme}'s Mops/s in {@code phase}, by round. */
  private static double[] mops(List<Run> runs, String scheme, String phase, int rounds) {
    double[] out = new double[rounds];
    boolean[] seen = new boolean[rounds];
    for (Run run : runs) {
      if (run.scheme().equals(scheme)) {
        for (PhaseResult p : run.phases()) {
          if (p.phase().equals(phase)) {
            out[run.round()] = p.mops();
            seen[run.round()] = true;
          }
        }
      }
    }
    for (int r = 0; r < rounds; r++) {
      if (!seen[r]) {
        throw new IllegalArgumentException("no " + phase + " phase of " + scheme + " in round " + (r + 1));
      }
    }
    return out;
  }

  /** The median: the middle value, or the mean of the two middle values of an even count. */
  static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
}
