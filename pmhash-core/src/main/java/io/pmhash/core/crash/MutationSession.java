package io.pmhash.core.crash;

import io.pmhash.core.Persistence;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * The run-time state of a {@linkplain MutationCheck mutation check}: while a session is open,
 * every {@link CrashSimulator} names the call site of each flush and drain it receives, adds it
 * to the session's inventory, and does nothing for the one site the session skips (a flush that
 * snapshots nothing, a drain that makes nothing durable and is no crash point), as if that line
 * had been deleted from the source. {@link CrashHarness.Builder#run} tells the session when a
 * crash image failed verification.
 *
 * <h2>Site ids</h2>
 *
 * A site is {@code "flush "} or {@code "drain "} followed by the first stack frame outside
 * {@link Persistence}, {@link CrashSimulator} and this class, as {@code SimpleClassName.method:line}. A {@link
 * Persistence#persist} call is two sites, its flush and its drain. When that frame's method is a
 * persist helper (its name starts with {@code flush}, {@code persist} or {@code drain}, e.g.
 * {@code DashBucket.flushMeta}), the caller's frame is appended after {@code " < "}, and so on
 * until a frame that is not a helper: each use of a helper is its own site.
 *
 * <h2>Tests</h2>
 *
 * The code that runs the crash tests (e.g. a JUnit listener) announces each test with {@link
 * #testStarted} and {@link #testFinished}; the inventory records, per site, which tests called
 * through it ({@link #testsBySite()}), so that a mutated run need only run those tests. Tests nest
 * (a class, then its methods): a call is the innermost open test's.
 *
 * <p>Stack walking happens only while a session is open; without one a simulator pays one
 * volatile read per flush and drain. One session at a time, process-wide; the workloads under it
 * are single-threaded like every crash workload.
 */
public final class MutationSession implements AutoCloseable {
  private static final StackWalker WALKER = StackWalker.getInstance();
  private static final Set<String> SEAM =
      Set.of(Persistence.class.getName(), CrashSimulator.class.getName(), MutationSession.class.getName());
  private static final int MAX_HELPER_DEPTH = 8;

  private static volatile MutationSession current;

  private final String skipped;
  private final boolean failFast;
  private final Map<String, Long> sites = new TreeMap<>();
  private final Set<String> armedSites = new TreeSet<>();
  private final Map<String, Set<String>> testsBySite = new TreeMap<>();
  private final Deque<String> tests = new ArrayDeque<>();
  private final AtomicLong skips = new AtomicLong();
  private final AtomicLong failedImages = new AtomicLong();
  private final AtomicLong failedRuns = new AtomicLong();

  private MutationSession(String skipped, boolean failFast) {
    this.skipped = skipped;
    this.failFast = failFast;
  }

  /**
   * Opens a session that skips nothing and records the inventory of sites: the baseline run.
   *
   * @return the open session; close it when the run is over
   * @throws IllegalStateException if a session is open already
   */
  public static MutationSession inventory() {
    return open(new MutationSession(null, false));
  }

  /**
   * Opens a session that skips one site. Once a crash test has failed under it, later crash
   * tests fail at once without running ({@link CrashHarness.Builder#run} throws), and a crash
   * test stops at its first failing image: the site is caught, the rest would only repeat it.
   *
   * @param siteId a site id from an {@linkplain #sites() inventory}
   * @return the open session; close it when the run is over
   * @throws IllegalStateException if a session is open already
   */
  public static MutationSession skipping(String siteId) {
    return open(new MutationSession(Objects.requireNonNull(siteId, "siteId"), true));
  }

  private static synchronized MutationSession open(MutationSession s) {
    if (current != null) {
      throw new IllegalStateException("a mutation session is open already (skipping "
          + current.skipped + "); close it first");
    }
    current = s;
    return s;
  }

  /** @return the open session, or null */
  static MutationSession current() {
    return current;
  }

  @Override
  public void close() {
    synchronized (MutationSession.class) {
      if (current == this) {
        current = null;
      }
    }
  }

  /** @return the site this session skips, or null for an inventory */
  public String skipped() {
    return skipped;
  }

  /** @return every site seen, in order, with the number of calls made through it */
  public synchronized Map<String, Long> sites() {
    return Collections.unmodifiableMap(new TreeMap<>(sites));
  }

  /**
   * @return the sites seen at least once while a simulator was {@linkplain CrashSimulator#armed()
   *     armed}, i.e. while its drains were crash points (the workload, or a recovery being
   *     crashed); a site seen only in setup or in a recovery that is not crashed has none
   */
  public synchronized Set<String> armedSites() {
    return Collections.unmodifiableSet(new TreeSet<>(armedSites));
  }

  /**
   * @return per site, the ids of the tests that called through it (innermost open test at the
   *     call, see {@link #testStarted}); a site called outside every test has no entry
   */
  public synchronized Map<String, Set<String>> testsBySite() {
    Map<String, Set<String>> copy = new TreeMap<>();
    testsBySite.forEach((site, ids) -> copy.put(site, Collections.unmodifiableSet(new TreeSet<>(ids))));
    return Collections.unmodifiableMap(copy);
  }

  /**
   * Announces that a test starts: until the matching {@link #testFinished}, calls through sites
   * are this test's (unless a nested test starts). Does nothing when no session is open.
   *
   * @param testId the test's id, the one a {@link MutationCheck.Selective} suite accepts to run it
   */
  public static void testStarted(String testId) {
    Objects.requireNonNull(testId, "testId");
    MutationSession s = current;
    if (s != null) {
      synchronized (s) {
        s.tests.push(testId);
      }
    }
  }

  /**
   * Announces that the innermost open test finished. Does nothing when no session is open.
   *
   * @throws IllegalStateException if no test is open
   */
  public static void testFinished() {
    MutationSession s = current;
    if (s != null) {
      synchronized (s) {
        if (s.tests.isEmpty()) {
          throw new IllegalStateException("testFinished without a matching testStarted");
        }
        s.tests.pop();
      }
    }
  }

  /** @return how many calls through the skipped site were skipped */
  public long skips() {
    return skips.get();
  }

  /** @return crash images that failed verification in {@link CrashHarness.Builder#run} calls */
  public long failedImages() {
    return failedImages.get();
  }

  /** @return {@link CrashHarness.Builder#run} calls that failed */
  public long failedRuns() {
    return failedRuns.get();
  }

  /** @return whether some crash test failed under this session */
  public boolean caught() {
    return failedRuns.get() > 0;
  }

  /**
   * For a crash check written without {@link CrashHarness} (e.g. one that closes and reopens a
   * pool under its own {@link CrashSimulator}): call this when a crash image fails its check, so
   * that a mutation check counts it. Does nothing when no session is open.
   */
  public static void crashImageFailed() {
    MutationSession s = current;
    if (s != null) {
      s.runFailed(1);
    }
  }

  boolean failFast() {
    return failFast;
  }

  void runFailed(long images) {
    failedRuns.incrementAndGet();
    failedImages.addAndGet(images);
  }

  /**
   * Records the calling site and says whether to skip it. Called by a simulator from its flush
   * or drain.
   *
   * @param drain true for a drain, false for a flush
   * @param armed whether the simulator is armed
   * @return true when this call is to be skipped
   */
  boolean skip(boolean drain, boolean armed) {
    String site = (drain ? "drain " : "flush ") + WALKER.walk(MutationSession::describe);
    synchronized (this) {
      sites.merge(site, 1L, Long::sum);
      if (armed) {
        armedSites.add(site);
      }
      String test = tests.peek();
      if (test != null) {
        testsBySite.computeIfAbsent(site, k -> new TreeSet<>()).add(test);
      }
    }
    if (site.equals(skipped)) {
      skips.incrementAndGet();
      return true;
    }
    return false;
  }

  private static String describe(Stream<StackWalker.StackFrame> frames) {
    StringBuilder b = new StringBuilder();
    int helpers = 0;
    for (Iterator<StackWalker.StackFrame> it = frames.iterator(); it.hasNext(); ) {
      StackWalker.StackFrame f = it.next();
      String cls = f.getClassName();
      if (b.isEmpty() && SEAM.contains(cls)) {
        continue;
      }
      if (!b.isEmpty()) {
        b.append(" < ");
      }
      String method = f.getMethodName();
      b.append(cls.substring(cls.lastIndexOf('.') + 1)).append('.').append(method).append(':')
          .append(f.getLineNumber());
      boolean helper = method.startsWith("flush") || method.startsWith("persist") || method.startsWith("drain");
      if (!helper || ++helpers > MAX_HELPER_DEPTH) {
        break;
      }
    }
    return b.isEmpty() ? "(unknown)" : b.toString();
  }
}
