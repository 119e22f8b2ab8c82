package io.pmhash.schemes.group;

import static io.pmhash.schemes.group.GroupLayout.INFO_COUNT;
import static io.pmhash.schemes.group.GroupLayout.LONG;

import io.pmhash.core.Persistence;
import io.pmhash.core.PersistenceStats;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.concurrent.EpochReclaimer;
import io.pmhash.core.concurrent.Prefetch;
import io.pmhash.core.concurrent.UncheckedMemory;
import io.pmhash.core.concurrent.VersionLock;
import io.pmhash.core.hash.Hashing;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.LongLongConsumer;
import io.pmhash.map.TableStats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.util.ConcurrentModificationException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Group hashing ({@code "group"}): the public facade and the per-key operations. See {@link
 * io.pmhash.schemes.group} for the paper, the guarantees and the extensions; {@link GroupCells}
 * for the cell operations and the group locks; {@link GroupResize} for expansion and shrink;
 * {@link GroupRecovery} for Algorithm 4.
 *
 * <p>Every operation runs inside the pool's epoch ({@link EpochReclaimer#enter()}), so a table
 * block replaced by an expansion or shrink is freed only when no operation can still read it.
 */
public final class GroupTable implements LongHashTable {
  private static final int PUT = 0;
  private static final int PUT_IF_ABSENT = 1;
  private static final int REPLACE = 2;
  private static final int REPLACE_IF = 3;

  /** Record counter cells (a power of two), each in its own cache line. */
  private static final int COUNT_CELLS = 64;
  private static final int COUNT_STRIDE = 8;
  private static final VarHandle COUNT = MethodHandles.arrayElementVarHandle(long[].class).withInvokeExactBehavior();

  final Pool pool;
  final Persistence persistence;
  final EpochReclaimer epochs;
  /** Whether a full group grows the table (false: the paper's fixed-size table). */
  final boolean expand;
  /** The table block in use: replaced, never changed, by {@link GroupResize} under {@link #resizeLock}. */
  volatile GroupCells current;
  /** Serialises expansions, shrinks and {@link #forEach}. */
  final ReentrantLock resizeLock = new ReentrantLock();
  /** A table a shrink found no room for: no second attempt on it. */
  volatile GroupCells noShrink;
  private final long[] counts = new long[COUNT_CELLS * COUNT_STRIDE];
  final AtomicLong expansions = new AtomicLong();
  final AtomicLong shrinks = new AtomicLong();

  private GroupTable(Pool pool, GroupCells cells, boolean expand) {
    this.pool = pool;
    this.persistence = pool.persistence();
    this.epochs = pool.epochs();
    this.current = cells;
    this.expand = expand;
  }

  // ------------------------------------------------------------------ lifecycle

  /**
   * Builds an empty table in a fresh pool and publishes it into root 0.
   *
   * @param pool the pool, its header naming group hashing
   * @param groupSize G, cells per group: a power of two, 64..4096
   * @param expand whether a full group grows the table (false: inserts into a full group throw
   *     {@link GroupFullException}, as the paper's fixed-size table fails them)
   * @param capacity records to hold without an expansion: the smallest table with {@code 2N *
   *     0.75 >= capacity} (and N at least G) is built
   * @return the table
   */
  public static GroupTable create(Pool pool, int groupSize, boolean expand, long capacity) {
    GroupProvider.checkGroupSize(groupSize);
    if (pool.root(0) != 0) {
      throw new IllegalStateException("pool already holds a table (root 0 is set)");
    }
    long n = groupSize;
    while (n < GroupLayout.MAX_TABLE_SIZE && 2 * n * 3 / 4 < capacity) {
      n *= 2;
    }
    SchemeAllocator.Reserved r = pool.schemeAllocator().reserve(GroupLayout.tableBytes(n));
    GroupResize.format(pool, r.offset(), n, groupSize, 0);
    // PERSIST(create): the formatted block is durable before root 0 names it
    pool.persistence().persist(r.offset(), GroupLayout.tableBytes(n));
    pool.schemeAllocator().publish(r, pool.rootWord(0));
    return new GroupTable(pool, new GroupCells(r.offset(), n, groupSize), expand);
  }

