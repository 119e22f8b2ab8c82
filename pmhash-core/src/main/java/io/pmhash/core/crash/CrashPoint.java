package io.pmhash.core.crash;

import java.util.OptionalLong;

/**
 * Where a crash image was taken and which image it is: what a {@link CrashHarness.Verifier}
 * needs to pick its oracle, and what a failure reports so it can be replayed.
 *
 * @param drainIndex the index (from 0) of the drain the crash came just before, when {@code
 *     beforeDrain}; otherwise the number of drains before the crash (the end of the workload or
 *     of the recovery). Counted by the workload's simulator, or by the recovery's for a point
 *     {@linkplain #duringRecovery() during recovery}.
 * @param beforeDrain true for a crash just before a drain completes, false for the point at the
 *     end of the workload (or the end of recovery), after its last drain
 * @param opsCompleted how many operations the workload had {@linkplain CrashHarness.Ops#end
 *     ended}
 * @param lastCompletedOp the id of the last operation ended, if any
 * @param inFlightOp the id of the operation begun and not yet ended, if any: it must be all or
 *     nothing after recovery
 * @param kind which image of the crash point this is
 * @param seed the seed of a {@link ImageKind#RANDOM} image (0 for the other kinds)
 * @param line the pool offset of the line an {@link ImageKind#EACH_LINE} image writes back, else
 *     -1
 * @param imageSize the size of the image file: the pool's size at the crash
 * @param parent null for a crash of the workload; for a crash during recovery, the image whose
 *     recovery crashed (its operation counts are the ones repeated here)
 */
public record CrashPoint(
    int drainIndex,
    boolean beforeDrain,
    int opsCompleted,
    OptionalLong lastCompletedOp,
    OptionalLong inFlightOp,
    ImageKind kind,
    long seed,
    long line,
    long imageSize,
    CrashPoint parent) {

  /** @return true when this image is a crash of a recovery (of the {@link #parent()} image) */
  public boolean duringRecovery() {
    return parent != null;
  }

  /**
   * @return a one-line description that, with the harness's seed, replays the image, e.g.
   *     {@code "drain 7 (2 ops completed, op 2 in flight), image EACH_LINE line 0x40040"}
   */
  public String describe() {
    StringBuilder b = new StringBuilder();
    if (parent != null) {
      b.append(parent.describe()).append(", then a crash during its recovery at ");
      b.append(beforeDrain ? "recovery drain " + drainIndex : "the end of recovery (after " + drainIndex + " drains)");
    } else {
      b.append(beforeDrain ? "drain " + drainIndex : "the end of the workload (after " + drainIndex + " drains)");
      b.append(" (").append(opsCompleted).append(opsCompleted == 1 ? " op" : " ops").append(" completed");
      if (inFlightOp.isPresent()) {
        b.append(", op ").append(inFlightOp.getAsLong()).append(" in flight");
      }
      b.append(')');
    }
    b.append(", image ").append(kind);
    if (kind == ImageKind.RANDOM) {
      b.append(" seed 0x").append(Long.toHexString(seed));
    } else if (kind == ImageKind.EACH_LINE) {
      b.append(" line 0x").append(Long.toHexString(line));
    }
    return b.toString();
  }

  CrashPoint withImage(CrashImage image) {
    return new CrashPoint(drainIndex, beforeDrain, opsCompleted, lastCompletedOp, inFlightOp,
        image.kind(), image.seed(), image.line(), image.size(), parent);
  }

  @Override
  public String toString() {
    return describe();
  }
}
