package io.pmhash.stress;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the console output of a jcstress run and turns it into a verdict with an exit code,
 * which jcstress itself does not give (it exits 0 whatever it found): 1 if any test failed (a
 * {@code FORBIDDEN} outcome seen) or erred, else 0. It also lists which negative controls showed
 * their race (they appear among jcstress's "Interesting tests"); a control not seen is a
 * warning, or a failure with {@code --require-controls}: quick runs are short, and the rarer
 * races (a torn Dash slot) may not show in every one.
 *
 * <pre>
 *   java -jar jcstress.jar -m quick ... &gt; jcstress.log
 *   java -cp jcstress.jar io.pmhash.stress.QuickCheck jcstress.log [--require-controls]
 * </pre>
 */
public final class QuickCheck {
  /** Every negative control: a deliberately broken variant that must show its race. */
  static final List<String> CONTROLS = List.of(
      "io.pmhash.stress.VersionLockMutualExclusion.NoLock",
      "io.pmhash.stress.VersionLockOptimisticRead.Unvalidated",
      "io.pmhash.schemes.dash.DashOptimisticRead.BackwardDisplacementUnvalidated",
      "io.pmhash.schemes.dash.DashOptimisticRead.SlotReuseUnvalidated",
      "io.pmhash.stress.SplitPublication.PublishBeforeInit",
      "io.pmhash.stress.EpochReclamation.FreeWithoutGracePeriod",
      "io.pmhash.stress.PoolGrowthPublication.StaleMapping");

  private QuickCheck() {}

  /**
   * Checks a jcstress log.
   *
   * @param args the log file, then optionally {@code --require-controls}
   * @throws IOException if the log cannot be read
   */
  public static void main(String[] args) throws IOException {
    if (args.length < 1) {
      System.err.println("usage: QuickCheck JCSTRESS_LOG [--require-controls]");
      System.exit(2);
    }
    boolean require = args.length > 1 && args[1].equals("--require-controls");
    System.exit(check(Files.readAllLines(Path.of(args[0])), require, System.out));
  }

  /**
   * The verdict on a jcstress console log.
   *
   * @param lines the log
   * @param require whether a negative control not seen fails the check
   * @param out where the verdict lines go
   * @return the exit code: 0 passed, 1 failed
   */
  static int check(List<String> lines, boolean require, PrintStream out) {
    int results = lines.indexOf("RUN RESULTS:");
    if (results < 0) {
      out.println("quickcheck: no 'RUN RESULTS:' section: the jcstress run did not finish");
      return 1;
    }
    String section = "";
    List<String> interesting = new ArrayList<>();
    List<String> bad = new ArrayList<>();
    for (String line : lines.subList(results, lines.size())) {
      String t = line.trim();
      if (t.startsWith("Interesting tests:")) {
        section = "interesting";
      } else if (t.startsWith("Failed tests:") || t.startsWith("Error tests:")) {
        section = "bad";
      } else if (t.startsWith("All remaining tests:")) {
        section = "";
      } else if (t.startsWith(".") && t.contains("] ")) {
        String test = t.substring(t.indexOf("] ") + 2).trim();
        if (section.equals("bad")) {
          bad.add(test);
        } else if (section.equals("interesting")) {
          interesting.add(test);
        }
      }
    }
    int seen = 0;
    for (String c : CONTROLS) {
      boolean shown = interesting.contains(c);
      seen += shown ? 1 : 0;
      out.println("quickcheck: negative control " + (shown ? "seen     " : "NOT SEEN ") + c);
    }
    for (String b : bad) {
      out.println("quickcheck: FAILED " + b);
    }
    out.println("quickcheck: " + bad.size() + " failed, " + seen + "/" + CONTROLS.size() + " negative controls seen"
        + (seen < CONTROLS.size() ? " (a control not seen: this run could not have caught that race)" : ""));
    return bad.isEmpty() && (!require || seen == CONTROLS.size()) ? 0 : 1;
  }
}
