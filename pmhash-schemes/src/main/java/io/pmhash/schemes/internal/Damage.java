package io.pmhash.schemes.internal;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.concurrent.SwitchPoint;
import io.pmhash.core.concurrent.VersionLock;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongUnaryOperator;

/**
 * The checks every scheme makes against a damaged pool (issue 9), written once: a word read from
 * the pool is an offset to follow only after it was checked, a lock word that stays locked is
 * damage rather than a writer, and a chain of links ends. Each failure is a {@link
 * CorruptPoolException}, wrapped in an {@link UncheckedIOException} for the unchecked table API
 * ({@link io.pmhash.map.spi.SchemeProvider}), whose message names the structure, the offset and
 * what to do.
 *
 * <p>Where they run: the block checks at open and in recovery (never on a hot read or insert
 * path: a structure checked at open stays valid, since only the table writes it); the lock waits
 * in the rare branch a reader or writer takes when it finds a lock held, so a hot path that finds
 * its locks free runs as before.
 *
 * <p><b>A lock held for ever.</b> Lock words are persistent ({@link VersionLock}): a lock bit set
 * by damage in a pool that recovery does not reset (a clean shutdown) would make every reader and
 * writer of the bucket spin for ever. A waiter therefore spins briefly, then parks 1 ms at a time,
 * and gives up once the word has stayed locked <em>and unchanged</em> for {@link
 * #STUCK_LOCK_MILLIS} parks in a row (default 1000, i.e. at least one second; {@code
 * -Dpmhash.stuckLockMillis=N}). A live writer holds a bucket lock for microseconds (a split: for a
 * segment's copy and a few persists), and any unlock or relock changes the word and restarts the
 * count, so only a lock that no thread releases is reported. Each park is at least a millisecond
 * of the waiter's own running time, so a pause of the whole JVM counts once, not for its length.
 */
public final class Damage {
  private Damage() {}

  /**
   * Parks of 1 ms a lock word must stay locked and unchanged before a waiter reports it damaged.
   */
  public static final int STUCK_LOCK_MILLIS = Integer.getInteger("pmhash.stuckLockMillis", 1000);

  /** Busy spins before a waiter starts parking. */
  private static final int SPINS = 256;

  /**
   * @param message what was wrong and what to do
   * @return a {@link CorruptPoolException} wrapped for the unchecked table API
   */
  public static UncheckedIOException corrupt(String message) {
    return new UncheckedIOException(new CorruptPoolException(message));
  }

  /**
   * @param pool a pool
   * @return how messages name it: its path, or "volatile pool"
   */
  public static String where(Pool pool) {
    return pool.path() == null ? "volatile pool" : pool.path().toString();
  }

  // ---------------------------------------------------------------- blocks

  /**
   * Checks that {@code offset}, read from the pool, names an allocated block that can hold {@code
   * bytes}: inside the heap, {@code align}-aligned, and an owned block of the allocator of at
   * least that size. Loads allocator chunks up to the block's (chunk headers and run bitmaps,
   * never blocks); for open and recovery, not for a hot path.
   *
   * @param pool the pool
   * @param offset the offset to check
   * @param bytes the size the structure needs
   * @param align the structure's alignment (a power of two)
   * @param what the structure and where the offset was read, for the message, e.g. "dash-eh
   *     directory entry 7"
   * @throws UncheckedIOException wrapping a {@link CorruptPoolException} otherwise
   */
  public static void requireBlock(Pool pool, long offset, long bytes, long align, String what) {
    requireBlock(pool, pool.allocator().schemeAllocator(), offset, bytes, align, what);
  }

  /**
   * {@link #requireBlock(Pool, long, long, long, String)} for a scheme that takes its blocks from
   * {@code allocator} ({@link Pool#schemeAllocator()} or {@link Pool#allocator()}'s seam).
   *
   * @param pool the pool
   * @param allocator the allocator the scheme's blocks come from
   * @param offset the offset to check
   * @param bytes the size the structure needs
   * @param align the structure's alignment (a power of two)
   * @param what the structure and where the offset was read, for the message
   * @throws UncheckedIOException wrapping a {@link CorruptPoolException} otherwise
   */
  public static void requireBlock(Pool pool, SchemeAllocator allocator, long offset, long bytes, long align, String what) {
    String problem = blockProblem(pool, allocator, offset, bytes, align);
    if (problem != null) {
      throw corrupt(where(pool) + ": " + what + " names offset " + offset + ", " + problem
          + ": the pool was damaged; restore it from a copy");
    }
  }

  /**
   * The check of {@link #requireBlock} as an answer.
   *
   * @param pool the pool
   * @param offset the offset to check
   * @param bytes the size the structure needs
   * @param align the structure's alignment (a power of two)
   * @return null if {@code offset} names such a block, else what is wrong with it
   */
  public static String blockProblem(Pool pool, long offset, long bytes, long align) {
    return blockProblem(pool, pool.allocator().schemeAllocator(), offset, bytes, align);
  }

