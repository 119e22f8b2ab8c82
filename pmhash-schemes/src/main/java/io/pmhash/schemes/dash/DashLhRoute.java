package io.pmhash.schemes.dash;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * Dash-LH's segment offsets in DRAM, by segment number: what a lookup would otherwise compute
 * from its segment number through the pool's directory of segment arrays ({@link
 * DashLhLayout#entryOf}, that entry's load, {@link DashLhLayout#indexInArray}, a multiplication),
 * kept so that a lookup's route to its first cache miss is one load from an array of 8 bytes a
 * segment, as Dash-EH's is one load from its directory. That route is where a search spends the
 * instructions that decide whether the next search's misses overlap its own
 * (docs/format/dash-lh.md, "The route before the first miss").
 *
 * <p>Derived data, never persisted: empty when a table opens (so the open stays O(1)); an array's
 * entries are filled when the array is allocated ({@link DashLhSplit}), and those of the arrays
 * that existed at open by the first lookup that finds one empty ({@link DashLhTable}'s {@code
 * locateAt}). An entry is 0 when not known; a pool offset is never 0 (the pool header is there).
 *
 * <p><b>Why an entry is never stale.</b> Every write here (a fill, a clear, the growth of the
 * array) is made holding the table's {@code arrayLock}, which every change of the pool's
 * directory of arrays holds too (allocation and freeing, {@link DashLhSplit}, {@link
 * DashLhMerge}). A fill reads the directory entry under that lock (or is the allocation that
 * writes it), so it names the segment of the array the directory names at that moment. Before
 * the step that frees an array commits, its entries are cleared ({@link #clear}, under the same
 * hold), and the free itself waits for the epoch reclaimer: a reader that read an entry before
 * it was cleared is inside its epoch section, so the memory the entry names is not reused until
 * that reader leaves, exactly as for a reader that read the directory entry before it was
 * cleared. A grown array is a copy made under
 * the lock, so no clear is lost, and a reader that read the old array's reference did so inside a
 * section that began before the growth. Readers still check what an entry names (its bounds
 * against their mapping, the segment's shape and recovery version), as they check what the
 * directory gives them.
 */
final class DashLhRoute {
  private static final VarHandle ENTRY = MethodHandles.arrayElementVarHandle(long[].class);
  /** Enough for the first array of the largest {@code firstArray} and a few rounds beyond it. */
  private static final int INITIAL_ENTRIES = 1 << 12;
  /**
   * The most segment numbers a route holds (128 MiB of DRAM, for tables of about 280 GB with 2
   * stash buckets); lookups of segments beyond go through the directory each time.
   */
  static final long MAX_ENTRIES = 1L << 24;

  private volatile long[] offsets = new long[INITIAL_ENTRIES];

  /**
   * @param s a segment number
   * @return the pool offset of segment {@code s}, or 0 if this route does not know it
   */
  long offset(long s) {
    long[] o = offsets;
    return s >= 0 && s < o.length ? (long) ENTRY.getAcquire(o, (int) s) : 0;
  }

  /**
   * Records segment {@code s} at {@code seg}. The caller holds the table's {@code arrayLock} and
   * read {@code seg}'s array from the pool's directory while holding it. Segment numbers from
   * {@link #MAX_ENTRIES} on are not recorded.
   *
   * @param s a segment number, at least 0
   * @param seg its pool offset, positive
   */
  void fill(long s, long seg) {
    if (s < 0 || seg <= 0) {
      throw new IllegalArgumentException("dash-lh route: segment " + s + " at offset " + seg);
    }
    if (s >= MAX_ENTRIES) {
      return;
    }
    long[] o = offsets;
    if (s >= o.length) {
      o = Arrays.copyOf(o, (int) Math.max(2L * o.length, Long.highestOneBit(s) << 1));
      offsets = o; // volatile: the copy's entries before its reference
    }
    ENTRY.setRelease(o, (int) s, seg);
  }

  /**
   * Forgets segments {@code first .. first + count - 1}: the segments of an array about to be
   * freed (only that array's offsets are ever filled for them, {@link DashLhLayout#entryOf}). The
   * caller holds the table's {@code arrayLock}.
   *
   * @param first the array's first segment number ({@link DashLhLayout#firstSegmentOf})
   * @param count its segments
   */
  void clear(long first, long count) {
    long[] o = offsets;
    for (long s = Math.max(0, first), end = Math.min(o.length, first + count); s < end; s++) {
      ENTRY.setRelease(o, (int) s, 0L);
    }
  }

  /** @return the number of segment numbers the route has room for, for tests */
  int capacity() {
    return offsets.length;
  }
}
