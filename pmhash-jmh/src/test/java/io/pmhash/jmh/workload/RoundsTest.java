package io.pmhash.jmh.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.PersistenceStats;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The workload's {@code --rounds} and lists of schemes: how they parse, which combinations are
 * refused with a message, the order of the runs, and the summary's arithmetic (medians, ranges,
 * per-round ratios) on given figures. No timing is asserted: the runs' figures are whatever the
 * machine gives; only their structure is checked.
 */
class RoundsTest {
  @Test
  void aListOfSchemesParsesInOrderAndTheFirstIsTheRunsScheme() {
    WorkloadOptions o = WorkloadOptions.parse(new String[] {"--scheme", "esh, dash-eh", "--rounds", "3"});
    assertEquals(List.of("esh", "dash-eh"), o.schemes());
    assertEquals("esh", o.scheme());
    assertEquals(3, o.rounds());
    WorkloadOptions other = o.forScheme("dash-eh");
    assertEquals("dash-eh", other.scheme());
    assertEquals(o.schemes(), other.schemes());
    assertEquals(o.ops(), other.ops());
  }

  @Test
  void aSingleSchemeRunsOnceByDefault() {
    WorkloadOptions o = WorkloadOptions.parse(new String[] {"--scheme", "level"});
    assertEquals(List.of("level"), o.schemes());
    assertEquals(1, o.rounds());
  }

  @Test
  void badListsAndCombinationsAreRefusedWithWhatToDo() {
    assertMessage("unknown scheme 'nope'", "--scheme", "dash-eh,nope");
    assertMessage("empty name", "--scheme", "dash-eh,,esh");
    assertMessage("names esh twice", "--scheme", "esh,dash-eh,esh");
    assertMessage("runs alone", "--scheme", "pool,dash-eh");
    assertMessage("runs alone", "--scheme", "pool", "--rounds", "2");
    assertMessage("--keep keeps one run's pool file", "--scheme", "esh,dash-eh", "--keep");
    assertMessage("out of range 1..1000", "--rounds", "0");
  }

  private static void assertMessage(String expected, String... args) {
    WorkloadOptions.UsageException e = assertThrows(WorkloadOptions.UsageException.class, () -> WorkloadOptions.parse(args));
    assertTrue(e.getMessage().contains(expected), "message for " + String.join(" ", args) + ": " + e.getMessage());
  }

  @Test
  void theSummaryGivesMediansRangesAndRoundByRoundRatiosToTheFirstScheme() {
    List<Rounds.Run> runs = List.of(
        run(0, "a", 2.0, 8.0), run(0, "b", 1.0, 10.0),
        run(1, "b", 3.0, 10.0), run(1, "a", 2.0, 4.0),
        run(2, "a", 4.0, 6.0), run(2, "b", 1.0, 9.0));
    List<String> lines = Rounds.summary(List.of("a", "b"), runs);
    assertTrue(lines.get(0).startsWith("summary of 3 rounds"), lines.get(0));
    // a insert: 2, 2, 4 -> median 2; a search+: 8, 4, 6 -> median 6
    assertRow(lines, "a", "insert", "2.000", "2.000..4.000", null, null);
    assertRow(lines, "a", "search+", "6.000", "4.000..8.000", null, null);
    // b insert: 1, 3, 1 -> median 1; ratios 0.5, 1.5, 0.25 -> 0.5; ahead in round 2 only
    assertRow(lines, "b", "insert", "1.000", "1.000..3.000", "0.500", "1 of 3");
    // b search+: 10, 10, 9; ratios 1.25, 2.5, 1.5 -> 1.5; ahead in all three
    assertRow(lines, "b", "search+", "10.000", "9.000..10.000", "1.500", "3 of 3");
  }

  @Test
  void anEvenCountsMedianIsTheMeanOfTheMiddleTwo() {
    assertEquals(2.5, Rounds.median(new double[] {4, 1, 2, 3}));
    assertEquals(3.0, Rounds.median(new double[] {5, 3, 1}));
  }