  /**
   * {@link #blockProblem(Pool, long, long, long)} for a scheme that takes its blocks from {@code
   * allocator}: the same check for the pool's own allocator; for a backend's (PMDK's, on llpl),
   * whose blocks lie anywhere in the region, inside the mapping, aligned, and a block that
   * allocator owns of at least {@code bytes}. Reads only.
   *
   * @param pool the pool
   * @param allocator the allocator the scheme's blocks come from
   * @param offset the offset to check
   * @param bytes the size the structure needs
   * @param align the structure's alignment (a power of two)
   * @return null if {@code offset} names such a block, else what is wrong with it
   */
  public static String blockProblem(Pool pool, SchemeAllocator allocator, long offset, long bytes, long align) {
    if (allocator == pool.allocator().schemeAllocator()) {
      if (offset < pool.heapOffset() || offset > pool.size() - bytes) {
        return "outside the heap [" + pool.heapOffset() + ", " + pool.size() + ")";
      }
    } else if (offset <= 0 || offset > pool.memory().byteSize() - bytes) {
      return "outside the mapping [0, " + pool.memory().byteSize() + ")";
    }
    if ((offset & (align - 1)) != 0) {
      return "not " + align + "-byte aligned";
    }
    if (!allocator.owned(offset)) {
      return "not an allocated block";
    }
    long size = allocator.blockSize(offset);
    if (size < bytes) {
      return "a block of " + size + " bytes, not the " + bytes + " it needs";
    }
    return null;
  }

  /**
   * The first check of an offset read at open, before it is followed: for the pool's own
   * allocator (an FFM pool) outside the heap or past the mapping, nothing more (not loading the
   * allocator); for a backend's (llpl: PMDK's blocks, anywhere in the region) not a 64-byte
   * aligned block it owns of at least {@code bytes}. Reads only.
   *
   * @param pool the pool
   * @param allocator the allocator the scheme's blocks come from
   * @param offset the offset read
   * @param bytes the size the structure needs
   * @return true if {@code offset} cannot name the structure
   */
  public static boolean outsideBlocks(Pool pool, SchemeAllocator allocator, long offset, long bytes) {
    if (allocator == pool.allocator().schemeAllocator()) {
      return offset < pool.heapOffset() || offset + bytes > pool.memory().byteSize();
    }
    return blockProblem(pool, allocator, offset, bytes, 64) != null;
  }

  // ---------------------------------------------------------------- chains

  /**
   * Walks a chain of links from {@code first} until a link is 0, checking every node with {@link
   * #requireBlock}, and fails if the chain loops (Brent's cycle detection: O(chain) time, O(1)
   * space). For open and recovery.
   *
   * @param pool the pool
   * @param first the first node, 0 for an empty chain
   * @param next reads a node's link (called only on checked nodes)
   * @param bytes size of a node
   * @param align alignment of a node
   * @param what the chain, for messages, e.g. "dash-eh side-link chain"
   * @return the number of nodes
   * @throws UncheckedIOException wrapping a {@link CorruptPoolException} if a node is not a block
   *     of the structure or the chain loops
   */
  public static long walkChain(Pool pool, long first, LongUnaryOperator next, long bytes, long align, String what) {
    return walkChain(pool, pool.allocator().schemeAllocator(), first, next, bytes, align, what);
  }

  /**
   * {@link #walkChain(Pool, long, LongUnaryOperator, long, long, String)} for a scheme that takes
   * its blocks from {@code allocator}.
   *
   * @param pool the pool
   * @param allocator the allocator the scheme's blocks come from
   * @param first the first node, 0 for an empty chain
   * @param next reads a node's link (called only on checked nodes)
   * @param bytes size of a node
   * @param align alignment of a node
   * @param what the chain, for messages
   * @return the number of nodes
   * @throws UncheckedIOException wrapping a {@link CorruptPoolException} if a node is not a block
   *     of the structure or the chain loops
   */
  public static long walkChain(Pool pool, SchemeAllocator allocator, long first, LongUnaryOperator next, long bytes, long align,
      String what) {
    long nodes = 0;
    long mark = 0; // Brent: the node saved at the last power of two
    long power = 1;
    long lambda = 0;
    for (long x = first; x != 0; x = next.applyAsLong(x)) {
      // The message is built only on failure: a concatenation per node was a string per
      // segment on every open (issue 3).
      String problem = blockProblem(pool, allocator, x, bytes, align);
      if (problem != null) {
        throw corrupt(where(pool) + ": " + what + " node " + nodes + " names offset " + x + ", " + problem
            + ": the pool was damaged; restore it from a copy");
      }
      if (x == mark) {
        throw corrupt(where(pool) + ": " + what + " loops: node " + nodes + " at " + x
            + " was visited before; the pool was damaged; restore it from a copy");
      }
      nodes++;
      if (++lambda == power) {
        mark = x;
        power <<= 1;
        lambda = 0;
      }
    }
    return nodes;
  }

