package io.pmhash.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.pmhash.core.concurrent.VersionLock;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JJI_Result;
import org.openjdk.jcstress.infra.results.JJ_Result;

/**
 * Two writers each increment a two-field record {a, b} under a {@link VersionLock}
 * (Dash §4.4) held in a memory segment; the arbiter reads a, b and the lock's version
 * after both finished. Under mutual exclusion the only outcome is both increments on
 * both fields and two unlocks: {@code 2, 2, 2}.
 *
 * <pre>
 *   byte 0       4        8               16              24
 *        +-------+--------+---------------+---------------+
 *        | lock  |  pad   | a: u64        | b: u64        |
 *        +-------+--------+---------------+---------------+
 * </pre>
 *
 * <p>The segment is a heap segment over a {@code long[]} (8-byte aligned, so the lock
 * word can be CASed): jcstress allocates a state per trial, far too many for native
 * memory, and the lock's code path does not depend on where the segment lives.
 */
@JCStressTest
@Description("VersionLock: two writers incrementing a two-field record never interleave.")
@Outcome(
    id = "2, 2, 2",
    expect = ACCEPTABLE,
    desc = "Both critical sections ran, one after the other.")
@Outcome(
    id = "1, 1, 2",
    expect = FORBIDDEN,
    desc = "Lost update: both writers were inside at once (the lock failed).")
@Outcome(
    expect = FORBIDDEN,
    desc = "Torn record, lost half-update or a wrong version: the lock or its unlock is broken.")
@State
public class VersionLockMutualExclusion {

  static final long LOCK = 0;
  static final long A = 8;
  static final long B = 16;

  private final MemorySegment record = MemorySegment.ofArray(new long[3]);

  /** Creates one trial's state; jcstress calls this. */
  public VersionLockMutualExclusion() {}

  /** The first writer. */
  @Actor
  public void writer1() {
    increment(record);
  }

  /** The second writer. */
  @Actor
  public void writer2() {
    increment(record);
  }

  /**
   * Reads the final state.
   *
   * @param r a, b and the lock's version
   */
  @Arbiter
  public void arbiter(JJI_Result r) {
    r.r1 = record.get(ValueLayout.JAVA_LONG, A);
    r.r2 = record.get(ValueLayout.JAVA_LONG, B);
    int word = VersionLock.snapshotAcquire(record, LOCK);
    r.r3 = VersionLock.isLocked(word) ? -1 : VersionLock.versionOf(word);
  }

  static void increment(MemorySegment s) {
    VersionLock.lock(s, LOCK);
    try {
      s.set(ValueLayout.JAVA_LONG, A, s.get(ValueLayout.JAVA_LONG, A) + 1);
      s.set(ValueLayout.JAVA_LONG, B, s.get(ValueLayout.JAVA_LONG, B) + 1);
    } finally {
      VersionLock.unlock(s, LOCK);
    }
  }

  /**
   * The negative control: the same increments without the lock. Lost updates must show
   * up here (as {@code ACCEPTABLE_INTERESTING}); if they never do, this machine or mode
   * cannot catch a broken lock and the real test proves little.
   */
  @JCStressTest
  @Description("Negative control: the same increments without the lock lose updates.")
  @Outcome(id = "2, 2", expect = ACCEPTABLE, desc = "The writers happened not to overlap.")
  @Outcome(
      id = "1, 1",
      expect = ACCEPTABLE_INTERESTING,
      desc = "Lost update on both fields: the race a lock prevents.")
  @Outcome(
      id = {"1, 2", "2, 1"},
      expect = ACCEPTABLE_INTERESTING,
      desc = "Torn record: one field lost an update, the other did not.")
  @State
  public static class NoLock {

    private final MemorySegment record = MemorySegment.ofArray(new long[3]);

    /** Creates one trial's state; jcstress calls this. */
    public NoLock() {}

    /** The first writer. */
    @Actor
    public void writer1() {
      incrementUnlocked(record);
    }

    /** The second writer. */
    @Actor
    public void writer2() {
      incrementUnlocked(record);
    }

    /**
     * Reads the final state.
     *
     * @param r a and b
     */
    @Arbiter
    public void arbiter(JJ_Result r) {
      r.r1 = record.get(ValueLayout.JAVA_LONG, A);
      r.r2 = record.get(ValueLayout.JAVA_LONG, B);
    }

    static void incrementUnlocked(MemorySegment s) {
      s.set(ValueLayout.JAVA_LONG, A, s.get(ValueLayout.JAVA_LONG, A) + 1);
      s.set(ValueLayout.JAVA_LONG, B, s.get(ValueLayout.JAVA_LONG, B) + 1);
    }
  }
}
