package io.pmhash.core.mutation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.crash.MutationCheck;
import io.pmhash.core.crash.MutationSession;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;

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
   * Runs the classes with JUnit, or only the tests asked for (a method {@code class#method(types)}
   * or a class), announcing each class and method to the mutation session; throws (to the check,
   * which only notes it) if none ran.
   */
  static MutationCheck.Selective junit(List<String> classes) {
    // Surefire opens only the packages of the tests it was asked to run; JUnit (in the unnamed
    // module) needs the crash tests' packages open too. A module may open its own packages.
    Module self = CoreMutationCheckTest.class.getModule();
    Module junit = LauncherFactory.class.getModule();
    for (String c : classes) {
      self.addOpens(c.substring(0, c.lastIndexOf('.')), junit);
    }
    return tests -> {
      SummaryGeneratingListener summary = new SummaryGeneratingListener();
      LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
          .selectors((tests == null ? classes : tests).stream().map(Announcer::selector).toList())
          .build(), summary, new Announcer());
      if (summary.getSummary().getTestsStartedCount() == 0) {
        StringWriter w = new StringWriter();
        summary.getSummary().printFailuresTo(new PrintWriter(w), 20);
        throw new IllegalStateException("no test of " + classes + " ran: " + w);
      }
    };
  }

  /** Announces each crash test class and method to the mutation session by its selector. */
  static final class Announcer implements TestExecutionListener {
    @Override
    public void executionStarted(TestIdentifier id) {
      String test = testId(id);
      if (test != null) {
        MutationSession.testStarted(test);
      }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
      if (testId(id) != null) {
        MutationSession.testFinished();
      }
    }

    /** @return {@code class#method(types)}, the class, or null (neither: an engine, a dynamic test) */
    static String testId(TestIdentifier id) {
      TestSource source = id.getSource().orElse(null);
      if (source instanceof MethodSource m) {
        return m.getClassName() + "#" + m.getMethodName() + "(" + m.getMethodParameterTypes() + ")";
      }
      return source instanceof ClassSource c ? c.getClassName() : null;
    }

    static DiscoverySelector selector(String test) {
      return test.contains("#") ? DiscoverySelectors.selectMethod(test) : DiscoverySelectors.selectClass(test);
    }
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
