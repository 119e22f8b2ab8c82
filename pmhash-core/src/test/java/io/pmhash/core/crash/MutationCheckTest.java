package io.pmhash.core.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mutation check's own machinery on a two-operation workload: each operation persists its
 * word (needed) after it persists a line it never wrote (not needed). The check must catch the
 * needed flush and drain and report the other pair as survivors.
 */
class MutationCheckTest {
  @TempDir Path dir;

  private void crashTest() {
    twoOps(0);
  }

  /** Two operations on the words of lines {@code base} and {@code base + 1}. */
  private void twoOps(int base) {
    CrashHarness.builder(dir, Raw.OPTIONS)
        .run((pool, ops) -> {
              for (int i = 0; i < 2; i++) {
                ops.begin(i);
                pool.persistence().persist(Raw.line(pool, 8), 8); // a clean line: not needed
                Raw.set(pool, Raw.line(pool, base + i), i + 1);
                pool.persistence().persist(Raw.line(pool, base + i), 8); // needed
                ops.end(i);
              }
            },
            (pool, point) -> {
              for (int i = 0; i < point.opsCompleted(); i++) {
                assertEquals(i + 1, Raw.get(pool, Raw.line(pool, base + i)), "completed op " + i);
              }
            });
  }

  /** The workload's own sites, not the pool's. */
  private static boolean mine(String site) {
    return site.contains("MutationCheckTest.");
  }

  @Test
  void catchesTheNeededPersistAndReportsTheRedundantOne() {
    MutationCheck.Result r = MutationCheck.run("two ops", this::crashTest, MutationCheckTest::mine);
    assertEquals(4, r.outcomes().size(), r.table());
    List<MutationCheck.Outcome> o = r.outcomes();
    // Sites sort as "drain ..." then "flush ...", each by line.
    assertTrue(o.get(0).site().startsWith("drain MutationCheckTest.lambda$twoOps$"), r.table());
    assertFalse(o.get(0).caught(), r.table());
    assertTrue(o.get(1).caught(), r.table());
    assertTrue(o.get(2).site().startsWith("flush MutationCheckTest."), r.table());
    assertFalse(o.get(2).caught(), r.table());
    assertTrue(o.get(3).caught(), r.table());
    assertEquals(2, r.survivors().size(), r.table());
    for (MutationCheck.Outcome x : o) {
      assertEquals(2, x.calls(), r.table());
      assertEquals(2, x.skips(), r.table());
      assertTrue(x.armed(), r.table());
    }
    assertTrue(r.table().contains("SURVIVED"), r.table());
  }

  /** Fake test a of a two-test suite. */
  private void testA() {
    twoOps(0);
  }

  /** Fake test b: the same crash test on other lines, then sites of its own. */
  private void testB() {
    twoOps(2);
    CrashHarness.builder(dir, Raw.OPTIONS)
        .run((pool, ops) -> {
              ops.begin(0);
              pool.persistence().persist(Raw.line(pool, 10), 8); // b's alone, not needed
              ops.end(0);
            },
            (pool, point) -> {});
  }

  /** Setup outside every test: a persist that no test reaches. */
  private void outsideEveryTest() {
    CrashHarness.builder(dir, Raw.OPTIONS)
        .run((pool, ops) -> {
              ops.begin(0);
              pool.persistence().persist(Raw.line(pool, 9), 8); // no test's
              ops.end(0);
            },
            (pool, point) -> {});
  }

