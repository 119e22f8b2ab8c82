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
 * grows a volatile pool ({@link Pool#ensureSize}), writes a record into the new part and
 * publishes its offset with a release store into a word of the old part. A reader that reads
 * the offset (acquire) and then {@link Pool#memory()} must get a mapping that covers the offset
 * and shows the record; earlier mappings stay valid, so the read of the link through whatever
 * mapping the reader held never faults.
 *
 * <p>Outcomes {@code offsetSeen, value}: {@code value} is the record read through the fresh
 * mapping (42), 0 when no offset was published yet, -1 when the mapping does not cover the
 * offset (the read would throw {@code IndexOutOfBoundsException}). The negative control {@link
 * StaleMapping} takes {@code memory()} before reading the offset, against the rule.
 */
@JCStressTest
@Description("Pool growth: an offset published after growth is covered by memory() read after it.")
@Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "Read before the publication.")
@Outcome(id = "1, 42", expect = ACCEPTABLE, desc = "Read the published record through a mapping that covers it.")
@Outcome(id = "1, -1", expect = FORBIDDEN, desc = "memory() read after the offset does not cover it: growth published too late.")
@Outcome(expect = FORBIDDEN, desc = "Anything else (the record not visible through the new mapping).")
@State
public class PoolGrowthPublication {
  static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

  final Pool pool = Pool.createVolatile(PoolOptions.defaults().withScheme("jcstress", 1)
      .withInitialSize(1 << 20).withMaxSize(8 << 20));
  final long link = pool.heapOffset();

  /** One trial: a fresh 1 MiB volatile pool, link 0. */
  public PoolGrowthPublication() {}

  /** Grows, writes 42 into the new part, publishes its offset. */
  @Actor
  public void writer() {
    grow(pool, link);
  }

  /**
   * Reads the link, then the mapping, then the record.
   *
   * @param r offset seen (0/1), the record or -1 if not covered
   */
  @Actor
  public void reader(JJ_Result r) {
    long offset = (long) LONG.getAcquire(pool.memory(), link);
    read(pool.memory(), offset, r);
  }

  /** Closes the trial's pool. */
  @Arbiter
  public void close() {
    closeQuietly(pool);
  }

  static void grow(Pool pool, long link) {
    long old = pool.size();
    pool.ensureSize(old * 2);
    MemorySegment m = pool.memory();
    long record = old + 64;
    m.set(ValueLayout.JAVA_LONG, record, 42);
    LONG.setRelease(m, link, record);
  }

  static void read(MemorySegment m, long offset, JJ_Result r) {
    if (offset == 0) {
      return;
    }
    r.r1 = 1;
    r.r2 = offset + 8 <= m.byteSize() ? m.get(ValueLayout.JAVA_LONG, offset) : -1;
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
   * -1}; if not, the run could not have caught a late publication of the grown mapping.
   */
  @JCStressTest
  @Description("Negative control: a mapping taken before reading the offset may not cover it.")
  @Outcome(id = {"0, 0", "1, 42"}, expect = ACCEPTABLE, desc = "No overlap this time.")
  @Outcome(id = "1, -1", expect = ACCEPTABLE_INTERESTING, desc = "Stale mapping: the read would throw. Expected to be seen.")
  @Outcome(expect = FORBIDDEN, desc = "Anything else.")
  @State
  public static class StaleMapping {
    final Pool pool = Pool.createVolatile(PoolOptions.defaults().withScheme("jcstress", 1)
        .withInitialSize(1 << 20).withMaxSize(8 << 20));
    final long link = pool.heapOffset();

    /** One trial. */
    public StaleMapping() {}

    /** As the real writer. */
    @Actor
    public void writer() {
      grow(pool, link);
    }

    /**
     * Mapping first, then the link.
     *
     * @param r offset seen, the record or -1
     */
    @Actor
    public void reader(JJ_Result r) {
      MemorySegment m = pool.memory();
      long offset = (long) LONG.getAcquire(m, link);
      read(m, offset, r);
    }

    /** Closes the trial's pool. */
    @Arbiter
    public void close() {
      closeQuietly(pool);
    }
  }
}
