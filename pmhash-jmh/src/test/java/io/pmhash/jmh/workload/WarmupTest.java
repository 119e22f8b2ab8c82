package io.pmhash.jmh.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The workload's warm-up: on by default, off with {@code --no-warmup}; its options are the run's
 * at a tenth of the keys on a file of its own; it runs untimed, reports one line, and leaves no
 * file behind. What it does to the measured phases' speed is measured, not asserted
 * (docs/persistence.md, "Warm-up").
 */
class WarmupTest {
  @Test
  void onByDefaultAndOffWithNoWarmup() {
    assertTrue(WorkloadOptions.parse(new String[] {}).warmup());
    assertFalse(WorkloadOptions.parse(new String[] {"--no-warmup"}).warmup());
    assertFalse(WorkloadOptions.parse(new String[] {"--scheme", "esh,level", "--no-warmup"}).forScheme("level").warmup());
  }

  @Test
  void theWarmupIsTheSameWorkloadAtATenthOnItsOwnFile(@TempDir Path dir) {
    WorkloadOptions o = WorkloadOptions.parse(new String[] {"--scheme", "esh,dash-eh", "--rounds", "3", "--preload", "1000005",
        "--ops", "5000000", "--threads", "2", "--durability", "PROCESS", "--file", dir.resolve("w.pool").toString(),
        "--param", "stashBuckets=4", "--initial-capacity", "700", "--latency", "--csv", "--fresh-open"});
    WorkloadOptions w = o.forScheme("dash-eh").forWarmup();
    assertEquals("dash-eh", w.scheme());
    assertEquals(List.of("dash-eh"), w.schemes());
    assertEquals(1, w.rounds());
    assertEquals(100_000, w.preload());
    assertEquals(500_000, w.ops());
    assertEquals(70, w.initialCapacity());
    assertEquals(2, w.threads());
    assertEquals(o.durability(), w.durability());
    assertEquals(Map.of("stashBuckets", 4L), w.params());
    assertEquals(o.seed(), w.seed());
    assertTrue(w.latency(), "the warm-up runs the loops the run will time");
    assertEquals(dir.resolve("w.pool.warmup"), w.file());
    assertFalse(w.csv(), "no csv lines of the warm-up among the run's");
    assertFalse(w.freshOpen());
    assertFalse(w.keep());
    assertFalse(w.warmup());
    assertEquals(1, WorkloadOptions.parse(new String[] {"--ops", "7"}).forWarmup().ops(), "at least one operation per phase");
  }

  @Test
  void theWarmupRunsReportsOneLineAndLeavesNoFile(@TempDir Path dir) throws Exception {
    for (String scheme : List.of("dash-eh", WorkloadOptions.POOL)) {
      WorkloadOptions o = WorkloadOptions.parse(new String[] {"--scheme", scheme, "--preload", "20000", "--ops", "30000",
          "--durability", "PMEM_EMULATED", "--file", dir.resolve(scheme + ".pool").toString()});
      String text = warmUp(o);
      List<String> lines = text.lines().toList();
      assertEquals(1, lines.size(), text);
      assertTrue(lines.get(0).startsWith("pmhash workload: warm-up of " + scheme + " done: the same workload at 2,000 preloaded keys"
          + " and 3,000 operations per phase, untimed"), text);
      try (Stream<Path> left = Files.list(dir)) {
        assertEquals(List.of(), left.toList(), "the warm-up's pool file and its crash copy are deleted");
      }
    }
  }

  @Test
  void noWarmupRunsNothing(@TempDir Path dir) throws Exception {
    WorkloadOptions o = WorkloadOptions.parse(new String[] {"--no-warmup", "--file", dir.resolve("n.pool").toString()});
    assertEquals("", warmUp(o));
  }

  private static String warmUp(WorkloadOptions o) throws Exception {
    ByteArrayOutputStream human = new ByteArrayOutputStream();
    try (PrintStream h = new PrintStream(human, true, StandardCharsets.UTF_8)) {
      WorkloadCommand.warmUp(o, h);
    }
    return human.toString(StandardCharsets.UTF_8);
  }
}
