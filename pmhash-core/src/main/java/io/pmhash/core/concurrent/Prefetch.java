package io.pmhash.core.concurrent;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Loads a writer issues before it takes a lock, so that the cache misses of its critical section
 * overlap one another instead of following each other under the lock.
 *
 * <p>Why it pays: a lock's CAS ({@code lock cmpxchg} on x86) waits for every earlier load and
 * orders every later one after it, so the loads of a critical section start only once the lock is
 * held, and each one whose address depends on the previous (a bucket's bitmap, then the slot it
 * names) waits for it. In a table larger than the cache each is a cache and TLB miss, and a
 * persist of a line not yet in the cache first waits for it. Loading the lines before the CAS
 * puts all these misses in flight at once; the critical section then hits the cache. The schemes
 * call this on their writers' paths (docs/design.md, "Loads before a lock").
 *
 * <p>Nothing loaded here is trusted: the caller reads everything again under the lock. The
 * caller must make sure each offset lies inside the segment whatever the unlocked reads that
 * computed it returned, and that the memory stays mapped (inside the pool's epoch for DRAM
 * arrays a resize frees).
 *
 * <p>The loaded values are folded into one {@code long} and passed to {@link #keep}, a compare
 * the JIT compiler cannot remove; without a use it would drop the loads as dead code.
 */
public final class Prefetch {
  private Prefetch() {}

  private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle().withInvokeExactBehavior();
  /** A value {@link #keep} compares with; equal to a prefetch's value about once in 2^64. */
  private static final long NEVER = 0x9E3779B97F4A7C15L;
  /** Written only when {@link #keep}'s never-taken branch is taken; read by nobody. */
  private static long kept;

  /**
   * Loads one {@code long} of each of {@code lines} consecutive 64-byte lines.
   *
   * @param m the segment: the pool's mapping (a DRAM array goes by {@link #linesAt})
   * @param offset an 8-byte aligned offset; the first line is the one holding it
   * @param lines how many lines, from {@code offset} in steps of 64 bytes; all inside {@code m}
   * @return the loaded values folded together, for {@link #keep}
   */
  public static long lines(MemorySegment m, long offset, int lines) {
    long touched = 0;
    for (int i = 0; i < lines; i++) {
      touched ^= (long) LONG.get(m, offset + 64L * i);
    }
    return touched;
  }

  /**
   * {@link #lines} for memory outside the pool's mapping (a scheme's {@link
   * io.pmhash.core.alloc.DramArrays DRAM array}), by address: passed through {@link #lines}, such a
   * segment would give its access a second segment class to profile and slow every scheme's
   * prefetch in the JVM ({@link VersionLock#tryLockAt} says how; level hashing's inserts ran at
   * 0.56 of their speed after group hashing's in one JVM, docs/persistence.md "One JVM, several
   * schemes").
   *
   * @param address the address of an 8-byte aligned word; the first line is the one holding it.
   *     Every line must lie inside live memory ({@link UncheckedMemory}'s contract)
   * @param lines how many lines, in steps of 64 bytes
   * @return the loaded values folded together, for {@link #keep}
   */
  public static long linesAt(long address, int lines) {
    long touched = 0;
    for (int i = 0; i < lines; i++) {
      touched ^= UncheckedMemory.getLong(address + 64L * i);
    }
    return touched;
  }

  /**
   * Keeps the loads behind a value: a compare whose branch is never taken in practice.
   *
   * @param touched loaded values folded together ({@link #lines}, or the caller's own loads)
   */
  public static void keep(long touched) {
    if (touched == NEVER) {
      kept = touched;
    }
  }
}
