package io.pmhash.core;

import io.pmhash.core.concurrent.SwitchPoint;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The one seam through which every ordering point of every scheme passes. Names follow PMDK:
 *
 * <ul>
 *   <li>{@link #flush(long, long)} starts the write-back of every cache line that overlaps the
 *       range, without ordering;
 *   <li>{@link #drain()} waits until every line this thread flushed is durable;
 *   <li>{@link #persist(long, long)} is flush then drain.
 * </ul>
 *
 * <p>Offsets are from the pool base, never addresses. Which instructions run is decided by the
 * pool's {@link Durability}; the {@code io.pmhash.core.crash} simulator is another
 * implementation. Every implementation counts lines flushed and drains issued ({@link #stats()}),
 * so tests can assert the persist cost of an operation.
 *
 * <p><b>A persistence fence is not a JIT fence.</b> {@code flush} and {@code drain} also issue
 * {@link VarHandle#releaseFence()} so that stores before them are not moved after them by the
 * compiler (free on x86), but they do not publish anything to other threads: commit words are
 * still written with release stores or CAS and read with acquire loads (see {@code
 * docs/persistence.md}).
 *
 * <p>Implementations are thread-safe: each thread's flushes are drained by that thread's drain.
 */
public abstract class Persistence {
  /** The cache-line size every flush is counted and aligned in. */
  public static final int CACHE_LINE = 64;

  /**
   * The calling thread's counters. Counting takes no locked instruction: a {@code LongAdder}'s
   * CAS between a flush and its drain waited for the flush's write-back and kept the next
   * operation's loads from starting meanwhile (docs/persistence.md, "Counting persists").
   */
  private final ThreadLocal<Counts> mine = ThreadLocal.withInitial(this::register);

  /** Guards {@link #counts}, {@link #endedLines} and {@link #endedDrains}. */
  private final Object registry = new Object();

  /** Every thread's counters; a terminated thread's are folded into the ended totals and reused. */
  private Counts[] counts = new Counts[0];

  private long endedLines;
  private long endedDrains;

  /** For subclasses. */
  protected Persistence() {}

  /**
   * Starts writing back every cache line overlapping {@code [offset, offset + length)}.
   *
   * @param offset pool offset of the first byte
   * @param length number of bytes; nothing happens when zero or negative
   */
  public final void flush(long offset, long length) {
    if (length <= 0) {
      return;
    }
    VarHandle.releaseFence();
    mine.get().addLines(linesSpanned(offset, length));
    flushLines(offset, length);
  }

  /** Waits until every line this thread flushed is durable; orders later stores after it. */
  public final void drain() {
    SwitchPoint.here(); // a model checker may run another thread between two persist steps
    VarHandle.releaseFence();
    mine.get().addDrain();
    drainFlushes();
  }

  /**
   * {@link #flush(long, long)} then {@link #drain()}.
   *
   * @param offset pool offset of the first byte
   * @param length number of bytes
   */
  public final void persist(long offset, long length) {
    flush(offset, length);
    drain();
  }

  /**
   * Number of 64-byte cache lines that {@code [offset, offset + length)} overlaps.
   *
   * @param offset first byte
   * @param length bytes, at least one
   * @return lines overlapped
   */
  public static long linesSpanned(long offset, long length) {
    return ((offset + length - 1) >>> 6) - (offset >>> 6) + 1;
  }

  /**
   * Counters since the pool was opened: every thread's, each read as it is now. What another
   * thread counted is included once something orders it before this call (the thread was
   * joined, or handed over through a lock, a latch or a volatile), as for any plain write.
   *
   * @return a snapshot of the counters
   */
  public final PersistenceStats stats() {
    synchronized (registry) {
      long lines = endedLines;
      long drains = endedDrains;
      for (Counts c : counts) {
        lines += c.lines();
        drains += c.drains();
      }
      return new PersistenceStats(lines, drains);
    }
  }

  /**
   * The calling thread's counters, new or taken over from a terminated thread (its counts
   * folded into the ended totals first: a thread's termination happens before {@code isAlive}
   * returns false, so its last writes are seen). Runs once per thread and persistence.
   */
  private Counts register() {
    Thread me = Thread.currentThread();
    synchronized (registry) {
      for (Counts c : counts) {
        if (!c.owner.isAlive()) {
          endedLines += c.lines();
          endedDrains += c.drains();
          c.reset(me);
          return c;
        }
      }
      Counts c = new Counts(me);
      Counts[] more = Arrays.copyOf(counts, counts.length + 1);
      more[counts.length] = c;
      counts = more;
      return c;
    }
  }

  /**
   * One thread's counters. Only the owner writes them, with opaque stores (no tearing, no
   * fence); {@link #stats()} reads them with opaque loads. Padded so that two threads' counters
   * do not share a cache line.
   */
  private static final class Counts {
    private static final VarHandle LINES;
    private static final VarHandle DRAINS;

    static {
      try {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        LINES = lookup.findVarHandle(Counts.class, "lines", long.class);
        DRAINS = lookup.findVarHandle(Counts.class, "drains", long.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    long p1, p2, p3, p4, p5, p6, p7;
    private long lines;
    private long drains;
    long q1, q2, q3, q4, q5, q6, q7;
    Thread owner;

    Counts(Thread owner) {
      this.owner = owner;
    }

    void addLines(long n) {
      LINES.setOpaque(this, lines + n);
    }

    void addDrain() {
      DRAINS.setOpaque(this, drains + 1);
    }

    long lines() {
      return (long) LINES.getOpaque(this);
    }

    long drains() {
      return (long) DRAINS.getOpaque(this);
    }

    /** Under the registry's lock, after the previous owner terminated. */
    void reset(Thread next) {
      LINES.setOpaque(this, 0L);
      DRAINS.setOpaque(this, 0L);
      owner = next;
    }
  }

  /**
   * The pool calls this with its mapping before the pool is used and again, before it is
   * published, every time growth maps the file anew. Every mapping stays valid until the pool
   * closes, and all of them show the same memory.
   *
   * @param memory the pool's current mapping; offset 0 is the pool base
   */
  protected void mapped(MemorySegment memory) {}

  /**
   * Writes back the lines overlapping the range (length is positive).
   *
   * @param offset pool offset
   * @param length bytes
   */
  protected abstract void flushLines(long offset, long length);

  /** Waits for this thread's flushes. */
  protected abstract void drainFlushes();

  /**
   * What this implementation does, for logs and benchmark reports, e.g. {@code "native clwb +
   * sfence (libpmhash)"}.
   *
   * @return a one-line description
   */
  public abstract String describe();

  @Override
  public String toString() {
    return describe();
  }
}
