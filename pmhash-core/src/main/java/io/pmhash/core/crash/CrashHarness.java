package io.pmhash.core.crash;

import io.pmhash.core.Durability;
import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.internal.OrderingPersistence;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Runs a small workload on a fresh pool under a {@link CrashSimulator}, crashes it at every
 * drain and at its end, and checks every durable image a crash may leave with the test's
 * verifier: each image is written to its own pool file, opened with {@link Pool#open} (so header
 * validation and the pool's own recovery run as after a real crash), and handed to the verifier,
 * which recovers the structure and checks it against its oracle. Optionally each recovery is
 * crashed again at its own drains, one level deep. See the {@linkplain io.pmhash.core.crash
 * package documentation} for an example.
 *
 * <p>Images are written at the crash point as one sparse base file plus a short list of words
 * per image, and verified after the workload has finished, one at a time; each image file is
 * deleted after use, so memory and disk stay bounded by the number of pending words, not by the
 * pool size times the number of images. Use a small pool ({@link PoolOptions#withInitialSize}
 * and {@link PoolOptions#withGeometry}) and a tmpfs work directory: every crash point scans the
 * whole pool and every image is a pool file.
 */
public final class CrashHarness {
  private CrashHarness() {}

  /** Operations before the workload's crash points, e.g. creating the empty structure. */
  @FunctionalInterface
  public interface Setup {
    /**
     * Runs on the fresh pool before crash points are recorded: its drains are not crash points
     * (they still count in {@link CrashPoint#drainIndex()}).
     *
     * @param pool the fresh pool
     * @throws Exception to fail the test
     */
    void setUp(Pool pool) throws Exception;
  }

  /** The operations to crash: a small, deterministic, single-threaded workload. */
  @FunctionalInterface
  public interface Workload {
    /**
     * Runs the workload; every drain it makes is a crash point. A workload may end by closing
     * the pool (directly, or through its structure's close): the drains of that clean shutdown
     * are crash points too, and their images where the pool's clean-shutdown marker is durable
     * open as after a clean shutdown ({@link Pool#lastShutdownClean()} true) with only what the
     * structure had flushed before, or any part of what it had not: the power loss in the window
     * between the marker's persist and the write-back that {@link Pool#close()} makes after it.
     * Such a workload gets no crash point at its end (the marker's drain is its last).
     *
     * @param pool the pool, after {@link Setup}
     * @param ops marks operation boundaries, so each crash point knows which operations
     *     completed and which is in flight
     * @throws Exception to fail the test (not a crash failure: the workload itself is broken)
     */
    void run(Pool pool, Ops ops) throws Exception;
  }

  /** Recovers the structure in a crash image and checks it against the test's oracle. */
  @FunctionalInterface
  public interface Verifier {
    /**
     * Recovers and checks one image; throws (an {@link AssertionError} or any exception) on a
     * violation. The pool is opened on the image and closed by the harness afterwards. When the
     * harness crashes recovery too, call {@link CrashHarness#recovered(Pool)} once recovery is
     * done and before the verifier writes anything else (e.g. operations checking that the
     * table still works): drains after it are not crash points.
     *
     * @param pool the pool opened on the image; its {@link Pool#lastShutdownClean()} is false,
     *     unless the workload closed the pool and the image holds its clean-shutdown marker
     * @param point where the crash was and which image this is
     * @throws Exception on a violation
     */
    void verify(Pool pool, CrashPoint point) throws Exception;
  }

  /** Marks operation boundaries in a {@link Workload}. Operations do not nest. */
  public interface Ops {
    /**
     * An operation starts: crash points from here to {@link #end} have it in flight.
     *
     * @param opId the operation's id, e.g. its index in the test's operation list
     * @throws IllegalStateException if another operation is in flight
     */
    void begin(long opId);

    /**
     * The operation completed: crash points from here count it in {@link
     * CrashPoint#opsCompleted()}.
     *
     * @param opId the id given to {@link #begin}
     * @throws IllegalStateException if that operation is not the one in flight
     */
    void end(long opId);
  }

  /**
   * Starts a crash test.
   *
   * @param workDir where pool and image files go, preferably on tmpfs; a fresh subdirectory is
   *     made there and deleted afterwards
   * @param options the options a pool of the scheme is created and opened with; the harness
   *     replaces their persistence with a simulator and their durability with {@link
   *     Durability#PROCESS}
   * @return a builder
   */
  public static Builder builder(Path workDir, PoolOptions options) {
    return new Builder(workDir, options);
  }

  /**
   * Called by a {@link Verifier} when recovery is complete: when the harness is crashing
   * recovery, this is the last crash point of the recovery (a crash after it completed), and
   * later drains are not crash points. Does nothing on other pools.
   *
   * @param pool the pool the verifier was given
   */
  public static void recovered(Pool pool) {
    if (pool.persistence() instanceof CrashSimulator sim && sim.armed() && sim.recoveryRun) {
      sim.offerCrashPoint();
      sim.disarm();
    }
  }

  /** Which images to take, the seed, what to crash. */
  public static final class Builder {
    private final Path workDir;
    private final PoolOptions options;
    private Set<ImageKind> kinds = EnumSet.of(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE);
    private Set<ImageKind> recoveryKinds;
    private int randomImages;
    private long seed = 0x5EEDL;
    private int eachLineCap = 64;
    private boolean crashDuringRecovery;
    private Setup setup;
    private int onlyDrain = -1;

    private Builder(Path workDir, PoolOptions options) {
      this.workDir = Objects.requireNonNull(workDir, "workDir");
      this.options = Objects.requireNonNull(options, "options");
      if (options.durability() == Durability.VOLATILE) {
        throw new IllegalArgumentException("a crash test needs a file pool, not VOLATILE options");
      }
    }

    /**
     * The image kinds taken at every crash point, replacing the default DRAINED, ALL_PENDING and
     * EACH_LINE. RANDOM images are taken when RANDOM is named here or {@link #randomImages} asked
     * for some (4 per point when it is only named here), in either order of the calls.
     *
     * @param first a kind
     * @param more more kinds
     * @return this builder
     */
    public Builder images(ImageKind first, ImageKind... more) {
      kinds = EnumSet.of(first, more);
      return this;
    }

    /**
     * Takes {@code count} {@link ImageKind#RANDOM} images per crash point (0: none, unless RANDOM
     * is among {@link #images}). Their seeds derive from {@code baseSeed} and the crash point, so
     * a run with the same seed and workload takes the same images; failures print each image's
     * seed.
     *
     * @param count random images per crash point
     * @param baseSeed the seed of the run
     * @return this builder
     */
    public Builder randomImages(int count, long baseSeed) {
      if (count < 0) {
        throw new IllegalArgumentException("random image count must not be negative, got " + count);
      }
      randomImages = count;
      seed = baseSeed;
      return this;
    }

    /** The kinds in force: RANDOM added when random images were asked for. */
    Set<ImageKind> kinds(Set<ImageKind> named) {
      Set<ImageKind> out = EnumSet.copyOf(named);
      if (randomImages > 0) {
        out.add(ImageKind.RANDOM);
      }
      return out;
    }

    /** Random images per point. */
    int randomCount() {
      return randomImages > 0 ? randomImages : 4;
    }

    /**
     * The most {@link ImageKind#EACH_LINE} images per crash point (default 64): the lowest lines
     * are taken, and the report notes every crash point that had more.
     *
     * @param cap at least 1
     * @return this builder
     */
    public Builder eachLineCap(int cap) {
      if (cap < 1) {
        throw new IllegalArgumentException("each-line cap must be at least 1, got " + cap);
      }
      eachLineCap = cap;
      return this;
    }

    /**
     * Whether to crash each recovery again: every image is opened under a fresh simulator, its
     * verifier's drains (up to {@link CrashHarness#recovered}) and its end are crash points, and
     * their images are verified once more, without crashing again. Off by default.
     *
     * @param on whether to crash during recovery
     * @return this builder
     */
    public Builder crashDuringRecovery(boolean on) {
      crashDuringRecovery = on;
      return this;
    }

    /**
     * The image kinds taken at crash points during recovery; by default the workload's. RANDOM
     * is taken here only when named (with the count of {@link #randomImages}, else 4).
     *
     * @param first a kind
     * @param more more kinds
     * @return this builder
     */
    public Builder recoveryImages(ImageKind first, ImageKind... more) {
      recoveryKinds = EnumSet.of(first, more);
      return this;
    }

    /**
     * Runs before crash points are recorded, e.g. to create the empty structure. Without it,
     * every drain of the workload is a crash point, those before the first {@link Ops#begin}
     * included.
     *
     * @param s the setup
     * @return this builder
     */
    public Builder setup(Setup s) {
      setup = Objects.requireNonNull(s, "setup");
      return this;
    }

    /**
     * Replays one crash point: only the drain with this index (or, with the number of drains of
     * the workload, its end) is crashed. With the same workload, kinds and seed, it takes the
     * same images as the full run.
     *
     * @param drainIndex the {@link CrashPoint#drainIndex()} of a top-level failure
     * @return this builder
     */
    public Builder onlyDrain(int drainIndex) {
      if (drainIndex < 0) {
        throw new IllegalArgumentException("drain index must not be negative, got " + drainIndex);
      }
      onlyDrain = drainIndex;
      return this;
    }

    /**
     * Runs the crash test and fails if any image fails verification.
     *
     * @param workload the operations to crash
     * @param verifier recovers and checks an image
     * @return the report of a passing run
     * @throws AssertionError naming the first failures (each replayable) and their total
     */
    public Report run(Workload workload, Verifier verifier) {
      MutationSession mutation = MutationSession.current();
      if (mutation != null && mutation.failFast() && mutation.caught()) {
        throw new AssertionError("mutation check: " + mutation.skipped()
            + " is caught already by an earlier crash test; this one is not run");
      }
      Report report = collect(workload, verifier);
      if (!report.passed()) {
        if (mutation != null) {
          mutation.runFailed(report.failureCount());
        }
        throw report.assertionError();
      }
      return report;
    }

    /**
     * Runs the crash test and returns its report, failures included: for tests that expect a
     * failure (negative controls).
     *
     * @param workload the operations to crash
     * @param verifier recovers and checks an image
     * @return the report
     * @throws AssertionError if the workload or its setup itself throws
     * @throws UncheckedIOException if the harness cannot write its files
     */
    public Report collect(Workload workload, Verifier verifier) {
      Objects.requireNonNull(workload, "workload");
      Objects.requireNonNull(verifier, "verifier");
      Report report;
      try {
        report = new Run(this, verifier).execute(workload);
      } catch (IOException e) {
        throw new UncheckedIOException("crash harness could not write its files in " + workDir, e);
      }
      if (MutationSession.current() == null) {
        String scheme = options.scheme();
        Evidence.record("crash", scheme == null ? "core" : scheme,
            "crashPoints", report.crashPoints(), "recoveryCrashPoints", report.recoveryCrashPoints(),
            "images", report.imagesChecked(), "failed", report.failureCount());
      }
      return report;
    }
  }

  /** The outcome of a crash test. */
  public static final class Report {
    private static final int KEPT_FAILURES = 200;

    private final long seed;
    private int crashPoints;
    private int recoveryCrashPoints;
    private long imagesChecked;
    private long duplicatesSkipped;
    private long failureCount;
    private final List<Failure> failures = new ArrayList<>();
    private final Map<ImageKind, Long> failuresByKind = new EnumMap<>(ImageKind.class);
    private final List<String> notes = new ArrayList<>();
    private int cappedPoints;

    Report(long seed) {
      this.seed = seed;
    }

    /** @return crash points of the workload (drains and its end) */
    public int crashPoints() {
      return crashPoints;
    }

    /** @return crash points taken during recoveries */
    public int recoveryCrashPoints() {
      return recoveryCrashPoints;
    }

    /** @return images opened and verified, failed ones included */
    public long imagesChecked() {
      return imagesChecked;
    }

    /** @return images not checked because another image of the same crash point had the same words */
    public long duplicateImagesSkipped() {
      return duplicatesSkipped;
    }

    /** @return the number of images that failed */
    public long failureCount() {
      return failureCount;
    }

    /** @return the failures, in the order found (at most the first 200) */
    public List<Failure> failures() {
      return Collections.unmodifiableList(failures);
    }

    /**
     * @param kind an image kind
     * @return how many images of that kind failed (during recovery included)
     */
    public long failures(ImageKind kind) {
      return failuresByKind.getOrDefault(kind, 0L);
    }

    /** @return remarks, e.g. crash points whose {@link ImageKind#EACH_LINE} images were capped */
    public List<String> notes() {
      List<String> out = new ArrayList<>(notes);
      if (cappedPoints > 0) {
        out.add(cappedPoints + " crash point(s) had more dirty lines than the each-line cap;"
            + " only the lowest lines were imaged alone (raise Builder.eachLineCap)");
      }
      return out;
    }

    /** @return the base seed of the random images */
    public long seed() {
      return seed;
    }

    /** @return true when no image failed */
    public boolean passed() {
      return failureCount == 0;
    }

    /** @return one line: points, images, failures */
    public String summary() {
      return "crash test: " + crashPoints + " crash points"
          + (recoveryCrashPoints > 0 ? " + " + recoveryCrashPoints + " during recovery" : "")
          + ", " + imagesChecked + " images checked (" + duplicatesSkipped + " duplicates skipped), "
          + failureCount + " failed" + (failureCount > 0 ? " " + failuresByKind : "")
          + ", seed 0x" + Long.toHexString(seed);
    }

    AssertionError assertionError() {
      StringBuilder b = new StringBuilder(summary());
      int shown = Math.min(5, failures.size());
      for (int i = 0; i < shown; i++) {
        b.append("\n  ").append(i + 1).append(". ").append(failures.get(i).describe());
      }
      if (failureCount > shown) {
        b.append("\n  ... and ").append(failureCount - shown).append(" more");
      }
      if (!failures.isEmpty()) {
        b.append("\n  a replay takes the same images with the same workload, image kinds and seed");
      }
      for (String note : notes()) {
        b.append("\n  note: ").append(note);
      }
      AssertionError e = new AssertionError(b.toString(), failures.isEmpty() ? null : failures.get(0).cause());
      for (int i = 1; i < shown; i++) {
        e.addSuppressed(failures.get(i).cause());
      }
      return e;
    }

    void fail(CrashPoint point, Throwable cause) {
      failureCount++;
      failuresByKind.merge(point.kind(), 1L, Long::sum);
      if (failures.size() < KEPT_FAILURES) {
        failures.add(new Failure(point, cause));
      }
    }

    @Override
    public String toString() {
      return summary();
    }
  }

  /**
   * One image that failed verification.
   *
   * @param point where the crash was and which image it was
   * @param cause what the verifier (or {@link Pool#open}) threw
   */
  public record Failure(CrashPoint point, Throwable cause) {
    /** @return the crash point, the image, how to replay it and the cause, on one line */
    public String describe() {
      CrashPoint top = point;
      while (top.parent() != null) {
        top = top.parent();
      }
      return point.describe() + " [replay: .onlyDrain(" + top.drainIndex() + ")]: " + cause;
    }
  }

  /** A harness error that must not be mistaken for a verification failure. */
  private static final class HarnessIoException extends UncheckedIOException {
    private static final long serialVersionUID = 1L;

    HarnessIoException(IOException cause) {
      super(cause);
    }
  }

  /** The images of one crash point: a base file of the durable shadow and the words of each image. */
  private record Captured(CrashPoint template, Path base, List<CrashImage> images, long[] seedKey) {}

  /** The state of one run. */
  private static final class Run {
    private final Builder b;
    private final Verifier verifier;
    private final Report report;
    private final Set<ImageKind> kinds;
    private final Set<ImageKind> recoveryKinds;
    private Path dir;
    private int files;

    Run(Builder b, Verifier verifier) {
      this.b = b;
      this.verifier = verifier;
      this.report = new Report(b.seed);
      this.kinds = b.kinds(b.kinds);
      this.recoveryKinds = b.recoveryKinds != null ? b.recoveryKinds : kinds;
    }

    Report execute(Workload workload) throws IOException {
      Files.createDirectories(b.workDir);
      dir = Files.createTempDirectory(b.workDir, "pmhash-crash-");
      try {
        List<Captured> captured = record(workload);
        MutationSession mutation = MutationSession.current();
        boolean failFast = mutation != null && mutation.failFast();
        for (Captured c : captured) {
          for (int i = 0; i < c.images().size() && !(failFast && report.failureCount > 0); i++) {
            check(c, i);
          }
          Files.deleteIfExists(c.base());
        }
        return report;
      } catch (HarnessIoException e) {
        throw e.getCause();
      } finally {
        deleteTree(dir);
      }
    }

    /** Runs the workload and captures the images of every crash point. */
    private List<Captured> record(Workload workload) throws IOException {
      CrashSimulator sim = new CrashSimulator();
      Tracker ops = new Tracker();
      List<Captured> captured = new ArrayList<>();
      sim.onCrashPoint((s, drain, before) -> {
        if (b.onlyDrain >= 0 && drain != b.onlyDrain) {
          return;
        }
        report.crashPoints++;
        CrashPoint template = new CrashPoint(drain, before, ops.completed, ops.last, ops.inFlight,
            ImageKind.DRAINED, 0, -1, s.size(), null);
        captured.add(capture(s, template, kinds, new long[] {drain, before ? 0 : 1}));
      });
      Path file = dir.resolve("workload.pool");
      PoolOptions o = b.options.withDurability(Durability.PROCESS).withPersistence(() -> sim);
      try (Pool pool = Pool.create(file, o)) {
        if (b.setup != null) {
          b.setup.setUp(pool);
        }
        sim.arm();
        workload.run(pool, ops);
        if (pool.isOpen()) { // a workload that closed the pool ended with the marker's drain
          sim.offerCrashPoint();
        }
        sim.disarm();
      } catch (HarnessIoException e) {
        throw e;
      } catch (Exception e) {
        throw new AssertionError("the crash test's setup or workload itself failed (before any"
            + " image was checked): " + e, e);
      } finally {
        sim.disarm();
      }
      Files.deleteIfExists(file);
      return captured;
    }

    private Captured capture(CrashSimulator s, CrashPoint template, Set<ImageKind> kinds, long[] seedKey) {
      long[] seeds = new long[kinds.contains(ImageKind.RANDOM) ? b.randomCount() : 0];
      for (int k = 0; k < seeds.length; k++) {
        seeds[k] = imageSeed(b.seed, seedKey, k);
      }
      List<CrashImage> images = s.images(kinds, b.eachLineCap, seeds);
      int dirty = kinds.contains(ImageKind.EACH_LINE) ? s.dirtyLineCount() : 0;
      if (dirty > b.eachLineCap) {
        report.cappedPoints++;
      }
      long asked = (kinds.contains(ImageKind.DRAINED) ? 1 : 0)
          + (kinds.contains(ImageKind.ALL_PENDING) ? 1 : 0)
          + Math.min(dirty, b.eachLineCap) + seeds.length;
      report.duplicatesSkipped += asked - images.size();
      Path base = dir.resolve("point-" + (files++) + ".base");
      try {
        s.writeImage(s.drainedImage(), base);
      } catch (IOException e) {
        throw new HarnessIoException(e);
      }
      return new Captured(template, base, images, seedKey);
    }

    /** Verifies image {@code index} of a crash point; at the top level, crashes its recovery too if asked. */
    private void check(Captured c, int index) throws IOException {
      CrashImage image = c.images().get(index);
      CrashPoint point = c.template().withImage(image);
      Path file = dir.resolve("image-" + (files++) + ".pool");
      ImageFiles.writeSparse(c.base(), image, file);
      boolean nest = b.crashDuringRecovery && point.parent() == null;
      List<Captured> nested = new ArrayList<>();
      boolean passed = false;
      try {
        if (nest) {
          CrashSimulator rsim = new CrashSimulator();
          rsim.recoveryRun = true;
          long[] key = Arrays.copyOf(c.seedKey(), c.seedKey().length + 3);
          key[key.length - 3] = index;
          rsim.onCrashPoint((s, drain, before) -> {
            report.recoveryCrashPoints++;
            key[key.length - 2] = drain;
            key[key.length - 1] = before ? 0 : 1;
            CrashPoint t = new CrashPoint(drain, before, point.opsCompleted(), point.lastCompletedOp(),
                point.inFlightOp(), ImageKind.DRAINED, 0, -1, s.size(), point);
            nested.add(capture(s, t, recoveryKinds, key.clone()));
          });
          rsim.arm();
          verifyOnce(file, () -> rsim, point, rsim);
        } else {
          // Under a mutation session a disarmed simulator (no crash points) names recovery's sites.
          Supplier<Persistence> p = MutationSession.current() != null
              ? CrashSimulator::new
              : () -> new OrderingPersistence("crash image check: ordering only");
          verifyOnce(file, p, point, null);
        }
        passed = true;
      } catch (HarnessIoException e) {
        throw e;
      } catch (VirtualMachineError e) {
        throw e;
      } catch (Throwable t) {
        report.fail(point, t);
      } finally {
        report.imagesChecked++;
        Files.deleteIfExists(file);
      }
      for (Captured n : nested) {
        if (passed) { // a failed recovery's crash points would only repeat its failure
          for (int i = 0; i < n.images().size(); i++) {
            check(n, i);
          }
        }
        Files.deleteIfExists(n.base());
      }
    }

    private void verifyOnce(Path file, Supplier<Persistence> persistence, CrashPoint point, CrashSimulator rsim)
        throws Exception {
      Pool pool = Pool.open(file, b.options.withDurability(Durability.PROCESS).withPersistence(persistence));
      try {
        verifier.verify(pool, point);
        if (rsim != null && rsim.armed()) {
          rsim.offerCrashPoint(); // recovery completed: a crash now must find its results durable
        }
      } finally {
        if (rsim != null) {
          rsim.disarm();
        }
        pool.close();
      }
    }

    private static long imageSeed(long seed, long[] key, int k) {
      long h = CrashSimulator.mix64(seed);
      for (long x : key) {
        h = CrashSimulator.mix64(h + 0x9E3779B97F4A7C15L + x);
      }
      return CrashSimulator.mix64(h + 0x9E3779B97F4A7C15L + k);
    }

    private static void deleteTree(Path root) throws IOException {
      if (root == null || !Files.exists(root)) {
        return;
      }
      try (Stream<Path> paths = Files.walk(root)) {
        for (Path p : paths.sorted(Collections.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  /** Operation boundaries of the workload. */
  private static final class Tracker implements Ops {
    int completed;
    OptionalLong last = OptionalLong.empty();
    OptionalLong inFlight = OptionalLong.empty();

    @Override
    public void begin(long opId) {
      if (inFlight.isPresent()) {
        throw new IllegalStateException("ops.begin(" + opId + ") while op " + inFlight.getAsLong()
            + " is in flight: end it first (operations do not nest)");
      }
      inFlight = OptionalLong.of(opId);
    }

    @Override
    public void end(long opId) {
      if (inFlight.isEmpty() || inFlight.getAsLong() != opId) {
        throw new IllegalStateException("ops.end(" + opId + ") but "
            + (inFlight.isEmpty() ? "no op" : "op " + inFlight.getAsLong()) + " is in flight");
      }
      inFlight = OptionalLong.empty();
      last = OptionalLong.of(opId);
      completed++;
    }
  }
}
