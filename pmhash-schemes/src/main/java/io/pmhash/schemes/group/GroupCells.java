package io.pmhash.schemes.group;

import static io.pmhash.schemes.group.GroupLayout.CELL_BYTES;
import static io.pmhash.schemes.group.GroupLayout.CELL_VALUE;
import static io.pmhash.schemes.group.GroupLayout.LONG;

import io.pmhash.core.Persistence;
import io.pmhash.core.concurrent.VersionLock;
import java.lang.foreign.MemorySegment;

/**
 * One table block as the hot path sees it: its geometry, the addressing of cells and bits, the
 * per-cell operations of Algorithms 1–3, and the group locks. Immutable; an expansion or shrink
 * replaces it (never changes it). Cells are numbered 0 .. 2N-1 across both levels ({@link
 * GroupLayout}).
 *
 * <h2>Group locks (an extension of the paper)</h2>
 *
 * The paper's table is single-threaded. Each group has a {@link VersionLock} (Dash §4.4) held by
 * the writer of any cell of the group: a key's cells (its level-1 cell and the level-2 group) all
 * belong to one group, so a writer takes exactly one lock. Readers snapshot the version, read,
 * validate and retry; they never write. The locks live in DRAM, 8 bytes each (128 KiB for the 16 Ki
 * groups of a 128 MiB table: they stay in cache), not in the table block: nothing in the
 * persistent image needs resetting after a crash, and the layout stays the paper's. Eight groups
 * share a cache line of locks; with random keys two threads rarely touch neighbouring groups at
 * once, and a writer's CAS costs a neighbour's reader a cache miss, never a retry. A table replaced by an expansion or
 * shrink keeps every lock held forever: a thread that finds a lock held and the table replaced
 * starts again on the new one.
 */
final class GroupCells {
  /** Bytes per lock: a 4-byte VersionLock word in an 8-byte slot, eight groups to a cache line. */
  private static final int LOCK_STRIDE_BYTES = 8;

  /** Offset of the table block. */
  final long base;
  /** N, cells per level. */
  final long cells;
  /** log2 N. */
  final int cellBits;
  /** log2 G. */
  final int groupBits;
  /** Number of groups, N / G. */
  final long groups;
  /** Offset of the bitmap area. */
  final long bitmaps;
  /** Offset of cell 0 (level 1); cell c is at {@code level1 + 16 c}. */
  final long level1;
  /** The group locks, in DRAM. */
  final MemorySegment locks;

  GroupCells(long base, long cells, int groupSize) {
    this.base = base;
    this.cells = cells;
    this.cellBits = Long.numberOfTrailingZeros(cells);
    this.groupBits = Integer.numberOfTrailingZeros(groupSize);
    this.groups = cells >>> groupBits;
    this.bitmaps = base + GroupLayout.BITMAPS;
    this.level1 = base + GroupLayout.level1(cells);
    this.locks = MemorySegment.ofArray(new long[Math.toIntExact(groups * (LOCK_STRIDE_BYTES / 8))]);
  }

  /** @return G */
  int groupSize() {
    return 1 << groupBits;
  }

  /** @return the record capacity, 2N */
  long capacity() {
    return 2 * cells;
  }

  /** @return the level-1 cell a hash addresses: its top log2 N bits */
  long home(long h) {
    return h >>> (64 - cellBits);
  }

  /** @return the group of a level-1 cell */
  long groupOf(long home) {
    return home >>> groupBits;
  }

  /** @return the pool offset of cell {@code c}'s pair */
  long pair(long c) {
    return level1 + c * CELL_BYTES;
  }

  /** @return the pool offset of the bitmap word holding cell {@code c}'s bit */
  long bitmapWord(long c) {
    long inLevel = c & (cells - 1);
    long group = inLevel >>> groupBits;
    long level2 = c >= cells ? 1L << (groupBits - 3) : 0;
    return bitmaps + (group << (groupBits - 2)) + level2 + ((inLevel >>> 3) & ((1L << (groupBits - 3)) - 8));
  }

  /** @return the pool offset of the first level-2 bitmap word of group {@code g} */
  long level2Bits(long g) {
    return bitmaps + (g << (groupBits - 2)) + (1L << (groupBits - 3));
  }

  /** @return the cell number of the first level-2 cell of group {@code g} */
  long level2First(long g) {
    return cells + (g << groupBits);
  }

  /** @return the offset of group {@code g}'s lock word in {@link #locks} */
  static long lockOffset(long g) {
    return g * LOCK_STRIDE_BYTES;
  }

  // ------------------------------------------------------------------ Algorithms 1–3

  /**
   * Finds a key (Algorithm 2): its level-1 cell, then the occupied cells of its level-2 group,
   * comparing only cells whose bit is set.
   *
   * @param home the key's level-1 cell
   * @return the cell number, or -1
   */
  long find(MemorySegment m, long key, long home) {
    if (((long) LONG.getAcquire(m, bitmapWord(home)) & 1L << home) != 0 && (long) LONG.get(m, pair(home)) == key) {
      return home;
    }
    return findLevel2(m, key, groupOf(home));
  }

