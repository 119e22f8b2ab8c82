package io.pmhash.core.crash;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Shows that every flush and every drain matters: runs a suite of crash tests once to take the
 * inventory of persist call sites ({@link MutationSession}), then once per site with that site
 * skipped, and reports for each whether some crash test caught it (some crash image failed
 * verification in a {@link CrashHarness.Builder#run}). A site that survives is either a gap in
 * the crash tests (no workload, image or check notices the missing flush or drain) or a persist
 * call that crash consistency does not need.
 *
 * <p>Only failures of crash images count: a suite's other assertions (counts of crash points,
 * negative controls run with {@link CrashHarness.Builder#collect}) neither catch a site nor
 * fail the baseline. The suite itself is any code that runs crash tests, e.g. a JUnit launcher
 * over a scheme's crash test classes; exceptions it throws are ignored.
 *
 * <p>A {@link Selective} suite announces its tests to the session ({@link
 * MutationSession#testStarted}) and can run a subset of them: the mutated run of a site then runs
 * only the tests whose baseline run called through that site (while armed or not), and a site that
 * no test reached (called only outside every test) is reported as a survivor without a run. A
 * plain {@link Suite} is one test: every mutated run runs all of it.
 *
 * <p>Given a report file, the check writes its {@linkplain Result#table() table} there as it goes:
 * the header once the inventory is taken, each site's line as soon as that site's run ends, the
 * total at the end. A run cut short (stopped, or the machine restarted) leaves every finished
 * site's line; a file without the total line is such a run.
 *
 * <pre>{@code
 * MutationCheck.Result r = MutationCheck.run("dash", () -> runJUnit(DashCrashTest.class));
 * System.out.println(r.table());
 * assertEquals(List.of(), r.survivors());
 * }</pre>
 */
public final class MutationCheck {
  private MutationCheck() {}

  /** Runs crash tests; the check runs it once per site. */
  @FunctionalInterface
  public interface Suite {
    /**
     * Runs the crash tests. Must be deterministic: the same sites in every run.
     *
     * @throws Exception ignored: only crash image failures count
     */
    void run() throws Exception;
  }

  /** Runs crash tests, all or only some; the check runs it once per site. */
  @FunctionalInterface
  public interface Selective {
    /**
     * Runs the crash tests, each between {@link MutationSession#testStarted} and {@link
     * MutationSession#testFinished} with its id. Must be deterministic: the same sites, by the same
     * tests, in every run.
     *
     * @param tests the ids of the tests to run, or null to run them all
     * @throws Exception ignored: only crash image failures count
     */
    void run(Set<String> tests) throws Exception;
  }

  /**
   * What happened to one site.
   *
   * @param site the site id
   * @param calls calls through the site in the baseline run
   * @param armed whether the baseline saw the site while crash points were taken
   * @param skips calls skipped in the mutated run (0: the run never reached it)
   * @param failedRuns crash tests that failed in the mutated run (at least 1: caught)
   * @param failedImages crash images that failed before the run stopped
   * @param tests tests run in the mutated run: those whose baseline called through the site (0: no
   *     test reached it, so it was not run and survives)
   */
  public record Outcome(
      String site, long calls, boolean armed, long skips, long failedRuns, long failedImages, int tests) {
    /** @return whether some crash test failed without this site */
    public boolean caught() {
      return failedRuns > 0;
    }
  }

  /**
   * The outcome of a check.
   *
   * @param name the suite's name
   * @param outcomes one per site of the inventory, in site order
   */
  public record Result(String name, List<Outcome> outcomes) {
    /** Copies the list. */
    public Result {
      outcomes = List.copyOf(outcomes);
    }

    /** @return the sites no crash test caught */
    public List<String> survivors() {
      return outcomes.stream().filter(o -> !o.caught()).map(Outcome::site).toList();
    }

    /** @return one line per site: caught or SURVIVED, with its counts; then a total */
    public String table() {
      StringBuilder b = new StringBuilder(header(name, outcomes.size()));
      outcomes.forEach(o -> b.append(line(o)));
      return b.append(total(outcomes)).toString();
    }
  }

  private static String header(String name, int sites) {
    return "mutation check '" + name + "': " + sites + " sites\n";
  }

  private static String line(Outcome o) {
    return String.format("  %-8s %-70s calls %5d%s, skipped %5d, failed tests %d, tests run %d%s%n",
        o.caught() ? "caught" : "SURVIVED", o.site(), o.calls(), o.armed() ? "" : " (never armed)",
        o.skips(), o.failedRuns(), o.tests(), o.tests() == 0 ? " (reached by no test)" : "");
  }

  private static String total(List<Outcome> outcomes) {
    long survived = outcomes.stream().filter(o -> !o.caught()).count();
    return "  " + (outcomes.size() - survived) + " caught, " + survived + " survived\n";
  }

  /**
   * Runs the baseline and then one mutated run per site.
   *
   * @param name names the suite in the table
   * @param suite runs the crash tests
   * @return the outcome of every site
   * @throws IllegalStateException if the baseline itself has a failing crash image, or sees no site
   */
  public static Result run(String name, Suite suite) {
    return run(name, suite, site -> true);
  }

  /**
   * Runs the baseline and then one mutated run per site that {@code which} accepts; the whole
   * suite each time (it is one test).
   *
   * @param name names the suite in the table
   * @param suite runs the crash tests
   * @param which the sites to mutate (the others are left out of the result)
   * @return the outcome of every site mutated
   * @throws IllegalStateException if the baseline itself has a failing crash image, or sees no site
   */
  public static Result run(String name, Suite suite, Predicate<String> which) {
    Objects.requireNonNull(suite, "suite");
    return run(name, whole(name, suite), which);
  }

  /**
   * Runs the baseline and then, per site that {@code which} accepts, a mutated run of only the
   * tests whose baseline called through that site; a site that no test reached is reported
   * without a run.
   *
   * @param name names the suite in the table
   * @param suite runs the crash tests, all or some
   * @param which the sites to mutate (the others are left out of the result)
   * @return the outcome of every site mutated
   * @throws IllegalStateException if the baseline itself has a failing crash image, or sees no site
   */
  public static Result run(String name, Selective suite, Predicate<String> which) {
    return run(name, suite, which, null);
  }

  /**
   * As {@link #run(String, Selective, Predicate)}, writing the table to {@code report} as the
   * check goes (see the class comment): an old file is deleted first, the header is written once
   * the inventory is taken, each site's line is appended and written through to the device as
   * soon as its run ends, and the total line is appended last, so that the finished file equals
   * {@link Result#table()}.
   *
   * @param name names the suite in the table
   * @param suite runs the crash tests, all or some
   * @param which the sites to mutate (the others are left out of the result)
   * @param report the file to write the table to, or null for none; its directory must exist
   * @return the outcome of every site mutated
   * @throws IllegalStateException if the baseline itself has a failing crash image, or sees no site
   * @throws UncheckedIOException if the report cannot be written
   */
  public static Result run(String name, Selective suite, Predicate<String> which, Path report) {
    Objects.requireNonNull(suite, "suite");
    Objects.requireNonNull(which, "which");
    if (report != null) {
      // A stale table from an earlier run must not pass for this one's if its baseline fails.
      write(report, null);
    }
    Map<String, Long> sites;
    Set<String> armed;
    Map<String, Set<String>> testsBySite;
    try (MutationSession s = MutationSession.inventory()) {
      runQuietly(suite, null);
      if (s.caught()) {
        throw new IllegalStateException("mutation check '" + name + "': the baseline (nothing skipped) has "
            + s.failedImages() + " failing crash image(s); fix the crash tests first");
      }
      sites = s.sites();
      armed = s.armedSites();
      testsBySite = s.testsBySite();
    }
    if (sites.isEmpty()) {
      throw new IllegalStateException("mutation check '" + name
          + "': the suite made no flush or drain under a crash simulator");
    }
    List<String> mutated = sites.keySet().stream().filter(which).toList();
    if (report != null) {
      write(report, header(name, mutated.size()));
    }
    List<Outcome> out = new ArrayList<>();
    for (String site : mutated) {
      Set<String> tests = testsBySite.getOrDefault(site, Set.of());
      Outcome o;
      if (tests.isEmpty()) {
        o = new Outcome(site, sites.get(site), armed.contains(site), 0, 0, 0, 0);
      } else {
        try (MutationSession s = MutationSession.skipping(site)) {
          runQuietly(suite, tests);
          o = new Outcome(site, sites.get(site), armed.contains(site), s.skips(), s.failedRuns(),
              s.failedImages(), tests.size());
        }
      }
      out.add(o);
      if (report != null) {
        write(report, line(o));
      }
    }
    if (report != null) {
      write(report, total(out));
    }
    return new Result(name, Collections.unmodifiableList(out));
  }

  /**
   * Appends {@code text} to the report and writes it through to the device, so that it outlives
   * the process and the machine; with null text, deletes the report.
   */
  private static void write(Path report, String text) {
    try {
      if (text == null) {
        Files.deleteIfExists(report);
      } else {
        Files.writeString(report, text, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.APPEND, StandardOpenOption.DSYNC);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("mutation check: cannot write the report " + report
          + " (does its directory exist and is it writable?)", e);
    }
  }

  /** A plain suite as one test named after it, run whole whatever is asked. */
  private static Selective whole(String name, Suite suite) {
    return tests -> {
      MutationSession.testStarted(name);
      try {
        suite.run();
      } finally {
        MutationSession.testFinished();
      }
    };
  }

  /**
   * The inventory alone: runs the suite once, skipping nothing.
   *
   * @param suite runs the crash tests
   * @return every site seen with its number of calls
   * @throws IllegalStateException if a crash image fails
   */
  public static Map<String, Long> inventory(Suite suite) {
    return inventory(whole("inventory", suite));
  }

  /**
   * The inventory alone: runs all of the suite once, skipping nothing.
   *
   * @param suite runs the crash tests
   * @return every site seen with its number of calls
   * @throws IllegalStateException if a crash image fails
   */
  public static Map<String, Long> inventory(Selective suite) {
    try (MutationSession s = MutationSession.inventory()) {
      runQuietly(suite, null);
      if (s.caught()) {
        throw new IllegalStateException("the baseline has " + s.failedImages() + " failing crash image(s)");
      }
      return s.sites();
    }
  }

  private static void runQuietly(Selective suite, Set<String> tests) {
    try {
      suite.run(tests);
    } catch (Exception | AssertionError e) {
      // Only crash image failures count; the session has recorded them.
    }
  }
}
