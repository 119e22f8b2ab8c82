package io.pmhash.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JJ_Result;

/**
 * {@link Pool} growth against a reader (the rule of {@code Pool}'s "Growth" section): a writer
 * grows a volatile pool ({@link Pool#ensureSize}) three times (1 to 8 MiB), each time writing a
 * record into the new part and publishing its offset with a release store into a word of the
 * first part. A reader that reads the offset (acquire) and then {@link Pool#memory()} must get a
 * mapping that covers the offset and shows the record; earlier mappings stay valid, so the read
 * of the link through whatever mapping the reader held never faults. The reader looks again and
 * again until the writer is done (at most 20 000 times, then once more), so its looks cover the
 * growths.
 *
 * <p>Outcomes {@code offsetsSeen, bad}: whether any read saw a published offset (0/1), and
 * whether any saw a mapping that does not cover it (the read would throw {@code
 * IndexOutOfBoundsException}) or a record other than 42 (0/1). The negative control {@link
 * StaleMapping} takes {@code memory()} before reading the offset, against the rule.
 */
@JCStressTest
@Description("Pool growth: an offset published after growth is covered by memory() read after it.")
@Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "Every read came before the first publication (the reader was done before the writer began).")
@Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "Published records read through mappings that cover them.")
@Outcome(id = "1, 1", expect = FORBIDDEN, desc = "memory() read after an offset does not cover it, or the record is not 42: growth published unsafely.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class PoolGrowthPublication {
  static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

  final Growth g = new Growth();

  /** One trial: a fresh 1 MiB volatile pool, link 0. */
  public PoolGrowthPublication() {}

  /** Grows three times, each time writing 42 into the new part and publishing its offset. */
  @Actor
  public void writer() {
    g.grow();
  }

  /**
   * Reads the link, then the mapping, then the record, until the writer is done.
   *
   * @param r offset seen (0/1), bad (0/1)
   */
  @Actor
  public void reader(JJ_Result r) {
    g.look(false, r);
  }

  /** Closes the trial's pool. */
  @Arbiter
  public void close() {
    closeQuietly(g.pool);
  }

  static final int MAX_LOOKS = 20_000;

  /** A trial's pool, its link word and the writer's done flag. */
  static final class Growth {
    final Pool pool;
    final long link;
    volatile boolean done;

    Growth() {
      QuietPools.install();
      pool = Pool.createVolatile(PoolOptions.defaults().withScheme("jcstress", 1)
          .withInitialSize(1 << 20).withMaxSize(8 << 20));
      link = pool.heapOffset();
    }

    void grow() {
      PoolGrowthPublication.grow(pool, link);
      done = true;
    }

    /**
     * The reader: looks until the writer is done.
     *
     * @param mappingFirst the negative control's order: {@code memory()}, then the offset
     */
    void look(boolean mappingFirst, JJ_Result r) {
      boolean last;
      int looks = 0;
      do {
        last = done || ++looks >= MAX_LOOKS;
        MemorySegment before = pool.memory();
        long offset = (long) LONG.getAcquire(before, link);
        read(mappingFirst ? before : pool.memory(), offset, r);
      } while (!last);
    }
  }

  static void grow(Pool pool, long link) {
    for (int i = 0; i < 3; i++) {
      long old = pool.size();
      pool.ensureSize(old * 2);
      MemorySegment m = pool.memory();
      long record = old + 64;
      m.set(ValueLayout.JAVA_LONG, record, 42);
      LONG.setRelease(m, link, record);
    }
  }

  static void read(MemorySegment m, long offset, JJ_Result r) {
    if (offset == 0) {
      return;
    }
    r.r1 = 1;
    if (offset + 8 > m.byteSize() || m.get(ValueLayout.JAVA_LONG, offset) != 42) {
      r.r2 = 1;
    }
  }

  static void closeQuietly(Pool pool) {
    try {
      pool.close();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * Negative control: the reader takes {@link Pool#memory()} first and then reads the offset,
   * so the offset can come from after a growth its mapping predates. Must be seen as {@code 1,
   * 1}; if not, the run could not have caught a late publication of the grown mapping.
   */
  @JCStressTest
  @Description("Negative control: a mapping taken before reading the offset may not cover it.")
  @Outcome(id = {"0, 0", "1, 0"}, expect = ACCEPTABLE, desc = "No stale mapping this time.")
  @Outcome(id = "1, 1", expect = ACCEPTABLE_INTERESTING, desc = "Stale mapping: the read would throw. Expected to be seen.")
  @Outcome(expect = FORBIDDEN, desc = "Anything else.")
  @State
  public static class StaleMapping {
    final Growth g = new Growth();

    /** One trial. */
    public StaleMapping() {}

    /** As the real writer. */
    @Actor
    public void writer() {
      g.grow();
    }

    /**
     * Mapping first, then the link, until the writer is done.
     *
     * @param r offset seen, bad
     */
    @Actor
    public void reader(JJ_Result r) {
      g.look(true, r);
    }

    /** Closes the trial's pool. */
    @Arbiter
    public void close() {
      closeQuietly(g.pool);
    }
  }
}
