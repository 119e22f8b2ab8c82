package io.pmhash.schemes.group;

import static io.pmhash.schemes.group.GroupLayout.CELL_VALUE;
import static io.pmhash.schemes.group.GroupLayout.INFO_COUNT;
import static io.pmhash.schemes.group.GroupLayout.INFO_GROUP_SIZE;
import static io.pmhash.schemes.group.GroupLayout.INFO_MAGIC;
import static io.pmhash.schemes.group.GroupLayout.INFO_TABLE_SIZE;
import static io.pmhash.schemes.group.GroupLayout.INFO_VERSION;
import static io.pmhash.schemes.group.GroupLayout.INT;
import static io.pmhash.schemes.group.GroupLayout.LAYOUT_VERSION;
import static io.pmhash.schemes.group.GroupLayout.LONG;
import static io.pmhash.schemes.group.GroupLayout.MAGIC;

import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.hash.Hashing;
import java.lang.foreign.MemorySegment;

/**
 * Expansion and shrink: an extension of the paper, whose table has a fixed size ("the capacity of
 * the hash table needs to be expanded", §3.4, is all it says). Both rebuild the table into a new
 * block and switch the root, under every group lock of the old table and {@link
 * GroupTable#resizeLock}.
 *
 * <ol>
 *   <li>Take every group lock of the old table in ascending order: writers finish their operation
 *       on the old table or wait; optimistic readers keep reading it (it no longer changes).
 *   <li>Reserve a block for the new table (not owned yet: a crash leaks nothing), zero it and write
 *       its global info.
 *   <li>Rehash every record of the old table into it with plain stores (Algorithm 1 without the
 *       persists: nothing can see the block). If a group of the new table overflows, an expansion
 *       cancels the block and tries again at twice the size; a shrink gives up, releases the locks
 *       and is not tried again on this table.
 *   <li>PERSIST: the whole new block is durable before anything names it.
 *   <li>One allocator step (a redo record; one {@code pmemobj_publish} on an llpl pool, where the old
 *       block's free is a retire record) makes the new block owned, stores its offset into root 0
 *       and frees the old block: a crash leaves the old table or the new one, never both, never
 *       neither, and no leaked block. The old block is reused only after an epoch grace period,
 *       when no operation can still read it.
 *   <li>{@link GroupTable#current} names the new table; the old table's locks stay held forever,
 *       so a thread that still holds it and finds its group locked starts again on the new one.
 *       Readers never see the new table before it is complete, nor the old one after a write to
 *       the new one (a reader validating against a lock taken in step 1 retries).
 * </ol>
 */
final class GroupResize {
  private GroupResize() {}

  /**
   * Zeroes a reserved block and writes its global info (plain stores; the caller persists it).
   *
   * @param count the count to record (the clean-close count; not trusted after a crash)
   */
  static void format(Pool pool, long base, long cells, int groupSize, long count) {
    long bytes = GroupLayout.tableBytes(cells);
    MemorySegment m = pool.memory();
    m.asSlice(base, bytes).fill((byte) 0);
    LONG.set(m, base + INFO_MAGIC, MAGIC);
    INT.set(m, base + INFO_VERSION, LAYOUT_VERSION);
    LONG.set(m, base + INFO_GROUP_SIZE, (long) groupSize);
    LONG.set(m, base + INFO_TABLE_SIZE, cells);
    LONG.set(m, base + INFO_COUNT, count);
  }

  /**
   * Rebuilds the table at {@code cells} cells per level unless another thread already replaced
   * {@code seen}.
   *
   * @param t the table
   * @param seen the table block the caller found full (or sparse)
   * @param cells the new table size: {@code 2 N} (expansion) or {@code N / 2} (shrink)
   */
  static void resize(GroupTable t, GroupCells seen, long cells) {
    boolean grow = cells > seen.cells;
    t.resizeLock.lock();
    try {
      if (t.current != seen) {
        return;
      }
      if (grow && cells > GroupLayout.MAX_TABLE_SIZE) {
        throw new GroupFullException("group hashing cannot grow beyond " + GroupLayout.MAX_TABLE_SIZE + " cells per level");
      }
      seen.lockAll();
      boolean switched = false;
      try {
        Pool pool = t.pool;
        Persistence p = t.persistence;
        long n = cells;
        for (;;) {
          SchemeAllocator.Reserved r = pool.schemeAllocator().reserve(GroupLayout.tableBytes(n));
          GroupCells next = new GroupCells(r.offset(), n, seen.groupSize());
          format(pool, next.base, n, seen.groupSize(), t.size());
          MemorySegment m = pool.memory();
          if (!rehash(m, seen, next)) {
            pool.schemeAllocator().cancel(r);
            if (!grow) {
              t.noShrink = seen;
              return;
            }
            n *= 2;
            continue;
          }
          // PERSIST(resize step 4): the whole new table is durable before the step that names it
          p.flush(next.base, GroupLayout.tableBytes(n));
          p.drain();
          // resize step 5: new block owned, root 0 switched, old block freed: one atomic step
          try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
            pub.publish(r, pool.rootWord(0)).deferFree(seen.base);
            pub.commit();
          }
          t.current = next;
          switched = true;
          (grow ? t.expansions : t.shrinks).incrementAndGet();
          return;
        }
      } finally {
        if (!switched) {
          seen.unlockAll();
        }
      }
    } finally {
      t.resizeLock.unlock();
    }
  }

  /**
   * Step 3: every record of {@code from} into {@code to} (unpublished: plain stores, no persist),
   * with its DRAM fingerprint: the new table is searchable the moment it is published.
   */
  private static boolean rehash(MemorySegment m, GroupCells from, GroupCells to) {
    long words = from.capacity() >>> 6;
    for (long w = 0; w < words; w++) {
      long first = 64 * w;
      long bits = (long) LONG.get(m, from.bitmapWord(first));
      while (bits != 0) {
        long c = first + Long.numberOfTrailingZeros(bits);
        bits &= bits - 1;
        long key = from.key(m, c);
        long h = Hashing.hash(key);
        long free = to.freeCell(to.home(h));
        if (free < 0) {
          return false;
        }
        to.occupyByHash(free, h);
        long pair = to.pair(free);
        LONG.set(m, pair, key);
        LONG.set(m, pair + CELL_VALUE, from.value(m, c));
        long bw = to.bitmapWord(free);
        LONG.set(m, bw, (long) LONG.get(m, bw) | 1L << free);
      }
    }
    return true;
  }
}
