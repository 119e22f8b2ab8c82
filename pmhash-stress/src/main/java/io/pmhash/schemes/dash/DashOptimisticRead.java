package io.pmhash.schemes.dash;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * Dash's optimistic read (Algorithm 3, §4.4: version snapshot of the target and probing
 * bucket, lock-free search, validation) against each kind of writer of the same bucket, on the
 * real table code ({@link DashEhTable#get} and its writers) of a one-segment table per trial
 * ({@link DashRaceTable}).
 *
 * <p>Every key written before the race maps to 1, the key the writer adds or removes to 2; -1
 * is "absent". The reader looks again and again until the writer is done (at most {@link
 * Race#MAX_LOOKS} times, then once more), so that its looks cover the whole write; against the
 * long slot-reuse writer it first waits (boundedly) for the writer to start. Each look
 * reads a bystander key the writer does not change (it moves, shifts or neighbours it: it must
 * always be found with value 1) and the key the writer changes (its value before or after,
 * nothing else). Outcomes {@code bystanderBad, changedBad, overlapped}: the first two are 1 if
 * any look broke the rule; {@code overlapped} is 1 if the looks saw the changed key both before
 * and after the write, evidence that the race really overlapped.
 *
 * <p>The negative controls read with Dash's search minus the snapshot and validation ({@link
 * DashRaceTable#getUnvalidated}): {@link BackwardDisplacementUnvalidated} misses a record that
 * moves back to the bucket it searched first, and {@link SlotReuseUnvalidated} reads a key with
 * the value of the key that reused its slot (a rare, two-store window). Insert, delete, forward
 * displacement and stash insert have no broken variant of their own: Dash publishes each by one
 * bitmap store and a forward move copies before it clears, in the order a reader searches, so
 * even an unvalidated reader sees nothing wrong there.
 */
public final class DashOptimisticRead {
  private DashOptimisticRead() {}

  static final long ABSENT = -1;

  /** A trial: a table, a writer that flags when it is done, a reader that looks until then. */
  abstract static class Race {
    static final int MAX_LOOKS = 20_000;

    static final int MAX_WAIT = 1_000_000;

    final DashRaceTable t = new DashRaceTable();
    volatile boolean started;
    volatile boolean done;
    long bystander;
    long changed;
    long before;
    long after;

    /** The writer's action. */
    abstract void write();

    /** One look: the bystander's and the changed key's values. */
    long bystanderValue() {
      return t.table.get(bystander, ABSENT);
    }

    long changedValue() {
      return t.table.get(changed, ABSENT);
    }

    final void writer() {
      started = true;
      write();
      done = true;
    }

    /** Whether the reader waits for the writer to start: for a long write (many operations). */
    boolean waitForWriter() {
      return false;
    }

    final void reader(III_Result r) {
      for (int w = 0; waitForWriter() && !started && w < MAX_WAIT; w++) {
        Thread.onSpinWait(); // bounded: the actors of one trial need not run at once
      }
      int looks = 0;
      boolean last = false;
      int sawBefore = 0;
      int sawAfter = 0;
      while (true) {
        last = done || ++looks >= MAX_LOOKS;
        if (bystanderValue() != 1) {
          r.r1 = 1;
        }
        long v = changedValue();
        if (v == before) {
          sawBefore = 1;
        } else if (v == after) {
          sawAfter = 1;
        } else {
          r.r2 = 1;
        }
        if (last) {
          break;
        }
      }
      r.r3 = sawBefore & sawAfter;
    }
  }

  /** Insert into the bucket the bystander is in (balanced insert, Dash §4.3). */
  @JCStressTest
  @Description("Dash optimistic read vs an insert into the same bucket: the bystander is always found, the new key is absent or complete.")
  @Outcome(id = "0, 0, 1", expect = ACCEPTABLE, desc = "Every look consistent; the looks overlapped the insert.")
  @Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "Every look consistent; no overlap this time.")
  @Outcome(expect = FORBIDDEN, desc = "The bystander lost or the new key read with a wrong value: the optimistic read is broken.")
  @State
  public static class Insert extends Race {
    /** One trial: a table holding the bystander. */
    public Insert() {
      bystander = DashRaceTable.keyFor(DashRaceTable.Y, 1);
      changed = DashRaceTable.keyFor(DashRaceTable.Y, 2);
      before = ABSENT;
      after = 2;
      t.table.put(bystander, 1);
    }

    @Override
    void write() {
      t.table.put(changed, 2);
    }

    /** Inserts the new key. */
    @Actor
    public void writerActor() {
      writer();
    }

    /**
     * Looks until the writer is done.
     *
     * @param r bystander bad, changed key bad, overlapped
     */
    @Actor
    public void readerActor(III_Result r) {
      reader(r);
    }

    /** Closes the trial's pool. */
    @Arbiter
    public void close() {
      t.close();
    }
  }

  /** Delete from the bucket the bystander is in (Dash §4.6 delete: clear the allocation bit). */
  @JCStressTest
  @Description("Dash optimistic read vs a delete in the same bucket: the bystander is always found, the deleted key is present or absent.")
  @Outcome(id = "0, 0, 1", expect = ACCEPTABLE, desc = "Every look consistent; the looks overlapped the delete.")
  @Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "Every look consistent; no overlap this time.")
  @Outcome(expect = FORBIDDEN, desc = "The bystander lost or a wrong value read: the optimistic read is broken.")
  @State
  public static class Delete extends Race {
    /** One trial: a table holding both keys. */
    public Delete() {
      bystander = DashRaceTable.keyFor(DashRaceTable.Y, 1);
      changed = DashRaceTable.keyFor(DashRaceTable.Y, 2);
      before = 2;
      after = ABSENT;
      t.table.put(bystander, 1);
      t.table.put(changed, 2);
    }

    @Override
    void write() {
      t.table.remove(changed);
    }

    /** Deletes one key. */
    @Actor
    public void writerActor() {
      writer();
    }

    /**
     * Looks until the writer is done.
     *
     * @param r bystander bad, changed key bad, overlapped
     */
    @Actor
    public void readerActor(III_Result r) {
      reader(r);
    }

    /** Closes the trial's pool. */
    @Arbiter
    public void close() {
      t.close();
    }
  }

  /**
   * Displacement (Dash §4.3, §4.6): buckets Y and Y+1 are full, so an insert targeting Y moves a
   * record whose target is Y+1 to Y+2 and takes its slot. The moved record is the bystander:
   * between the copy and the clearing it is in two buckets, and a reader must find it at every
   * moment.
   */
  @JCStressTest
  @Description("Dash optimistic read vs a displacement: the record being moved to the next bucket is always found.")
  @Outcome(id = "0, 0, 1", expect = ACCEPTABLE, desc = "Every look consistent; the looks overlapped the displacing insert.")
  @Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "Every look consistent; no overlap this time.")
  @Outcome(expect = FORBIDDEN, desc = "The moved record missed (or a wrong value read): displacement is not atomic to readers.")
  @State
  public static class Displacement extends Race {
    /** One trial: buckets Y and Y+1 full, two of Y+1's records targeting Y+1 (movable). */
    public Displacement() {
      int y = DashRaceTable.Y;
      int n = 1;
      for (int i = 0; i < 4; i++) { // alternate between Y+1 and Y+2 (balanced insert)
        t.table.put(DashRaceTable.keyFor(y + 1, i + 1), 1);
      }
      while (t.count(y) < DashLayout.SLOTS || t.count(y + 1) < DashLayout.SLOTS) {
        t.table.put(DashRaceTable.keyFor(y, n++), 1);
      }
      changed = DashRaceTable.keyFor(y, n);
      before = ABSENT;
      after = 2;
      int bm = t.bitmapOf(y + 1);
      int movable = DashBucket.allocated(bm) & ~DashBucket.members(bm);
      if (movable == 0 || t.count(y + 2) >= DashLayout.SLOTS) {
        throw new IllegalStateException("setup: the next insert at bucket " + y + " would not displace");
      }
      bystander = t.keyAt(y + 1, Integer.numberOfTrailingZeros(movable));
    }

    @Override
    void write() {
      t.table.put(changed, 2);
    }

    /** Inserts a key targeting Y: displaces the bystander from Y+1 to Y+2. */
    @Actor
    public void writerActor() {
      writer();
    }

    /**
     * Looks until the writer is done.
     *
     * @param r bystander bad, changed key bad, overlapped
     */
    @Actor
    public void readerActor(III_Result r) {
      reader(r);
    }

    /** Checks the trial did displace, closes its pool. */
    @Arbiter
    public void close() {
      boolean moved = t.count(DashRaceTable.Y + 2) == 3;
      t.close();
      if (!moved) {
        throw new IllegalStateException("the insert did not displace into bucket Y+2");
      }
    }
  }

  /**
   * Backward displacement (Dash §4.3, Algorithm 1 lines 25–26): buckets Y and Y+1 are full, Y+1
   * holds only records whose target is Y (nothing to move forward), and Y holds one record whose
   * target is Y-1. An insert targeting Y moves that record back to Y-1 and takes its slot. A
   * reader of the moved record searches Y-1 first, then Y: the move (copy into Y-1, then clear in
   * Y) can fall between the two searches, and only the validation (the mover holds the locks of
   * both) makes the reader retry instead of answering "absent".
   */
  @JCStressTest
  @Description("Dash optimistic read vs a backward displacement: the record moved to the previous bucket is always found.")
  @Outcome(id = "0, 0, 1", expect = ACCEPTABLE, desc = "Every look consistent; the looks overlapped the displacing insert.")
  @Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "Every look consistent; no overlap this time.")
  @Outcome(expect = FORBIDDEN, desc = "The moved record missed (or a wrong value read): displacement is not atomic to readers.")
  @State
  public static class BackwardDisplacement extends BackwardDisplacementRace {
    /** One trial. */
    public BackwardDisplacement() {}

    /** Inserts a key targeting Y: displaces the bystander from Y back to Y-1. */
    @Actor
    public void writerActor() {
      writer();
    }

    /**
     * Looks until the writer is done.
     *
     * @param r bystander bad, changed key bad, overlapped
     */
    @Actor
    public void readerActor(III_Result r) {
      reader(r);
    }

    /** Checks the trial did displace, closes its pool. */
    @Arbiter
    public void close() {
      finish();
    }
  }

  /**
   * Negative control of {@link BackwardDisplacement}: the same race, read by {@link
   * DashRaceTable#getUnvalidated}. It must show the moved record missed (searched in Y-1 before
   * the copy, in Y after the clearing).
   */
  @JCStressTest
  @Description("Negative control: the bucket search without validation misses a record moved back to the previous bucket.")
  @Outcome(id = {"0, 0, 1", "0, 0, 0"}, expect = ACCEPTABLE, desc = "No miss this time.")
  @Outcome(id = {"1, 0, 1", "1, 0, 0"}, expect = ACCEPTABLE_INTERESTING,
      desc = "The moving record missed: the race validation prevents. Expected to be seen.")
  @Outcome(expect = FORBIDDEN, desc = "Anything else (a wrong value).")
  @State
  public static class BackwardDisplacementUnvalidated extends BackwardDisplacementRace {
    /** One trial. */
    public BackwardDisplacementUnvalidated() {}

    @Override
    long bystanderValue() {
      return t.getUnvalidated(bystander, ABSENT);
    }

    @Override
    long changedValue() {
      return t.getUnvalidated(changed, ABSENT);
    }

    /** Inserts a key targeting Y: displaces the bystander from Y back to Y-1. */
    @Actor
    public void writerActor() {
      writer();
    }

    /**
     * Looks without validation until the writer is done.
     *
     * @param r bystander missed, changed key bad, overlapped
     */
    @Actor
    public void readerActor(III_Result r) {
      reader(r);
    }

    /** Checks the trial did displace, closes its pool. */
    @Arbiter
    public void close() {
      finish();
    }
  }

  /** The backward-displacement trial: its setup and its check that the move happened. */
  abstract static class BackwardDisplacementRace extends Race {
    BackwardDisplacementRace() {
      int y = DashRaceTable.Y;
      t.table.put(DashRaceTable.keyFor(y - 1, 1), 1); // into Y-1 (tie: the target)
      bystander = DashRaceTable.keyFor(y - 1, 2);
      t.table.put(bystander, 1); // into Y (Y-1 is fuller): Y's one record targeting Y-1
      int n = 1;
      while (t.count(y) < DashLayout.SLOTS || t.count(y + 1) < DashLayout.SLOTS) {
        t.table.put(DashRaceTable.keyFor(y, n++), 1);
      }
      changed = DashRaceTable.keyFor(y, n);
      before = ABSENT;
      after = 2;
      int bm1 = t.bitmapOf(y);
      int bm2 = t.bitmapOf(y + 1);
      if ((DashBucket.allocated(bm2) & ~DashBucket.members(bm2)) != 0
          || Integer.bitCount(DashBucket.allocated(bm1) & DashBucket.members(bm1)) != 1
          || t.count(y - 1) != 1) {
        throw new IllegalStateException("setup: the next insert at bucket " + y + " would not displace backward");
      }
    }

    @Override
    void write() {
      t.table.put(changed, 2);
    }

    final void finish() {
      boolean moved = t.count(DashRaceTable.Y - 1) == 2;
      t.close();
      if (!moved) {
        throw new IllegalStateException("the insert did not displace into bucket Y-1");
      }
    }
  }

  /**
   * Stash insert (Dash §4.3, Algorithm 1 lines 27–29): buckets Y-1..Y+2 are full, so an insert
   * targeting Y can neither balance nor displace and goes to a stash bucket, with an overflow
   * fingerprint in Y. The reader must see the new record whole or not at all, and the
   * bystander in Y throughout.
   */
  @JCStressTest
  @Description("Dash optimistic read vs a stash insert: the stashed key is absent or complete, the bystander always found.")
  @Outcome(id = "0, 0, 1", expect = ACCEPTABLE, desc = "Every look consistent; the looks overlapped the stash insert.")
  @Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "Every look consistent; no overlap this time.")
  @Outcome(expect = FORBIDDEN, desc = "The bystander lost or the stashed key read with a wrong value: the optimistic read is broken.")
  @State
  public static class StashInsert extends Race {
    /** One trial: buckets Y-1, Y, Y+1, Y+2 full, the stash empty. */
    public StashInsert() {
      int y = DashRaceTable.Y;
      long k = 0;
      while (t.count(y - 1) < DashLayout.SLOTS || t.count(y) < DashLayout.SLOTS
          || t.count(y + 1) < DashLayout.SLOTS || t.count(y + 2) < DashLayout.SLOTS) {
        k++;
        int target = DashRaceTable.target(k);
        int d = target - y;
        if (d >= -1 && d <= 2 && (t.count(target) < DashLayout.SLOTS || t.count(target + 1) < DashLayout.SLOTS)) {
          t.table.put(k, 1); // a balanced insert: never displaces, never stashes
        }
      }
      for (int s = 0; bystander == 0 && s < DashLayout.SLOTS; s++) {
        long key = t.keyAt(y, s);
        bystander = DashRaceTable.target(key) == y ? key : 0;
      }
      long a = k;
      do {
        a++;
      } while (DashRaceTable.target(a) != y);
      changed = a;
      before = ABSENT;
      after = 2;
      if (bystander == 0 || stashRecords() != 0) {
        throw new IllegalStateException("setup: no bystander targeting bucket " + y + " or the stash is not empty");
      }
    }

    private long stashRecords() {
      return t.table.stats().details().get("stashRecords");
    }

    @Override
    void write() {
      t.table.put(changed, 2);
    }

    /** Inserts a key targeting Y: it goes to the stash. */
    @Actor
    public void writerActor() {
      writer();
    }

    /**
     * Looks until the writer is done.
     *
     * @param r bystander bad, changed key bad, overlapped
     */
    @Actor
    public void readerActor(III_Result r) {
      reader(r);
    }

    /** Checks the trial did stash, closes its pool. */
    @Arbiter
    public void close() {
      long stashed = stashRecords();
      t.close();
      if (stashed != 1) {
        throw new IllegalStateException("the insert did not go to the stash");
      }
    }
  }

  /**
   * Slot reuse: the writer deletes key A and inserts key B, which takes A's slot (slot 0 of Y,
   * the emptier bucket's first free slot), and back, 100 times. A reader that matched A's key in
   * the slot and then read the value after B overwrote it would return B's value (2) for A; the
   * version validation makes it retry instead. Here A is the "changed" key (1 or absent, never
   * 2) and B the "bystander" slot of the outcome (2 or absent, never 1).
   */
  @JCStressTest
  @Description("Dash optimistic read vs delete-and-reuse of the same slot: a key is never read with another key's value.")
  @Outcome(id = {"0, 0, 1", "0, 0, 0"}, expect = ACCEPTABLE, desc = "Every look saw each key absent or with its own value (overlap seen or not).")
  @Outcome(expect = FORBIDDEN, desc = "A key read with the other key's value (torn slot): validation is broken.")
  @State
  public static class SlotReuse extends SlotReuseRace {
    /** One trial. */
    public SlotReuse() {}

    /** Deletes and reinserts into the same slot, alternating keys. */
    @Actor
    public void writerActor() {
      writer();
    }

    /**
     * Looks through the real, validating read until the writer is done.
     *
     * @param r B bad, A bad, overlapped
     */
    @Actor
    public void readerActor(III_Result r) {
      reader(r);
    }

    /** Closes the trial's pool. */
    @Arbiter
    public void close() {
      t.close();
    }
  }

  /**
   * Negative control of {@link SlotReuse}: the same race, read by {@link
   * DashRaceTable#getUnvalidated} (Dash's search without snapshot and validation). It must show a
   * key read with the other key's value: if it never does on a run, that run could not have
   * caught a broken validation either.
   */
  @JCStressTest
  @Description("Negative control: the bucket search without version validation reads a key with another key's value.")
  @Outcome(id = {"0, 0, 1", "0, 0, 0"}, expect = ACCEPTABLE, desc = "No torn read this time.")
  @Outcome(id = {"1, 0, 1", "0, 1, 1", "1, 1, 1", "1, 0, 0", "0, 1, 0", "1, 1, 0"}, expect = ACCEPTABLE_INTERESTING,
      desc = "Torn slot: a key read with the other key's value, the race validation prevents. Expected to be seen.")
  @State
  public static class SlotReuseUnvalidated extends SlotReuseRace {
    /** One trial. */
    public SlotReuseUnvalidated() {}

    @Override
    long bystanderValue() {
      long v = t.getUnvalidated(bystander, ABSENT);
      return v == ABSENT || v == 2 ? 1 : v; // B absent or 2 is fine; report 1 for "fine"
    }

    @Override
    long changedValue() {
      return t.getUnvalidated(changed, ABSENT);
    }

    /** Deletes and reinserts into the same slot, alternating keys. */
    @Actor
    public void writerActor() {
      writer();
    }

    /**
     * Looks without validation until the writer is done.
     *
     * @param r B bad, A bad, overlapped
     */
    @Actor
    public void readerActor(III_Result r) {
      reader(r);
    }

    /** Closes the trial's pool. */
    @Arbiter
    public void close() {
      t.close();
    }
  }

  /**
   * The slot-reuse race: A (value 1, the "changed" key) and B (value 2, read as the
   * "bystander", which is fine when absent or 2) both target Y.
   */
  abstract static class SlotReuseRace extends Race {
    static final int ROUNDS = 100;

    SlotReuseRace() {
      changed = DashRaceTable.keyFor(DashRaceTable.Y, 1);
      bystander = DashRaceTable.keyFor(DashRaceTable.Y, 2);
      before = 1;
      after = ABSENT;
      t.table.put(changed, 1);
    }

    @Override
    long bystanderValue() {
      long v = t.table.get(bystander, ABSENT);
      return v == ABSENT || v == 2 ? 1 : v;
    }

    @Override
    boolean waitForWriter() {
      return true;
    }

    /** A out, B in (into A's slot), B out, A in. */
    @Override
    void write() {
      for (int i = 0; i < ROUNDS; i++) {
        t.table.remove(changed);
        t.table.put(bystander, 2);
        t.table.remove(bystander);
        t.table.put(changed, 1);
      }
    }
  }
}
