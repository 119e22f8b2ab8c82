package io.pmhash.testkit;

import io.pmhash.core.crash.MutationCheck;
import io.pmhash.core.crash.MutationSession;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
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
 * A crash-test suite for the {@link MutationCheck}, run with the JUnit Platform launcher: every
 * test class of the suite, or only the tests a mutated run asks for, each test announced to the
 * {@link MutationSession} while it runs (so that the check learns which tests reach which site).
 * The one runner of core's and the schemes' mutation checks.
 *
 * <p>Test support, in {@code pmhash-core/src/testkit/java}, which the build adds to the test
 * sources of pmhash-core and pmhash-schemes (one source, compiled into each module's tests; no
 * main jar has it). JUnit reflects on the test classes, so their packages must be open to the
 * launcher's module: the caller opens them ({@link Module#addOpens} works only for the caller's
 * own module).
 */
public final class JUnitSuite {
  private JUnitSuite() {}

  /**
   * The suite of {@code classes}.
   *
   * @param classes the crash test classes, fully qualified
   * @return a runner of all of them ({@code null} tests) or of the tests named ({@code
   *     class#method(types)} or a class); it throws, which the check only notes, if no test ran
   */
  public static MutationCheck.Selective of(List<String> classes) {
    return tests -> {
      SummaryGeneratingListener summary = new SummaryGeneratingListener();
      LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
          .selectors((tests == null ? classes : tests).stream().map(JUnitSuite::selector).toList())
          .build(), summary, new Announcer());
      if (Boolean.getBoolean("pmhash.mutation.debug")) {
        summary.getSummary().printTo(new PrintWriter(System.out, true));
        summary.getSummary().printFailuresTo(new PrintWriter(System.out, true), 20);
      }
      if (summary.getSummary().getTestsStartedCount() == 0) {
        StringWriter w = new StringWriter();
        summary.getSummary().printFailuresTo(new PrintWriter(w), 20);
        throw new IllegalStateException("no test of " + classes + " ran: " + w);
      }
    };
  }

  /**
   * The module JUnit's launcher runs in, to which the caller opens its test packages.
   *
   * @return the launcher's module (the unnamed module when JUnit is on the class path)
   */
  public static Module launcherModule() {
    return LauncherFactory.class.getModule();
  }

  /**
   * The id a test is announced by.
   *
   * @param id JUnit's identifier of a running test or container
   * @return {@code class#method(types)}, the class, or null (neither: an engine, a dynamic test)
   */
  static String testId(TestIdentifier id) {
    TestSource source = id.getSource().orElse(null);
    if (source instanceof MethodSource m) {
      return m.getClassName() + "#" + m.getMethodName() + "(" + m.getMethodParameterTypes() + ")";
    }
    return source instanceof ClassSource c ? c.getClassName() : null;
  }

  private static DiscoverySelector selector(String test) {
    return test.contains("#") ? DiscoverySelectors.selectMethod(test) : DiscoverySelectors.selectClass(test);
  }

  /** Announces each crash test class and method to the mutation session by its id. */
  private static final class Announcer implements TestExecutionListener {
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
  }
}
