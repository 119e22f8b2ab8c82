package io.pmhash.core.log;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.internal.Words;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * The lanes of a pool: {@link Pool#laneCount()} fixed regions of {@link Pool#laneSize()} bytes
 * right after the pool header, each holding the redo and undo records of one operation in
 * flight (layout: {@link LaneLayout}). A thread takes a lane for one operation ({@link
 * #beginRedo()}, {@link UndoLog#begin()}, or the allocator's publish) and gives it back when the
 * operation returns; the lane lock is in memory only. When every lane is busy the caller spins
 * briefly, then parks until a lane is released.
 *
 * <h2>Recovery</h2>
 *
 * {@link #recover()} runs inside {@link Pool#open} before the pool is returned. For each lane, in
 * lane order: first a valid undo log is rolled back (old bytes restored in reverse order,
 * persisted, then the log invalidated); then a valid redo record is replayed (every action
 * applied again, persisted, then the commit word cleared). Its cost is O(lanes x lane size): it
 * reads nothing outside the lanes but the words the records name, so it does not depend on the
 * size of the pool.
 *
 * <p><b>Why undo before redo.</b> A lane runs one operation at a time, so its two sections are
 * never both valid in a pool written by this code; the order matters for what one lane's records
 * mean relative to the pool state, and undo-then-redo is the one that is right for every record
 * either section can hold: an undo log describes the state <em>before</em> an unfinished
 * transaction, a redo record the state <em>after</em> a decided operation. Restoring the
 * "before" first and applying the "after" on top means a committed redo action is never undone
 * by a rollback. Across lanes the order does not matter: an undo range covers only bytes its
 * transaction held exclusively, a redo SET only a word its publisher held exclusively, and the
 * bit actions of both are single-bit and commute.
 *
 * <p>Both steps are idempotent, so a crash during recovery is recovered by the next open.
 */
public final class Lanes {
  private static final int SPINS = 64;

  final Pool pool;
  final Persistence persistence;
  final int laneSize;
  final int redoCapacity;
  final int undoStart;
  final int undoBytes;
  private final Lane[] lanes;
  private final ConcurrentLinkedQueue<Thread> waiters = new ConcurrentLinkedQueue<>();
  private final long mutableLo;
  private final long mutableHi;
  private volatile boolean used;

  /**
   * Binds the lanes of a pool. The pool does this when it opens; use {@link Pool#lanes()}.
   *
   * @param pool the pool
   */
  public Lanes(Pool pool) {
    this.pool = pool;
    this.persistence = pool.persistence();
    this.laneSize = pool.laneSize();
    this.redoCapacity = LaneLayout.redoCapacity(laneSize);
    this.undoStart = LaneLayout.undoStart(laneSize);
    this.undoBytes = LaneLayout.undoBytes(laneSize);
    this.mutableLo = pool.rootWord(0);
    this.mutableHi = pool.rootWord(15) + 8;
    Lane[] all = new Lane[pool.laneCount()];
    for (int i = 0; i < all.length; i++) {
      all[i] = new Lane(this, i, pool.lanesOffset() + (long) i * laneSize);
    }
    this.lanes = all;
  }

  /** @return the number of lanes */
  public int count() {
    return lanes.length;
  }

  /** @return the most redo actions one atomic step ({@link Redo}) can hold */
  public int redoCapacity() {
    return redoCapacity;
  }

  /** @return bytes of a lane's undo section: snapshots take 24 bytes plus their length, padded to 8 */
  public int undoCapacityBytes() {
    return undoBytes;
  }

  /**
   * Takes a lane for one atomic redo step. Use it in try-with-resources; {@link Redo#close()}
   * gives the lane back.
   *
   * @return the lane's redo builder, empty
   */
  public Redo beginRedo() {
    Lane lane = acquire();
    lane.redo.start();
    return lane.redo;
  }

  Lane lane(int index) {
    return lanes[index];
  }

  // ---------------------------------------------------------------- lane locks

  Lane acquire() {
    used = true;
    Lane[] all = lanes;
    int n = all.length;
    int start = (int) Long.remainderUnsigned(Thread.currentThread().threadId(), n);
    for (int spin = 0; spin < SPINS; spin++) {
      Lane l = tryAcquire(all, start);
      if (l != null) {
        return l;
      }
      Thread.onSpinWait();
    }
    return acquireSlow(all, start);
  }

  private static Lane tryAcquire(Lane[] all, int start) {
    int n = all.length;
    for (int i = 0, j = start; i < n; i++, j = j + 1 == n ? 0 : j + 1) {
      Lane l = all[j];
      if (l.tryLock()) {
        return l;
      }
    }
    return null;
  }

  private Lane acquireSlow(Lane[] all, int start) {
    Thread me = Thread.currentThread();
    waiters.add(me);
    try {
      for (;;) {
        Lane l = tryAcquire(all, start);
        if (l != null) {
          return l;
        }
        // A release after our enqueue unparks us (every waiter), so no wake-up is lost.
        LockSupport.park(this);
      }
    } finally {
      waiters.remove(me);
    }
  }

  void release(Lane lane) {
    if (lane.poisoned) {
      return; // left locked: its records are recovered at the next open
    }
    lane.unlock();
    if (!waiters.isEmpty()) {
      for (Thread t : waiters) {
        LockSupport.unpark(t);
      }
    }
  }

  // ---------------------------------------------------------------- checks

  /**
   * Checks that an 8-byte word may be named by a log record: aligned, and in the heap or among
   * the header's root words (the allocator words are the allocator's own).
   */
  void checkWord(long offset, String what) {
    if ((offset & 7) != 0 || !inLoggable(offset, 8, pool.size())) {
      throw new IllegalArgumentException(what + " " + offset + " is not an aligned word in the heap [" + pool.heapOffset() + ", " + pool.size() + ") or among the header's root words");
    }
  }

  void checkRange(long offset, long length, String what) {
    if (length <= 0 || !inLoggable(offset, length, pool.size())) {
      throw new IllegalArgumentException(what + " [" + offset + ", +" + length + ") is not a non-empty range in the heap [" + pool.heapOffset() + ", " + pool.size() + ") or among the header's root words");
    }
  }

  /** A range anywhere in the region (blocks a backend allocated are outside the heap). */
  void checkRegionRange(long offset, long length, String what) {
    long size = pool.memory().byteSize();
    if (length <= 0 || offset < 0 || offset > size - length) {
      throw new IllegalArgumentException(what + " [" + offset + ", +" + length + ") is not a non-empty range in the region [0, " + size + ")");
    }
  }

  boolean inLoggable(long offset, long length, long size) {
    long end = offset + length;
    if (offset < 0 || end < offset) {
      return false;
    }
    return (offset >= pool.heapOffset() && end <= size) || (offset >= mutableLo && end <= mutableHi);
  }

  /** The current mapping, grown if needed to cover {@code end}. */
  MemorySegment memoryCovering(long end) {
    MemorySegment m = pool.memory();
    if (m.byteSize() < end) {
      m = pool.memory(); // published after the offset we read: re-read
    }
    return m;
  }

  // ---------------------------------------------------------------- recovery

  /**
   * What {@link #recover()} found.
   *
   * @param rolledBack lanes whose undo log was rolled back
   * @param replayed lanes whose redo record was replayed
   * @param discarded lanes whose redo commit word did not match its entries (a record that was
   *     never complete) and was cleared without replaying
   */
  public record Recovery(int rolledBack, int replayed, int discarded) {}

  /**
   * Recovers every lane: per lane, undo rollback then redo replay (see the class comment). Runs
   * inside {@link Pool#open} before the pool is returned; it refuses to run once a lane has been
   * used.
   *
   * @return what was done
   * @throws CorruptPoolException if a record with a valid checksum names a word outside the heap
   *     and the header's root words
   */
  public Recovery recover() throws CorruptPoolException {
    if (used) {
      throw new IllegalStateException("lane recovery runs once, at open, before any lane is used");
    }
    int undone = 0;
    int replayed = 0;
    int discarded = 0;
    for (Lane lane : lanes) {
      if (Tx.recoverLane(this, lane, true)) {
        undone++;
      }
      int r = Redo.recoverLane(this, lane, true);
      if (r > 0) {
        replayed++;
      } else if (r < 0) {
        discarded++;
      }
    }
    return new Recovery(undone, replayed, discarded);
  }

  /**
   * Validates every lane's records without writing anything: {@link Pool#open} calls it before
   * it modifies the file, so a pool with a damaged lane is refused unchanged.
   *
   * @throws CorruptPoolException if a record with a valid checksum names a word outside the heap
   *     and the header's root words
   */
  public void check() throws CorruptPoolException {
    for (Lane lane : lanes) {
      Tx.recoverLane(this, lane, false);
      Redo.recoverLane(this, lane, false);
    }
  }

  CorruptPoolException corrupt(Lane lane, String what) {
    return new CorruptPoolException(pool.path() + ": lane " + lane.index + " at offset " + lane.offset + ": " + what + "; the file was damaged or was not written by pmhash");
  }

  static long word(MemorySegment m, long offset) {
    return Words.getAcquire(m, offset);
  }
}
