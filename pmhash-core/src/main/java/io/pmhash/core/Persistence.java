package io.pmhash.core;

import io.pmhash.core.concurrent.SwitchPoint;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.LongAdder;

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

  private final LongAdder linesFlushed = new LongAdder();
  private final LongAdder drains = new LongAdder();

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
    linesFlushed.add(linesSpanned(offset, length));
    flushLines(offset, length);
  }

  /** Waits until every line this thread flushed is durable; orders later stores after it. */
  public final void drain() {
    SwitchPoint.here(); // a model checker may run another thread between two persist steps
    VarHandle.releaseFence();
    drains.increment();
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
   * Counters since the pool was opened.
   *
   * @return a snapshot of the counters
   */
  public final PersistenceStats stats() {
    return new PersistenceStats(linesFlushed.sum(), drains.sum());
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