  /**
   * Opens the table of a pool and, after a crash, recovers it (Algorithm 4, {@link
   * GroupRecovery}): O(1) after a clean shutdown, O(table size) after a crash. The DRAM
   * fingerprints ({@link GroupCells}) are rebuilt by the crash scan, or after a clean shutdown one
   * group at a time by the first operation on it.
   *
   * @param pool the pool
   * @return the table; it expands if the pool header's {@code expand} parameter is 1
   */
  public static GroupTable open(Pool pool) {
    GroupCells c = GroupRecovery.validate(pool);
    GroupTable t = new GroupTable(pool, c, pool.schemeParams()[1] == 1);
    t.counts[0] = pool.lastShutdownClean()
        ? (long) LONG.get(pool.memory(), c.base + INFO_COUNT)
        : GroupRecovery.recover(pool, c);
    return t;
  }

  @Override
  public void close() {
    if (!pool.isOpen()) {
      return;
    }
    GroupCells c = current;
    LONG.setRelease(pool.memory(), c.base + INFO_COUNT, size());
    // PERSIST(close): the count is durable before the pool marks the shutdown clean, the only
    // case in which an open trusts it
    persistence.persist(c.base + INFO_COUNT, 8);
    try {
      pool.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  // ------------------------------------------------------------------ reads

  @Override
  public long get(long key, long absent) {
    return read(key, absent, false);
  }

  @Override
  public boolean containsKey(long key) {
    return read(key, 0, true) != 0;
  }

  /**
   * Algorithm 2 under the group's version lock: snapshot, search, validate, retry. Writes nothing
   * persistent; takes a lock only to build a group's DRAM fingerprints, once, after a clean open.
   */
  private long read(long key, long absent, boolean contains) {
    long h = Hashing.hash(key);
    int fp = GroupCells.fingerprint(h);
    EpochReclaimer e = epochs;
    EpochReclaimer.Section section = e.enterSection();
    try {
      for (;;) {
        GroupCells t = current;
        long home = t.home(h);
        long g = t.groupOf(home);
        long lw = t.lockWordAt(g);
        int v = VersionLock.snapshotAt(lw);
        if (VersionLock.isLocked(v)) {
          Thread.onSpinWait();
          continue;
        }
        if (!t.built(g)) {
          buildFingerprints(t, g);
          continue;
        }
        MemorySegment m = pool.memory();
        long c;
        long value;
        if (t.cellsEnd <= m.byteSize()) {
          // by address (docs/persistence.md "Unchecked reads"): the fingerprints in t's DRAM
          // array, kept alive by the fence below; the cells in m, checked to cover them and taken
          // inside the epoch section
          long mbase = UncheckedMemory.base(m);
          c = t.findAt(mbase, key, home, fp);
          value = c < 0 ? absent : t.valueAt(mbase, c);
        } else {
          c = t.find(m, key, home, fp); // a mapping older than the table: the checked path reports it
          value = c < 0 ? absent : t.value(m, c);
        }
        boolean valid = VersionLock.unchangedAt(lw, v);
        Reference.reachabilityFence(t);
        if (valid) {
          return contains ? (c < 0 ? 0 : 1) : value;
        }
      }
    } finally {
      e.exit(section);
    }
  }

  /**
   * The first operation on a group after a clean open: builds its fingerprints under its lock
   * (unless the table was replaced meanwhile, or another thread built them first).
   */
  private void buildFingerprints(GroupCells t, long g) {
    if (t.lock(this, g)) {
      try {
        if (!t.built(g)) {
          t.buildFingerprints(pool.memory(), g);
        }
      } finally {
        t.unlock(g);
      }
    }
  }

  // ------------------------------------------------------------------ writes

  @Override
  public boolean put(long key, long value) {
    return write(PUT, key, 0, value);
  }

  @Override
  public boolean putIfAbsent(long key, long value) {
    return write(PUT_IF_ABSENT, key, 0, value);
  }

  @Override
  public boolean replace(long key, long value) {
    return write(REPLACE, key, 0, value);
  }

  @Override
  public boolean replace(long key, long expected, long value) {
    return write(REPLACE_IF, key, expected, value);
  }

  private boolean write(int mode, long key, long expected, long value) {
    long h = Hashing.hash(key);
    int fp = GroupCells.fingerprint(h);
    EpochReclaimer e = epochs;
    EpochReclaimer.Section section = e.enterSection();
    try {
      for (;;) {
        GroupCells t = current;
        long home = t.home(h);
        long g = t.groupOf(home);
        MemorySegment m = pool.memory();
        Prefetch.keep(t.prefetchForPut(m, home));
        if (!t.lock(this, g)) {
          continue;
        }
        try {
          if (!t.built(g)) {
            t.buildFingerprints(m, g);
          }
          long c = t.find(m, key, home, fp);
          if (c >= 0) {
            if (mode == PUT_IF_ABSENT || mode == REPLACE_IF && t.value(m, c) != expected) {
              return false;
            }
            t.update(m, persistence, c, value);
            return mode != PUT;
          }
          if (mode == REPLACE || mode == REPLACE_IF) {
            return false;
          }
          long free = t.freeCell(home);
          if (free >= 0) {
            // Alg. 1 line 8's count, kept in DRAM (see the package documentation) and so counted
            // before the persists rather than after the bit (docs/persistence.md, "Counters
            // before the persists")
            addCount(g, 1);
            t.insert(m, persistence, free, home, key, value, fp);
            return true;
          }
        } finally {
          t.unlock(g);
        }
        groupFull(t, g);
      }
    } finally {
      e.exit(section);
    }
  }

  /** Algorithm 1 line 25: the group is full. Grows the table, or fails the insert. */
  private void groupFull(GroupCells t, long g) {
    if (!expand) {
      throw new GroupFullException(String.format(
          "group hashing: group %d of %d (%d cells per group, %d cells per level) is full at load factor %.3f, and the table"
              + " was created with expand=0; create it with expand=1 or a larger initial capacity. Nothing was changed.",
          g, t.groups, t.groupSize(), t.cells, (double) size() / t.capacity()));
    }
    GroupResize.resize(this, t, 2 * t.cells);
  }

  @Override
  public boolean remove(long key) {
    return delete(key, false, 0);
  }

  @Override
  public boolean remove(long key, long expected) {
    return delete(key, true, expected);
  }

  private boolean delete(long key, boolean conditional, long expected) {
    long h = Hashing.hash(key);
    int fp = GroupCells.fingerprint(h);
    EpochReclaimer e = epochs;
    EpochReclaimer.Section section = e.enterSection();
    GroupCells t;
    long g;
    try {
      for (;;) {
        t = current;
        long home = t.home(h);
        g = t.groupOf(home);
        MemorySegment m = pool.memory();
        Prefetch.keep(t.prefetchForRemove(m, home));
        if (t.lock(this, g)) {
          try {
            if (!t.built(g)) {
              t.buildFingerprints(m, g);
            }
            long c = t.find(m, key, home, fp);
            if (c < 0 || conditional && t.value(m, c) != expected) {
              return false;
            }
            addCount(g, -1); // before the persist, as in the insert
            t.delete(m, persistence, c);
            break;
          } finally {
            t.unlock(g);
          }
        }
      }
    } finally {
      e.exit(section);
    }
    if ((g & 63) == 0 && expand) {
      maybeShrink(t);
    }
    return true;
  }

  /** Shrinks to half when the table is below 1/8 full (checked on one delete in 64 groups' worth). */
  private void maybeShrink(GroupCells t) {
    if (t.cells > t.groupSize() && size() * 8 < t.capacity() && noShrink != t) {
      GroupResize.resize(this, t, t.cells / 2);
    }
  }

  // ------------------------------------------------------------------ count

  /** @return the counter cell's previous value */
  private long addCount(long g, long delta) {
    return (long) COUNT.getAndAdd(counts, (int) (g & (COUNT_CELLS - 1)) * COUNT_STRIDE, delta);
  }

  @Override
  public long size() {
    long n = 0;
    for (int i = 0; i < counts.length; i += COUNT_STRIDE) {
      n += (long) COUNT.getOpaque(counts, i);
    }
    return n;
  }

  // ------------------------------------------------------------------ whole table

  /**
   * {@inheritDoc}
   *
   * <p>Each group is copied optimistically under its version lock (never written) and its pairs
   * handed to the action after the copy. No expansion or shrink runs meanwhile; the action may
   * read the table but must not write to it.
   */
  @Override
  public void forEach(LongLongConsumer action) {
    resizeLock.lock();
    epochs.enter();
    try {
      GroupCells t = current;
      int g2 = 2 * t.groupSize();
      long[] keys = new long[g2];
      long[] values = new long[g2];
      for (long g = 0; g < t.groups; g++) {
        int n = copyGroup(t, g, keys, values);
        for (int i = 0; i < n; i++) {
          action.accept(keys[i], values[i]);
        }
      }
    } finally {
      epochs.exit();
      resizeLock.unlock();
    }
  }

  /** Copies the records of group {@code g} (both levels) under its version lock. */
  private int copyGroup(GroupCells t, long g, long[] keys, long[] values) {
    long lw = t.lockWordAt(g);
    for (;;) {
      int v = VersionLock.snapshotAt(lw);
      if (VersionLock.isLocked(v)) {
        if (current != t) {
          throw new ConcurrentModificationException("group hashing: the action of forEach wrote to the table and it was resized");
        }
        Thread.onSpinWait();
        continue;
      }
      MemorySegment m = pool.memory();
      int n = 0;
      int words = t.groupSize() >>> 6;
      for (int level = 0; level < 2; level++) {
        long first = level == 0 ? g << t.groupBits : t.level2First(g);
        for (int w = 0; w < words; w++) {
          long bits = (long) LONG.getAcquire(m, t.bitmapWord(first + 64L * w));
          while (bits != 0) {
            long c = first + 64L * w + Long.numberOfTrailingZeros(bits);
            bits &= bits - 1;
            keys[n] = t.key(m, c);
            values[n++] = t.value(m, c);
          }
        }
      }
      if (VersionLock.unchangedAt(lw, v)) {
        Reference.reachabilityFence(t);
        return n;
      }
    }
  }

  /**
   * The current table size.
   *
   * @return N, cells per level
   */
  public long tableSize() {
    return current.cells;
  }

  /**
   * The group size.
   *
   * @return G, cells per group
   */
  public int groupSize() {
    return current.groupSize();
  }

  @Override
  public double loadFactor() {
    return (double) size() / current.capacity();
  }

  @Override
  public TableStats stats() {
    GroupCells t = current;
    long size = size();
    long slots = t.capacity();
    PersistenceStats ps = persistence.stats();
    Map<String, Long> d = new LinkedHashMap<>();
    d.put("groupSize", (long) t.groupSize());
    d.put("tableSize", t.cells);
    d.put("groups", t.groups);
    d.put("expand", expand ? 1L : 0L);
    d.put("expansions", expansions.get());
    d.put("shrinks", shrinks.get());
    return new TableStats(GroupProvider.NAME, size, slots, (double) size / slots, pool.size(), ps.linesFlushed(), ps.drains(), d);
  }

  @Override
  public Pool pool() {
    return pool;
  }

  @Override
  public String scheme() {
    return GroupProvider.NAME;
  }

  @Override
  public String toString() {
    GroupCells t = current;
    return "group table (G " + t.groupSize() + ", N " + t.cells + ") in " + pool;
  }
}