  @Test
  void aMutatedRunRunsOnlyTheTestsThatReachedTheSite() {
    List<String> runs = new ArrayList<>(); // per run: the site skipped (or "baseline") and the tests run
    MutationCheck.Selective suite = tests -> {
      MutationSession s = MutationSession.current();
      runs.add((s.skipped() == null ? "baseline" : s.skipped()) + " " + tests);
      outsideEveryTest();
      for (String name : List.of("a", "b")) {
        if (tests == null || tests.contains(name)) {
          MutationSession.testStarted(name);
          try {
            if (name.equals("a")) {
              testA();
            } else {
              testB();
            }
          } finally {
            MutationSession.testFinished();
          }
        }
      }
    };
    MutationCheck.Result r = MutationCheck.run("two tests", suite, MutationCheckTest::mine);
    String log = String.join("\n", runs) + "\n" + r.table();
    // twoOps' 4 sites are reached by both tests, testB's 2 by b alone, outsideEveryTest's 2 by none:
    // a baseline and 6 mutated runs.
    assertEquals(8, r.outcomes().size(), log);
    assertEquals(7, runs.size(), log);
    assertEquals("baseline null", runs.get(0), log);
    for (MutationCheck.Outcome o : r.outcomes()) {
      String site = o.site();
      if (site.contains("outsideEveryTest")) {
        assertEquals(0, o.tests(), log);
        assertEquals(0, o.skips(), log);
        assertFalse(o.caught(), log);
        assertTrue(runs.stream().noneMatch(run -> run.startsWith(site + " ")), log);
      } else if (site.contains("testB")) {
        assertEquals(1, o.tests(), log);
        assertTrue(runs.contains(site + " [b]"), log);
        assertEquals(1, o.skips(), log);
        assertFalse(o.caught(), log);
      } else {
        assertTrue(site.contains("twoOps"), log);
        assertEquals(2, o.tests(), log);
        assertTrue(runs.contains(site + " [a, b]"), log);
        // A caught site fails test a, and the suite stops there (a thrown crash test failure).
        assertEquals(o.caught() ? 2 : 4, o.skips(), log);
      }
    }
    // twoOps' needed flush and drain are caught; its clean line, b's and the unreached sites survive.
    assertEquals(6, r.survivors().size(), log);
    assertTrue(r.table().contains("tests run 0 (reached by no test)"), log);
  }

  @Test
  void theReportHoldsEveryFinishedSiteWhileTheNextOneRuns() throws IOException {
    Path report = dir.resolve("two-ops.txt");
    Files.writeString(report, "a stale table of an earlier run\n");
    List<String> seen = new ArrayList<>(); // per run: the report as it was when the run started
    MutationCheck.Selective suite = tests -> {
      seen.add(Files.exists(report) ? Files.readString(report) : "(none)");
      MutationSession.testStarted("crash test");
      try {
        crashTest();
      } finally {
        MutationSession.testFinished();
      }
    };
    MutationCheck.Result r = MutationCheck.run("two ops", suite, MutationCheckTest::mine, report);
    String log = String.join("----\n", seen) + "====\n" + r.table();
    List<String> lines = r.table().lines().toList(); // header, 4 sites, total
    assertEquals(6, lines.size(), log);
    assertEquals(5, seen.size(), log); // the baseline and 4 mutated runs
    assertEquals("(none)", seen.get(0), log); // the stale table is gone before the baseline
    for (int k = 1; k <= 4; k++) {
      // Mutated run k starts with the header and the lines of the k - 1 sites before it, no total.
      assertEquals(String.join("\n", lines.subList(0, k)) + "\n", seen.get(k), log);
    }
    assertEquals(r.table(), Files.readString(report), log);
  }

  @Test
  void theInventoryNamesTheCallerNotTheSeam() {
    Map<String, Long> sites = MutationCheck.inventory(this::crashTest);
    assertEquals(4, sites.keySet().stream().filter(MutationCheckTest::mine).count(), sites.toString());
    sites.keySet().forEach(s -> assertFalse(s.contains("Persistence.") || s.contains("CrashSimulator."), s));
    // The pool's own header sites, seen when the pool is created and each image is opened.
    assertTrue(sites.keySet().stream().anyMatch(s -> s.startsWith("flush Pool.")), sites.toString());
  }

  @Test
  void aFailingBaselineIsRefusedAndSessionsDoNotNest() {
    MutationCheck.Suite broken = () -> CrashHarness.builder(dir, Raw.OPTIONS)
        .run((pool, ops) -> {
              ops.begin(0);
              Raw.set(pool, Raw.line(pool, 0), 1); // never persisted
              ops.end(0);
            },
            (pool, point) -> assertEquals(point.opsCompleted(), Raw.get(pool, Raw.line(pool, 0))));
    assertThrows(IllegalStateException.class, () -> MutationCheck.run("broken", broken));
    try (MutationSession s = MutationSession.inventory()) {
      assertThrows(IllegalStateException.class, () -> MutationSession.skipping("flush x"));
      assertEquals(null, s.skipped());
    }
  }
}