  // ---------------------------------------------------------------- locks

  /**
   * Takes a {@link VersionLock}: one {@link VersionLock#tryLock} on the fast path, else a bounded
   * wait ({@link #STUCK_LOCK_MILLIS}).
   *
   * @param m the mapping
   * @param lock the lock word's offset
   * @param what the lock, for the message, e.g. "dash-eh bucket lock"
   * @throws UncheckedIOException wrapping a {@link CorruptPoolException} if the word stays locked
   *     and unchanged for the bound
   */
  public static void lock(MemorySegment m, long lock, String what) {
    if (!VersionLock.tryLock(m, lock)) {
      lockSlow(m, lock, what);
    }
  }

  private static void lockSlow(MemorySegment m, long lock, String what) {
    for (;;) {
      awaitUnlocked(m, lock, what);
      if (VersionLock.tryLock(m, lock)) {
        return;
      }
    }
  }

  /**
   * Waits until a {@link VersionLock} word is unlocked (a reader that found it locked): spins,
   * then parks, and gives up when the word stays locked and unchanged for {@link
   * #STUCK_LOCK_MILLIS} parks in a row.
   *
   * @param m the mapping
   * @param lock the lock word's offset
   * @param what the lock, for the message
   * @throws UncheckedIOException wrapping a {@link CorruptPoolException} if the lock is held for
   *     ever
   */
  public static void awaitUnlocked(MemorySegment m, long lock, String what) {
    int seen = VersionLock.snapshotAcquire(m, lock);
    int step = 0;
    while (VersionLock.isLocked(seen)) {
      if (!pause(step++)) {
        throw stuck(lock, seen, what);
      }
      int w = VersionLock.snapshotAcquire(m, lock);
      if (w != seen) {
        seen = w;
        step = 0;
      }
    }
  }

  /**
   * Waits while a 64-bit lock word equals {@code held} (a recovery lock), with the bound of
   * {@link #awaitUnlocked}.
   *
   * @param m the mapping
   * @param word the lock word's offset
   * @param held the value the word holds while locked
   * @param read reads the word (the scheme's own accessor: layouts differ)
   * @param what the lock, for the message
   * @throws UncheckedIOException wrapping a {@link CorruptPoolException} if it stays held
   */
  public static void awaitWordChange(MemorySegment m, long word, long held, LongUnaryOperator read, String what) {
    int step = 0;
    while (read.applyAsLong(word) == held) {
      if (!pause(step++)) {
        throw corrupt(what + " at " + word + " has stayed held (0x" + Long.toHexString(held) + ") for "
            + STUCK_LOCK_MILLIS + " ms with no thread releasing it: lock held for ever: damaged pool;"
            + " restore it from a copy");
      }
    }
  }

  /**
   * One step of a bounded retry loop for a writer that found some lock busy without knowing which
   * (a {@code tryLock} on a neighbour failed): spins first, then parks 1 ms per step, and gives up
   * after {@link #STUCK_LOCK_MILLIS} parks. The caller keeps the count, from 0, and resets it
   * when it gets on.
   *
   * @param attempt how many times in a row the caller found a lock busy
   * @param what the locks, for the message
   * @return {@code attempt + 1}
   * @throws UncheckedIOException wrapping a {@link CorruptPoolException} after the bound
   */
  public static int backOff(int attempt, String what) {
    if (!pause(attempt)) {
      throw stayedBusy(what);
    }
    return attempt + 1;
  }

  /** {@link #backOff}'s failure, out of its body: the wait stays a few bytecodes to inline. */
  private static UncheckedIOException stayedBusy(String what) {
    return corrupt(what + " stayed busy for " + STUCK_LOCK_MILLIS + " ms of retries with no thread releasing it:"
        + " lock held for ever: damaged pool; restore it from a copy");
  }

  /**
   * Step {@code step} (from 0) of every bounded wait here: {@link #SPINS} spins, then {@link
   * #STUCK_LOCK_MILLIS} parks of 1 ms.
   *
   * @return false once the bound is used up (nothing waited)
   */
  private static boolean pause(int step) {
    SwitchPoint.here();
    if (step < SPINS) {
      Thread.onSpinWait();
    } else if (step < SPINS + STUCK_LOCK_MILLIS) {
      LockSupport.parkNanos(1_000_000L);
    } else {
      return false;
    }
    return true;
  }

  private static UncheckedIOException stuck(long lock, int word, String what) {
    return corrupt(what + " at " + lock + " has stayed locked (0x" + Integer.toHexString(word) + ") for "
        + STUCK_LOCK_MILLIS + " ms with no thread releasing it: lock held for ever: damaged pool;"
        + " restore it from a copy");
  }
}
