package io.pmhash.schemes.group;

import static io.pmhash.schemes.group.GroupLayout.CELL_VALUE;
import static io.pmhash.schemes.group.GroupLayout.INFO_GROUP_SIZE;
import static io.pmhash.schemes.group.GroupLayout.INFO_MAGIC;
import static io.pmhash.schemes.group.GroupLayout.INFO_TABLE_SIZE;
import static io.pmhash.schemes.group.GroupLayout.INFO_VERSION;
import static io.pmhash.schemes.group.GroupLayout.INT;
import static io.pmhash.schemes.group.GroupLayout.LAYOUT_VERSION;
import static io.pmhash.schemes.group.GroupLayout.LONG;
import static io.pmhash.schemes.group.GroupLayout.MAGIC;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.hash.Hashing;
import io.pmhash.schemes.internal.Damage;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;

/**
 * Opening and recovery.
 *
 * <ol>
 *   <li>The pool has already replayed its lanes: an expansion or shrink whose allocator step
 *       committed is complete, one that did not is gone (its block was only reserved, so nothing
 *       leaks). Nothing at this level is half done but single cells.
 *   <li>{@link #validate}: root 0 names an owned block large enough for the geometry its global
 *       info states (magic, version, G a power of two in range and equal to the pool header's, N a
 *       power of two, G ≤ N); else an {@link UncheckedIOException} wrapping a {@link
 *       CorruptPoolException}. Nothing is written.
 *   <li>After a clean shutdown the count written at close is used: O(1). The DRAM fingerprints
 *       ({@link GroupCells}) are built one group at a time, by the first operation on each.
 *   <li>After a crash, {@link #recover} is Algorithm 4: scan the whole table; a cell whose bit is 0
 *       and whose pair is not zero (a delete whose zeroing was not durable, or an insert that
 *       crashed before its bit) is reset to zero; the set bits are counted (a population count per
 *       bitmap word). Reads every cell: O(table size), as the paper's Table 3 measures. Writes
 *       nothing persistent that matters, so a crash during recovery is recovered by running it
 *       again. Deviations: the resets are not persisted (Alg. 4 line 7) because no code reads the
 *       pair of a free cell; the count is kept in DRAM and written at the next clean close (Alg. 4
 *       lines 19–20 persist it at once; nothing would read it before then). The same scan sets the
 *       DRAM fingerprint of every occupied cell.
 * </ol>
 */
final class GroupRecovery {
  private GroupRecovery() {}

  private static UncheckedIOException corrupt(Pool pool, String message) {
    String where = pool.path() == null ? "volatile pool" : pool.path().toString();
    return new UncheckedIOException(new CorruptPoolException(where + ": " + message));
  }

  static GroupCells validate(Pool pool) {
    long base = pool.root(0);
    MemorySegment m = pool.memory();
    if (base == 0) {
      throw corrupt(pool, "no group table (root 0 is empty): its create was interrupted; delete the file and create it again");
    }
    SchemeAllocator a = pool.schemeAllocator();
    // on a backend's allocator (llpl: PMDK) an owned 64-byte aligned block of it; a group pool made
    // on llpl before its blocks were PMDK objects has its table in pmhash's heap and ends here
    if (Damage.outsideBlocks(pool, a, base, GroupLayout.INFO_BYTES) || (base & 63) != 0) {
      throw corrupt(pool, "group: root 0 (" + base + ") does not name a table block in the heap"
          + (a == pool.allocator().schemeAllocator() ? "" : " of the pool's backend allocator (a group pool made on llpl"
              + " before its blocks were PMDK objects is refused; recreate it and reload)"));
    }
    if ((long) LONG.get(m, base + INFO_MAGIC) != MAGIC) {
      throw corrupt(pool, "group: root 0 does not point at a group table (bad magic at " + base + ")");
    }
    int v = (int) INT.get(m, base + INFO_VERSION);
    if (v != LAYOUT_VERSION) {
      throw corrupt(pool, "group: table layout version " + v + ", expected " + LAYOUT_VERSION);
    }
    long g = (long) LONG.get(m, base + INFO_GROUP_SIZE);
    long[] params = pool.schemeParams();
    if (g < GroupLayout.MIN_GROUP_SIZE || g > GroupLayout.MAX_GROUP_SIZE || Long.bitCount(g) != 1
        || params.length < 2 || params[0] != g || (params[1] >>> 1) != 0) {
      throw corrupt(pool, "group: group size " + g + " is not a power of two in " + GroupLayout.MIN_GROUP_SIZE + ".."
          + GroupLayout.MAX_GROUP_SIZE + ", or differs from the pool header's, or the header's expand flag is not 0 or 1");
    }
    long n = (long) LONG.get(m, base + INFO_TABLE_SIZE);
    if (n < g || n > GroupLayout.MAX_TABLE_SIZE || Long.bitCount(n) != 1) {
      throw corrupt(pool, "group: table size " + n + " is not a power of two in " + g + ".." + GroupLayout.MAX_TABLE_SIZE);
    }
    long bytes = GroupLayout.tableBytes(n);
    if (!a.owned(base) || a.blockSize(base) < bytes) {
      throw corrupt(pool, "group: the table block at " + base + " is not an owned block of " + bytes + " bytes");
    }
    return new GroupCells(base, n, (int) g, false);
  }

  /**
   * After a crash: Algorithm 4, and the DRAM fingerprints of every group. One pass over every
   * bitmap word: a set bit gives its cell's fingerprint, from the key's hash; a clear bit whose
   * pair is not zero has its pair reset.
   *
   * @return the records: the bits set
   */
  static long recover(Pool pool, GroupCells t) {
    MemorySegment m = pool.memory();
    long count = 0;
    long words = t.capacity() >>> 6;
    for (long w = 0; w < words; w++) {
      long first = 64 * w;
      long bits = (long) LONG.get(m, t.bitmapWord(first));
      count += Long.bitCount(bits);
      for (long set = bits; set != 0; set &= set - 1) {
        long c = first + Long.numberOfTrailingZeros(set);
        t.occupyByHash(c, Hashing.hash(t.key(m, c)));
      }
      for (long free = ~bits; free != 0; free &= free - 1) {
        long pair = t.pair(first + Long.numberOfTrailingZeros(free));
        if ((long) LONG.get(m, pair) != 0 || (long) LONG.get(m, pair + CELL_VALUE) != 0) {
          // Alg. 4 lines 5-6: reset the pair of a free cell. Not persisted (line 7): no code reads
          // the pair of a cell whose bit is 0, so its durable content does not matter
          LONG.set(m, pair, 0L);
          LONG.set(m, pair + CELL_VALUE, 0L);
        }
      }
    }
    t.markAllBuilt();
    return count;
  }
}