  private long findLevel2(MemorySegment m, long key, long g) {
    long words = level2Bits(g);
    long first = level2First(g);
    int n = 1 << (groupBits - 6);
    for (int w = 0; w < n; w++) {
      long bits = (long) LONG.getAcquire(m, words + 8L * w);
      while (bits != 0) {
        long c = first + 64L * w + Long.numberOfTrailingZeros(bits);
        if ((long) LONG.get(m, pair(c)) == key) {
          return c;
        }
        bits &= bits - 1;
      }
    }
    return -1;
  }

  /**
   * A free cell for a new key (Algorithm 1): its level-1 cell if free, else the first free cell of
   * its level-2 group. Under the group lock.
   *
   * @return the cell number, or -1 if the group is full
   */
  long freeCell(MemorySegment m, long home) {
    if (((long) LONG.get(m, bitmapWord(home)) & 1L << home) == 0) {
      return home;
    }
    long g = groupOf(home);
    long words = level2Bits(g);
    int n = 1 << (groupBits - 6);
    for (int w = 0; w < n; w++) {
      long free = ~(long) LONG.get(m, words + 8L * w);
      if (free != 0) {
        return level2First(g) + 64L * w + Long.numberOfTrailingZeros(free);
      }
    }
    return -1;
  }

  /** @return the value of an occupied cell */
  long value(MemorySegment m, long c) {
    return (long) LONG.get(m, pair(c) + CELL_VALUE);
  }

  /** @return the key of a cell */
  long key(MemorySegment m, long c) {
    return (long) LONG.get(m, pair(c));
  }

  /**
   * Algorithm 1 lines 4–9 on a free cell, under the group lock: the pair, then the bit.
   */
  void insert(MemorySegment m, Persistence p, long c, long key, long value) {
    long pair = pair(c);
    LONG.set(m, pair, key);
    LONG.set(m, pair + CELL_VALUE, value);
    // PERSIST(§3.4 Alg. 1 lines 4-5): the pair is durable before the bit that publishes it, so
    // a durable bit never names a torn or stale pair (invariant I1)
    p.persist(pair, CELL_BYTES);
    long w = bitmapWord(c);
    LONG.setRelease(m, w, (long) LONG.get(m, w) | 1L << c);
    // PERSIST(§3.4 Alg. 1 lines 6-7): the bit, one aligned 8-byte store, commits the insert; it
    // is durable before put returns (a completed insert survives any crash)
    p.persist(w, 8);
  }

  /**
   * Algorithm 3 on an occupied cell, under the group lock: the bit first, then the pair.
   */
  void delete(MemorySegment m, Persistence p, long c) {
    long w = bitmapWord(c);
    LONG.setRelease(m, w, (long) LONG.get(m, w) & ~(1L << c));
    // PERSIST(§3.4 Alg. 3 lines 4-5): the cleared bit commits the delete before remove returns
    // (a removed key never comes back); nothing else needs to be durable
    p.persist(w, 8);
    // Alg. 3 lines 6-7 without their persist: the pair of a cell whose bit is 0 is never read, and
    // recovery (Alg. 4) clears whatever of it is still durable
    long pair = pair(c);
    LONG.set(m, pair, 0L);
    LONG.set(m, pair + CELL_VALUE, 0L);
  }

  /**
   * An update of a present key, under the group lock: the value in place, one aligned 8-byte store
   * (an extension: the paper has no update).
   */
  void update(MemorySegment m, Persistence p, long c, long value) {
    long v = pair(c) + CELL_VALUE;
    LONG.setRelease(m, v, value);
    // PERSIST(update): the 8-byte value is failure-atomic; durable before put returns
    p.persist(v, 8);
  }

  // ------------------------------------------------------------------ locks

  /**
   * Takes group {@code g}'s lock unless this table has been replaced.
   *
   * @param owner the table whose {@code current} is checked while the lock is held by another
   * @return true if the lock is held by the caller, false if the table was replaced meanwhile
   */
  boolean lock(GroupTable owner, long g) {
    long lo = lockOffset(g);
    for (;;) {
      if (VersionLock.tryLock(locks, lo)) {
        return true;
      }
      if (owner.current != this) {
        return false;
      }
      Thread.onSpinWait();
    }
  }

  void unlock(long g) {
    VersionLock.unlock(locks, lockOffset(g));
  }

  /** Takes every group lock in ascending order (expansion, shrink); writers hold at most one. */
  void lockAll() {
    for (long g = 0; g < groups; g++) {
      VersionLock.lock(locks, lockOffset(g));
    }
  }

  /** Releases every group lock (a shrink that found no room). */
  void unlockAll() {
    for (long g = groups - 1; g >= 0; g--) {
      VersionLock.unlock(locks, lockOffset(g));
    }
  }
}
