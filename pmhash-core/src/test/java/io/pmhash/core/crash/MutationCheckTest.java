package io.pmhash.core.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
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
    CrashHarness.builder(dir, Raw.OPTIONS)
        .run((pool, ops) -> {
              for (int i = 0; i < 2; i++) {
                ops.begin(i);
                pool.persistence().persist(Raw.line(pool, 8), 8); // a clean line: not needed
                Raw.set(pool, Raw.line(pool, i), i + 1);
                pool.persistence().persist(Raw.line(pool, i), 8); // needed
                ops.end(i);
              }
            },
            (pool, point) -> {
              for (int i = 0; i < point.opsCompleted(); i++) {
                assertEquals(i + 1, Raw.get(pool, Raw.line(pool, i)), "completed op " + i);
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
    assertTrue(o.get(0).site().startsWith("drain MutationCheckTest.lambda$crashTest$"), r.table());
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
