package io.pmhash.core.mutation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.crash.MutationCheck;
import io.pmhash.testkit.JUnitSuite;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The mutation check of issue 9 over core's own crash tests: the allocator's (reserve/publish,
 * its redo records and transactions) and the pool header's. By default only the inventory runs;
 * the full check is opt-in, with the same command as the schemes' ({@code
 * io.pmhash.schemes.mutation.SchemeMutationCheckTest}):
 *
 * <pre>
 * ./pmhash mvn -pl pmhash-schemes -am verify -Dpmhash.mutation=true \
 *     -Dtest='*MutationCheckTest' -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 *
 * The table is written to {@code target/mutation/core.txt} as the check goes (see {@link
 * MutationCheck}) and printed at the end; the test fails if a site survives that {@link #EXPLAINED}
 * does not list.
 */
class CoreMutationCheckTest {
  static final List<String> CLASSES =
      List.of("io.pmhash.core.alloc.AllocatorCrashTest", "io.pmhash.core.crash.PoolHeaderCrashTest");

  /**
   * Sites that survive for a stated reason, without line numbers; the reasons are those of
   * {@code SchemeMutationCheckTest.EXPLAINED} and docs/reliability.md.
   */
  static final Set<String> EXPLAINED = Set.of(
      "drain Allocator.raiseHighWater", "drain Allocator.formatRun", "flush Allocator.formatRun",
      "drain Redo.commitActions", "flush Redo.recoverLane", "drain Redo.recoverLane", "drain Tx.rollback",
      // The file size recorded by growth: open accepts a file longer than the recorded size, and
      // every open records the size again.
      "flush Pool.grow", "drain Pool.grow");

  /**
   * The suite of the classes ({@link JUnitSuite}), with their packages opened to JUnit: surefire
   * opens only the packages of the tests it was asked to run, and a module may open only its own.
   */
  static MutationCheck.Selective junit(List<String> classes) {
    Module self = CoreMutationCheckTest.class.getModule();
    for (String c : classes) {
      self.addOpens(c.substring(0, c.lastIndexOf('.')), JUnitSuite.launcherModule());
    }
    return JUnitSuite.of(classes);
  }

  /** Sites in the crash tests' own code (a workload's flushes) are not what the check is about. */
  static boolean production(String site) {
    return CLASSES.stream().noneMatch(c -> site.contains(" " + c.substring(c.lastIndexOf('.') + 1) + "."));
  }

  @Test
  void inventory() {
    Map<String, Long> sites = MutationCheck.inventory(junit(CLASSES));
    assertTrue(sites.keySet().stream().anyMatch(s -> s.startsWith("flush Allocator.")), sites.toString());
    assertTrue(sites.keySet().stream().anyMatch(s -> s.startsWith("drain Pool.close")), sites.toString());
  }

  @Test
  void everyFlushAndDrainIsCaught() throws IOException {
    String which = System.getProperty("pmhash.mutation", "");
    if (!(which.equals("true") || which.equals("all") || List.of(which.split(",")).contains("core"))) {
      return; // the full check is opt-in; inventory() runs by default
    }
    Path out = Path.of("target", "mutation");
    Files.createDirectories(out);
    MutationCheck.Result r =
        MutationCheck.run("core", junit(CLASSES), CoreMutationCheckTest::production, out.resolve("core.txt"));
    System.out.println(r.table());
    TreeSet<String> unexplained = new TreeSet<>();
    for (String site : r.survivors()) {
      if (!EXPLAINED.contains(site.replaceAll(":\\d+", ""))) {
        unexplained.add(site);
      }
    }
    assertEquals(new TreeSet<String>(), unexplained, "sites no crash test catches\n" + r.table());
  }
}
