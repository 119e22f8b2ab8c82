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
import org.openjdk.jcstress.infra.results.JJ_Result;

/**
 * Dash's optimistic read (Algorithm 3, §4.4: version snapshot of the target and probing
 * bucket, lock-free search, validation) against each kind of writer of the same bucket, on the
 * real table code ({@link DashEhTable#get} and its writers) of a one-segment table per trial
 * ({@link DashRaceTable}). Values: every key written before the race maps to 1, the key the
 * writer adds to 2; -1 is "absent". In every test the reader reads a bystander key that the
 * writer does not touch (it must always be found with its value: the writer moves, shifts or
 * neighbours it) and the key the writer changes (its value before or after, nothing else).
 *
 * <p>The negative control is {@link SlotReuseUnvalidated}: the same search without the
 * snapshot and validation, against a writer that deletes a key and reuses its slot for another,
 * reads a key with the other key's value.
 */
public final class DashOptimisticRead {
  private DashOptimisticRead() {}

  static final long ABSENT = -1;

  /** Insert into the bucket the bystander is in (balanced insert, Dash §4.3). */
  @JCStressTest
  @Description("Dash optimistic read vs an insert into the same bucket: the bystander is always found, the new key is absent or complete.")
  @Outcome(id = "1, -1", expect = ACCEPTABLE, desc = "Read before the insert.")
  @Outcome(id = "1, 2", expect = ACCEPTABLE, desc = "Read after the insert.")
  @Outcome(expect = FORBIDDEN, desc = "The bystander was lost or the new key read torn: the optimistic read is broken.")
  @State
  public static class Insert {
    final DashRaceTable t = new DashRaceTable();
    final long bystander = DashRaceTable.keyFor(DashRaceTable.Y, 1);
    final long added = DashRaceTable.keyFor(DashRaceTable.Y, 2);

    /** One trial: a table holding the bystander. */
    public Insert() {
      t.table.put(bystander, 1);
    }

    /** Inserts the new key. */
    @Actor
    public void writer() {
      t.table.put(added, 2);
    }