  @Test
  void aMissingPhaseIsAnErrorNotAZero() {
    List<Rounds.Run> runs = List.of(run(0, "a", 1, 1), run(1, "a", 1, 1), run(1, "b", 1, 1));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Rounds.summary(List.of("a", "b"), runs));
    assertTrue(e.getMessage().contains("of b in round 1"), e.getMessage());
  }

  @Test
  void twoSchemesAlternateOverTwoRoundsAndEveryRunReportsItsPhases(@TempDir Path dir) throws Exception {
    WorkloadOptions o = WorkloadOptions.parse(new String[] {"--scheme", "level,dash-eh", "--rounds", "2", "--preload", "2000",
        "--ops", "3000", "--durability", "PROCESS", "--file", dir.resolve("r.pool").toString(), "--csv"});
    ByteArrayOutputStream human = new ByteArrayOutputStream();
    ByteArrayOutputStream csv = new ByteArrayOutputStream();
    List<Rounds.Run> runs;
    try (PrintStream h = new PrintStream(human, true, StandardCharsets.UTF_8);
        PrintStream c = new PrintStream(csv, true, StandardCharsets.UTF_8)) {
      runs = Rounds.run(o, h, c);
    }
    assertEquals(List.of("level", "dash-eh", "dash-eh", "level"), runs.stream().map(Rounds.Run::scheme).toList());
    assertEquals(List.of(0, 0, 1, 1), runs.stream().map(Rounds.Run::round).toList());
    List<String> csvLines = csv.toString(StandardCharsets.UTF_8).lines().toList();
    assertEquals(4 * 4, csvLines.size(), "one csv line per phase per run: " + csvLines);
    assertTrue(csvLines.get(4).startsWith("dash-eh,PROCESS,1,insert,3000,"), csvLines.get(4));
    String text = human.toString(StandardCharsets.UTF_8);
    assertTrue(text.contains("== round 2 of 2: level =="), text);
    for (String scheme : List.of("level", "dash-eh")) {
      assertEquals(1, text.lines().filter(l -> l.startsWith("pmhash workload: warm-up of " + scheme + " done")).count(),
          "each scheme warmed up once, before the rounds:\n" + text);
      assertTrue(text.indexOf("warm-up of " + scheme) < text.indexOf("== round 1 of 2"), text);
    }
    for (String phase : List.of("insert", "search+", "search-", "delete")) {
      assertTrue(text.lines().anyMatch(l -> l.matches("\\s+dash-eh\\s+" + java.util.regex.Pattern.quote(phase) + "\\s.*of 2\\s*")),
          "dash-eh's " + phase + " row with its ratio to level:\n" + text);
    }
  }

  private static Rounds.Run run(int round, String scheme, double insertMops, double searchMops) {
    return new Rounds.Run(round, scheme, List.of(phase("insert", insertMops), phase("search+", searchMops)));
  }

  /** A phase of 1,000,000 operations that ran at {@code mops} Mops/s. */
  private static PhaseResult phase(String name, double mops) {
    return new PhaseResult(name, 1_000_000, 1.0 / mops, new PersistenceStats(0, 0), Double.NaN, null);
  }

  private static void assertRow(List<String> lines, String scheme, String phase, String median, String range, String ratio,
      String ahead) {
    String row = lines.stream().filter(l -> l.trim().startsWith(scheme + " ") && l.trim().split("\\s+")[1].equals(phase))
        .findFirst().orElseThrow(() -> new AssertionError("no row for " + scheme + " " + phase + " in " + lines));
    List<String> cells = List.of(row.trim().split("\\s+"));
    assertEquals(median, cells.get(2), row);
    assertEquals(range, cells.get(3), row);
    if (ratio == null) {
      assertEquals(4, cells.size(), "the first scheme has no ratio: " + row);
    } else {
      assertEquals(ratio, cells.get(4), row);
      assertEquals(ahead, cells.get(5) + " " + cells.get(6) + " " + cells.get(7), row);
    }
  }
}
