package io.pmhash.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.pmhash.core.concurrent.EpochReclaimer;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * {@link EpochReclaimer}: a block a reader reached inside its critical section is not freed
 * before the reader leaves it. A block (here: a flag object standing for pool memory) is linked
 * from {@code link}; the writer unlinks it, retires it with a deallocator that marks it freed,
 * and calls {@link EpochReclaimer#reclaim()} three times (enough to pass the two-epoch grace
 * period when no reader holds it back). The reader enters, follows the link, reads the block
 * a few times (the time a real reader spends in a bucket) and records whether it saw it freed.
 *
 * <p>Outcomes {@code reached, sawFreed, freedAtEnd}: {@code 1, 1, *} is the use-after-free the
 * reclaimer exists to prevent. The negative control {@link FreeWithoutGracePeriod} frees at
 * once after the unlink, as code without a reclaimer would.
 */
@JCStressTest
@Description("EpochReclaimer: a retired block is never freed while a reader that reached it is inside.")
@Outcome(id = {"1, 0, 1", "1, 0, 0"}, expect = ACCEPTABLE, desc = "The reader reached the block and it stayed valid while it was inside.")
@Outcome(id = {"0, 0, 1", "0, 0, 0"}, expect = ACCEPTABLE, desc = "The reader came after the unlink and reached nothing.")
@Outcome(id = {"1, 1, 1", "1, 1, 0"}, expect = FORBIDDEN, desc = "Use after free: the block was freed while the reader held it.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class EpochReclamation {
  static final int READS = 8;

  private final Trial t = new Trial();

  /** One trial: the block linked, a fresh reclaimer. */
  public EpochReclamation() {}

  /** Unlinks, retires, reclaims. */
  @Actor
  public void writer() {
    t.link = null;
    t.epochs.retire(1, 1, (offset, size) -> t.block.freed = true);
    t.epochs.reclaim();
    t.epochs.reclaim();
    t.epochs.reclaim();
  }

  /**
   * Enters, follows the link, reads the block, exits.
   *
   * @param r reached, saw it freed, freed at the end (by the arbiter)
   */
  @Actor
  public void reader(III_Result r) {
    t.read(r);
  }

  /**
   * Records whether the block was freed once both finished.
   *
   * @param r third field
   */
  @Arbiter
  public void arbiter(III_Result r) {
    r.r3 = t.block.freed ? 1 : 0;
  }

  /** A trial's reclaimer and block, and the reader both tests share. */
  static final class Trial {
    final EpochReclaimer epochs = new EpochReclaimer();
    final Block block = new Block();
    volatile Block link = block;

    /** Enters, follows the link, reads the block a few times (volatile reads), exits. */
    void read(III_Result r) {
      epochs.enter();
      try {
        Block b = link;
        if (b != null) {
          r.r1 = 1;
          for (int i = 0; i < READS; i++) {
            r.r2 |= b.freed ? 1 : 0;
          }
        }
      } finally {
        epochs.exit();
      }
    }
  }

  /** Stands for a block of pool memory: {@code freed} once its deallocator ran. */
  static final class Block {
    volatile boolean freed;
  }

  /**
   * Negative control: the writer frees the block right after unlinking it, with no grace
   * period. A reader that reached the block before the unlink must sometimes see it freed.
   */
  @JCStressTest
  @Description("Negative control: freeing right after the unlink frees a block a reader still holds.")
  @Outcome(id = {"1, 0, 1", "0, 0, 1"}, expect = ACCEPTABLE, desc = "No overlap this time.")
  @Outcome(id = "1, 1, 1", expect = ACCEPTABLE_INTERESTING, desc = "Use after free, the race a reclaimer prevents. Expected to be seen.")
  @Outcome(expect = FORBIDDEN, desc = "Anything else.")
  @State
  public static class FreeWithoutGracePeriod {
    private final Trial t = new Trial();

    /** One trial. */
    public FreeWithoutGracePeriod() {}

    /** Unlinks, frees. */
    @Actor
    public void writer() {
      t.link = null;
      t.block.freed = true;
    }

    /**
     * As the real reader.
     *
     * @param r reached, saw it freed, freed at the end
     */
    @Actor
    public void reader(III_Result r) {
      t.read(r);
    }

    /**
     * Whether the block was freed.
     *
     * @param r third field
     */
    @Arbiter
    public void arbiter(III_Result r) {
      r.r3 = t.block.freed ? 1 : 0;
    }
  }
}