    /**
     * Reads both keys.
     *
     * @param r the bystander's value, the new key's value
     */
    @Actor
    public void reader(JJ_Result r) {
      r.r1 = t.table.get(bystander, ABSENT);
      r.r2 = t.table.get(added, ABSENT);
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
  @Outcome(id = "1, 2", expect = ACCEPTABLE, desc = "Read before the delete.")
  @Outcome(id = "1, -1", expect = ACCEPTABLE, desc = "Read after the delete.")
  @Outcome(expect = FORBIDDEN, desc = "The bystander was lost or a wrong value read: the optimistic read is broken.")
  @State
  public static class Delete {
    final DashRaceTable t = new DashRaceTable();
    final long bystander = DashRaceTable.keyFor(DashRaceTable.Y, 1);
    final long removed = DashRaceTable.keyFor(DashRaceTable.Y, 2);

    /** One trial: a table holding both keys. */
    public Delete() {
      t.table.put(bystander, 1);
      t.table.put(removed, 2);
    }

    /** Deletes one key. */
    @Actor
    public void writer() {
      t.table.remove(removed);
    }

    /**
     * Reads both keys.
     *
     * @param r the bystander's value, the deleted key's value
     */
    @Actor
    public void reader(JJ_Result r) {
      r.r1 = t.table.get(bystander, ABSENT);
      r.r2 = t.table.get(removed, ABSENT);
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
   * between the copy and the clearing it is in two buckets, and a reader must find it exactly
   * once at every moment.
   */
  @JCStressTest
  @Description("Dash optimistic read vs a displacement: the record being moved to the next bucket is always found.")
  @Outcome(id = "1, -1", expect = ACCEPTABLE, desc = "Read before the insert that displaces.")
  @Outcome(id = "1, 2", expect = ACCEPTABLE, desc = "Read after it.")
  @Outcome(expect = FORBIDDEN, desc = "The moved record was missed (or a wrong value read): displacement is not atomic to readers.")
  @State
  public static class Displacement {
    final DashRaceTable t = new DashRaceTable();
    final long moved;
    final long added;

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
      added = DashRaceTable.keyFor(y, n);
      int bm = t.bitmapOf(y + 1);
      int movable = DashBucket.allocated(bm) & ~DashBucket.members(bm);
      if (movable == 0 || t.count(y + 2) >= DashLayout.SLOTS) {
        throw new IllegalStateException("setup: the next insert at bucket " + y + " would not displace");
      }
      moved = t.keyAt(y + 1, Integer.numberOfTrailingZeros(movable));
    }

    /** Inserts a key targeting Y: displaces {@link #moved} from Y+1 to Y+2. */
    @Actor
    public void writer() {
      t.table.put(added, 2);
    }

    /**
     * Reads the moved key and the new one.
     *
     * @param r the moved key's value, the new key's value
     */
    @Actor
    public void reader(JJ_Result r) {
      r.r1 = t.table.get(moved, ABSENT);
      r.r2 = t.table.get(added, ABSENT);
    }

    /** Closes the trial's pool (after checking the race did displace). */
    @Arbiter
    public void close() {
      if (t.table.get(moved, ABSENT) != 1) {
        throw new IllegalStateException("the moved key is gone after the race");
      }
      t.close();
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
  @Outcome(id = "1, -1", expect = ACCEPTABLE, desc = "Read before the stash insert.")
  @Outcome(id = "1, 2", expect = ACCEPTABLE, desc = "Read after it (found through the overflow metadata).")
  @Outcome(expect = FORBIDDEN, desc = "The bystander lost or the stashed key read torn: the optimistic read is broken.")
  @State
  public static class StashInsert {
    final DashRaceTable t = new DashRaceTable();
    final long bystander;
    final long added;

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
      long b = 0;
      for (int s = 0; b == 0 && s < DashLayout.SLOTS; s++) {
        long key = t.keyAt(y, s);
        b = DashRaceTable.target(key) == y ? key : 0;
      }
      bystander = b;
      long a = k;
      do {
        a++;
      } while (DashRaceTable.target(a) != y);
      added = a;
      if (bystander == 0 || t.table.stats().details().get("stashRecords") != 0) {
        throw new IllegalStateException("setup: no bystander targeting bucket " + y + " or the stash is not empty");
      }
    }

    /** Inserts a key targeting Y: it goes to the stash. */
    @Actor
    public void writer() {
      t.table.put(added, 2);
    }

    /**
     * Reads the bystander and the stashed key.
     *
     * @param r the bystander's value, the stashed key's value
     */
    @Actor
    public void reader(JJ_Result r) {
      r.r1 = t.table.get(bystander, ABSENT);
      r.r2 = t.table.get(added, ABSENT);
    }

    /** Closes the trial's pool (after checking the race did stash). */
    @Arbiter
    public void close() {
      if (t.table.stats().details().get("stashRecords") != 1) {
        throw new IllegalStateException("the insert did not go to the stash");
      }
      t.close();
    }
  }

  /**
   * Slot reuse: the writer deletes key A and inserts key B, which takes A's slot, twenty times
   * over (A→B→A...), while the reader searches for A. A reader that compared A's key in the slot
   * and then read the value after B overwrote the slot would return B's value for A; the
   * version validation makes it retry instead.
   */
  @JCStressTest
  @Description("Dash optimistic read vs delete-and-reuse of the same slot: a key is never read with another key's value.")
  @Outcome(id = {"1, -1", "-1, 2", "1, 2", "-1, -1"}, expect = ACCEPTABLE, desc = "Each key absent or with its own value.")
  @Outcome(expect = FORBIDDEN, desc = "A key read with the other key's value (torn slot): validation is broken.")
  @State
  public static class SlotReuse {
    final SlotReuseRace race = new SlotReuseRace();

    /** One trial. */
    public SlotReuse() {}

    /** Deletes and reinserts into the same slot, alternating keys. */
    @Actor
    public void writer() {
      race.churn();
    }

    /**
     * Reads A then B through the real, validating read.
     *
     * @param r A's value, B's value
     */
    @Actor
    public void reader(JJ_Result r) {
      r.r1 = race.t.table.get(race.a, ABSENT);
      r.r2 = race.t.table.get(race.b, ABSENT);
    }

    /** Closes the trial's pool. */
    @Arbiter
    public void close() {
      race.t.close();
    }
  }

  /**
   * Negative control of {@link SlotReuse}: the same race, read by {@link
   * DashRaceTable#getUnvalidated} (Dash's search without snapshot and validation). It must show
   * A read with B's value (2) or B with A's (1): if it never does on a run, that run could not
   * have caught a broken validation either.
   */
  @JCStressTest
  @Description("Negative control: the bucket search without version validation reads a key with another key's value.")
  @Outcome(id = {"1, -1", "-1, 2", "1, 2", "-1, -1"}, expect = ACCEPTABLE, desc = "Each key absent or with its own value.")
  @Outcome(id = {"2, -1", "2, 2", "2, 1", "-1, 1", "1, 1"}, expect = ACCEPTABLE_INTERESTING,
      desc = "Torn slot: a key read with the other key's value, the race validation prevents. Expected to be seen.")
  @Outcome(expect = FORBIDDEN, desc = "A value neither key ever had.")
  @State
  public static class SlotReuseUnvalidated {
    final SlotReuseRace race = new SlotReuseRace();

    /** One trial. */
    public SlotReuseUnvalidated() {}

    /** Deletes and reinserts into the same slot, alternating keys. */
    @Actor
    public void writer() {
      race.churn();
    }

    /**
     * Reads A then B without validation.
     *
     * @param r A's value, B's value
     */
    @Actor
    public void reader(JJ_Result r) {
      r.r1 = race.t.getUnvalidated(race.a, ABSENT);
      r.r2 = race.t.getUnvalidated(race.b, ABSENT);
    }

    /** Closes the trial's pool. */
    @Arbiter
    public void close() {
      race.t.close();
    }
  }

  /** The state of the slot-reuse race: keys A (value 1) and B (value 2), both targeting Y. */
  static final class SlotReuseRace {
    static final int ROUNDS = 20;
    final DashRaceTable t = new DashRaceTable();
    final long a = DashRaceTable.keyFor(DashRaceTable.Y, 1);
    final long b = DashRaceTable.keyFor(DashRaceTable.Y, 2);

    SlotReuseRace() {
      t.table.put(a, 1);
    }

    /** A out, B in (slot 0 of Y, the only free slot of the emptier bucket), and back. */
    void churn() {
      for (int i = 0; i < ROUNDS; i++) {
        t.table.remove(a);
        t.table.put(b, 2);
        t.table.remove(b);
        t.table.put(a, 1);
      }
    }
  }
}
