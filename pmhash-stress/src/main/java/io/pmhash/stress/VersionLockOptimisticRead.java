package io.pmhash.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.pmhash.core.concurrent.VersionLock;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JJI_Result;
import org.openjdk.jcstress.infra.results.JJ_Result;

/**
 * The seqlock protocol of {@link VersionLock} (Dash §4.4): a writer sets a two-field record
 * {a, b} from {0, 0} to {1, 1} under the lock (a first); an optimistic reader snapshots the
 * version, reads b and then a (the order that makes a torn read likely: one store of the writer
 * between the two loads suffices), and validates. A read that validates must be consistent: {0, 0} or {1, 1}, never one
 * field old and the other new. The record layout is that of {@link VersionLockMutualExclusion}.
 *
 * <p>Outcomes are {@code a, b, v} with {@code v} = 1 if the read validated, 0 if it did not (the
 * reader would retry; what it read is then anything), -1 if the snapshot was locked (it would
 * wait). The negative control {@link Unvalidated} reads without snapshot and validation.
 */
@JCStressTest
@Description("VersionLock optimistic read: a read that validates is never torn.")
@Outcome(id = {"0, 0, 1", "1, 1, 1"}, expect = ACCEPTABLE, desc = "Validated a consistent record (before or after the writer).")
@Outcome(id = {"0, 0, 0", "0, 1, 0", "1, 0, 0", "1, 1, 0"}, expect = ACCEPTABLE, desc = "Validation failed: a writer intervened; the reader retries.")
@Outcome(id = {"0, 0, -1"}, expect = ACCEPTABLE, desc = "The snapshot saw the lock held: the reader waits and retries.")
@Outcome(id = {"0, 1, 1", "1, 0, 1"}, expect = FORBIDDEN, desc = "Torn record validated: the seqlock is broken.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class VersionLockOptimisticRead {
  private final MemorySegment record = MemorySegment.ofArray(new long[3]);

  /** One trial: a = b = 0, lock free at version 0. */
  public VersionLockOptimisticRead() {}

  /** Sets a, b to 1 under the lock. */
  @Actor
  public void writer() {
    VersionLockMutualExclusion.increment(record);
  }

  /**
   * One optimistic read attempt.
   *
   * @param r a, b, validated (1), not (0) or locked (-1)
   */
  @Actor
  public void reader(JJI_Result r) {
    int snapshot = VersionLock.snapshotAcquire(record, VersionLockMutualExclusion.LOCK);
    if (VersionLock.isLocked(snapshot)) {
      r.r3 = -1;
      return; // r1, r2 stay 0: the reader reads nothing while a writer is inside
    }
    r.r2 = record.get(ValueLayout.JAVA_LONG, VersionLockMutualExclusion.B);
    r.r1 = record.get(ValueLayout.JAVA_LONG, VersionLockMutualExclusion.A);
    r.r3 = VersionLock.validate(record, VersionLockMutualExclusion.LOCK, snapshot) ? 1 : 0;
  }

  /**
   * Negative control: the same reads with no snapshot and no validation. Torn reads {1, 0} must
   * show up; if they never do, this run could not have caught a broken validation.
   */
  @JCStressTest
  @Description("Negative control: reading the record without the version protocol sees it torn.")
  @Outcome(id = {"0, 0", "1, 1"}, expect = ACCEPTABLE, desc = "Consistent by luck.")
  @Outcome(id = "1, 0", expect = ACCEPTABLE_INTERESTING, desc = "Torn: b read before, a after the writer's store. Expected to be seen.")
  @Outcome(id = "0, 1", expect = ACCEPTABLE_INTERESTING, desc = "Torn the other way: the loads or stores reordered (not on x86).")
  @State
  public static class Unvalidated {
    private final MemorySegment record = MemorySegment.ofArray(new long[3]);

    /** One trial. */
    public Unvalidated() {}

    /** Sets a, b to 1 under the lock. */
    @Actor
    public void writer() {
      VersionLockMutualExclusion.increment(record);
    }

    /**
     * Reads b, then a, plainly.
     *
     * @param r a, b
     */
    @Actor
    public void reader(JJ_Result r) {
      r.r2 = record.get(ValueLayout.JAVA_LONG, VersionLockMutualExclusion.B);
      r.r1 = record.get(ValueLayout.JAVA_LONG, VersionLockMutualExclusion.A);
    }
  }
}
