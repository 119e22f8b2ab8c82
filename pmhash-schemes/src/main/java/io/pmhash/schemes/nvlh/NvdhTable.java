package io.pmhash.schemes.nvlh;

import static io.pmhash.schemes.nvlh.NvdhLayout.DELETED;
import static io.pmhash.schemes.nvlh.NvdhLayout.EMPTY;
import static io.pmhash.schemes.nvlh.NvdhLayout.FULL;
import static io.pmhash.schemes.nvlh.NvdhLayout.HDR_CLEAN_SIZE;
import static io.pmhash.schemes.nvlh.NvdhLayout.HDR_CLEAN_TOMBSTONES;
import static io.pmhash.schemes.nvlh.NvdhLayout.HDR_K;
import static io.pmhash.schemes.nvlh.NvdhLayout.HDR_MAGIC;
import static io.pmhash.schemes.nvlh.NvdhLayout.HDR_TABLE;
import static io.pmhash.schemes.nvlh.NvdhLayout.HDR_VERSION;
import static io.pmhash.schemes.nvlh.NvdhLayout.LONG;
import static io.pmhash.schemes.nvlh.NvdhLayout.PAIR_BYTES;
import static io.pmhash.schemes.nvlh.NvdhLayout.PAIR_VALUE;

import io.pmhash.core.Persistence;
import io.pmhash.core.PersistenceStats;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.hash.Hashing;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.LongLongConsumer;
import io.pmhash.map.TableStats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.locks.StampedLock;

/**
 * NVDH ({@code "nvdh"}), the baseline of the NVLH paper (§IV): persistent open addressing with
 * double hashing that rehashes everything into a larger table when it fills. Small on purpose:
 * it is the comparison point whose stop-the-world rehash gives the maximum latencies NVLH's
 * one-bucket splits avoid. Layout: {@link NvdhLayout}.
 *
 * <h2>Probing</h2>
 *
 * Slot {@code j} of probe {@code t} is {@code (h1 + t * step) mod 2^k} with {@code h1 =
 * Hashing.hash(key)} and {@code step = Hashing.hash(key, SEED2) | 1} (odd, so the probe visits
 * every slot). A lookup stops at an empty slot and skips tombstones; an insert takes the first
 * tombstone it passed, else the empty slot it stopped at.
 *
 * <h2>Persist order</h2>
 *
 * <ol>
 *   <li>Insert (2 drains, 2 lines): PERSIST(nvdh insert 1) the pair, then PERSIST(nvdh insert 2)
 *       the slot's state word (one atomic 8-byte store) commits it.
 *   <li>Update (1/1): the 8-byte value in place.
 *   <li>Delete (1/1): the state word marks the slot deleted.
 *   <li>With {@code transactions} (the paper's NVDH, §IV: "consistency overheads ... about 62 %"
 *       for its inserts, which it pays in durable transactions): insert, update and delete each
 *       run as one undo-log transaction ({@link NvlhTxn}, the seam NVLH uses): the ranges they
 *       change are snapshotted, changed, and committed together; an insert costs 4 drains (two
 *       snapshots, the commit's two), an update or delete 3. The log-free orders above are the
 *       default: a stronger baseline than the paper's, so NVLH is measured against both.
 *   <li>Rehash, when records plus tombstones would pass 3/4 of the slots: a new table (twice
 *       the slots, or the same number when tombstones are most of the load) is reserved (not
 *       owned: a crash leaks nothing), every record inserted with plain stores, the whole block
 *       flushed and drained once, then one allocator publication makes it owned, sets the
 *       header's table and k together and frees the old table: the root switches atomically.
 *       O(records), which is the point of the baseline.
 * </ol>
 *
 * <h2>Concurrency</h2>
 *
 * One {@link StampedLock}: reads share it, writes and rehashes take it exclusively. Simple and
 * correct; it does not scale with writers, which the paper's single-threaded comparison does not
 * need.
 */
public final class NvdhTable implements LongHashTable {
  /** Seed of the step hash. */
  static final long SEED2 = 0x5bd1e9955bd1e995L;

  final Pool pool;
  final Persistence persistence;
  final long header;
  /** Whether writes run as durable transactions (the paper's NVDH) rather than log-free. */
  final boolean transactional;
  private final NvlhTxn.Factory txns;
  private final StampedLock lock = new StampedLock();
  /** Guarded by {@link #lock}. */
  long table;
  int k;
  long size;
  long tombstones;
  long rehashes;

  private NvdhTable(Pool pool, long header, long table, int k, boolean transactional) {
    this.pool = pool;
    this.persistence = pool.persistence();
    this.header = header;
    this.transactional = transactional;
    this.txns = NvlhTxn.undoLog(pool);
    this.table = table;
    this.k = k;
  }

  /**
   * Builds an empty table in a fresh pool.
   *
   * @param pool the pool
   * @param capacity records to hold before the first rehash
   * @return the table
   */
  public static NvdhTable create(Pool pool, long capacity) {
    return create(pool, capacity, false);
  }

  /**
   * Builds an empty table in a fresh pool.
   *
   * @param pool the pool
   * @param capacity records to hold before the first rehash
   * @param transactional whether writes run as durable transactions (the paper's NVDH)
   * @return the table
   */
  public static NvdhTable create(Pool pool, long capacity, boolean transactional) {
    if (pool.root(0) != 0) {
      throw new IllegalStateException("pool already holds a table (root 0 is set)");
    }
    int k = NvdhLayout.MIN_K;
    while (k < NvdhLayout.MAX_K && (1L << k) * 3 / 4 < capacity) {
      k++;
    }
    SchemeAllocator.Reserved hdr = pool.schemeAllocator().reserve(NvdhLayout.TABLE_HEADER.byteSize());
    SchemeAllocator.Reserved tab = pool.schemeAllocator().reserve(NvdhLayout.tableBytes(k));
    MemorySegment m = pool.memory();
    m.asSlice(tab.offset(), NvdhLayout.tableBytes(k)).fill((byte) 0);
    long h = hdr.offset();
    m.asSlice(h, NvdhLayout.TABLE_HEADER.byteSize()).fill((byte) 0);
    LONG.set(m, h + HDR_MAGIC, NvdhLayout.MAGIC);
    NvdhLayout.INT.set(m, h + HDR_VERSION, NvdhLayout.LAYOUT_VERSION);
    LONG.set(m, h + HDR_TABLE, tab.offset());
    LONG.set(m, h + HDR_K, (long) k);
    LONG.set(m, h + HDR_CLEAN_SIZE, -1L); // no clean count until a close writes one
    Persistence p = pool.persistence();
    // PERSIST(nvdh create): the empty table and the header durable before root 0 names them.
    p.flush(tab.offset(), NvdhLayout.statesBytes(k));
    p.persist(h, NvdhLayout.TABLE_HEADER.byteSize());
    try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
      pub.publish(tab).publish(hdr, pool.rootWord(0));
      pub.commit();
    }
    return new NvdhTable(pool, h, tab.offset(), k, transactional);
  }

  /**
   * Opens the table of a pool: validates the header and table; after a crash counts records and
   * tombstones by a scan of the state words (the only recovery a rehash-by-publication needs).
   *
   * @param pool the pool
   * @return the table
   */
  public static NvdhTable open(Pool pool) {
    return open(pool, false);
  }

  /**
   * Opens the table of a pool, as {@link #open(Pool)}.
   *
   * @param pool the pool
   * @param transactional whether writes run as durable transactions (the pool header's parameter)
   * @return the table
   */
  public static NvdhTable open(Pool pool, boolean transactional) {
    long h = pool.root(0);
    MemorySegment m = pool.memory();
    if (!NvlhRecovery.namesHeader(pool, h, NvdhLayout.TABLE_HEADER.byteSize())) {
      throw NvlhRecovery.corrupt("nvdh: root 0 (" + h + ") does not name a table header");
    }
    if ((long) LONG.get(m, h + HDR_MAGIC) != NvdhLayout.MAGIC) {
      throw NvlhRecovery.corrupt("nvdh: bad table magic at " + h);
    }
    int v = (int) NvdhLayout.INT.get(m, h + HDR_VERSION);
    if (v != NvdhLayout.LAYOUT_VERSION) {
      throw NvlhRecovery.corrupt("nvdh: table layout version " + v + ", expected " + NvdhLayout.LAYOUT_VERSION);
    }
    long k = (long) LONG.get(m, h + HDR_K);
    long tab = (long) LONG.get(m, h + HDR_TABLE);
    if (k < NvdhLayout.MIN_K || k > NvdhLayout.MAX_K) {
      throw NvlhRecovery.corrupt("nvdh: k = " + k + " outside " + NvdhLayout.MIN_K + ".." + NvdhLayout.MAX_K);
    }
    if (!pool.schemeAllocator().owned(tab) || pool.schemeAllocator().blockSize(tab) < NvdhLayout.tableBytes((int) k)) {
      throw NvlhRecovery.corrupt("nvdh: the table at " + tab + " is not an owned block of " + NvdhLayout.tableBytes((int) k) + " bytes");
    }
    NvdhTable t = new NvdhTable(pool, h, tab, (int) k, transactional);
    long cleanSize = (long) LONG.get(m, h + HDR_CLEAN_SIZE);
    if (pool.lastShutdownClean() && cleanSize >= 0) {
      t.size = cleanSize;
      t.tombstones = (long) LONG.get(m, h + HDR_CLEAN_TOMBSTONES);
      NvlhRecovery.consumeCleanCount(pool, h + HDR_CLEAN_SIZE);
    } else {
      for (long j = 0; j < 1L << k; j++) {
        int st = state(m, tab, j);
        if (st == FULL) {
          t.size++;
        } else if (st == DELETED) {
          t.tombstones++;
        } else if (st != EMPTY) {
          throw NvlhRecovery.corrupt("nvdh: slot " + j + " has the invalid state 3");
        }
      }
    }
    return t;
  }

  @Override
  public void close() {
    if (!pool.isOpen()) {
      return;
    }
    long stamp = lock.writeLock();
    try {
      MemorySegment m = pool.memory();
      LONG.setRelease(m, header + HDR_CLEAN_SIZE, size);
      LONG.setRelease(m, header + HDR_CLEAN_TOMBSTONES, tombstones);
      // PERSIST(nvdh close): the counts are durable before the pool marks the shutdown clean.
      persistence.persist(header + HDR_CLEAN_SIZE, 16);
      pool.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      lock.unlockWrite(stamp);
    }
  }

  // ------------------------------------------------------------------ slots

  static int state(MemorySegment m, long table, long j) {
    long w = (long) LONG.getAcquire(m, table + (j >>> 5) * 8);
    return (int) (w >>> ((j & 31) * 2)) & 3;
  }

  /** PERSIST(nvdh state): one atomic 8-byte store, persisted; the commit point of every slot change. */
  private void setState(MemorySegment m, long j, int st) {
    persistence.persist(storeState(m, j, st), 8);
  }

  /** The release store of a slot's state; returns the state word's offset. */
  private long storeState(MemorySegment m, long j, int st) {
    long at = stateWord(j);
    int shift = (int) (j & 31) * 2;
    long w = (long) LONG.get(m, at);
    LONG.setRelease(m, at, (w & ~(3L << shift)) | ((long) st << shift));
    return at;
  }

  private long stateWord(long j) {
    return table + (j >>> 5) * 8;
  }

  static long pairOffset(long table, int k, long j) {
    return table + NvdhLayout.statesBytes(k) + j * PAIR_BYTES;
  }

  /**
   * Probes for a key.
   *
   * @return the slot holding it; else {@code -1 - slot} where slot is the first tombstone passed
   *     or the empty slot that ended the probe ({@code Long.MIN_VALUE} if the table has neither)
   */
  static long probe(MemorySegment m, long table, int k, long key) {
    long mask = (1L << k) - 1;
    long j = Hashing.hash(key) & mask;
    long step = Hashing.hash(key, SEED2) | 1;
    long tomb = -1;
    for (long t = 0; t <= mask; t++) {
      int st = state(m, table, j);
      if (st == EMPTY) {
        return -1 - (tomb >= 0 ? tomb : j);
      }
      if (st == FULL) {
        if ((long) LONG.get(m, pairOffset(table, k, j)) == key) {
          return j;
        }
      } else if (tomb < 0) {
        tomb = j;
      }
      j = (j + step) & mask;
    }
    return tomb >= 0 ? -1 - tomb : Long.MIN_VALUE;
  }

  // ------------------------------------------------------------------ reads

  @Override
  public long get(long key, long absent) {
    long stamp = lock.readLock();
    try {
      MemorySegment m = pool.memory();
      long j = probe(m, table, k, key);
      return j < 0 ? absent : (long) LONG.get(m, pairOffset(table, k, j) + PAIR_VALUE);
    } finally {
      lock.unlockRead(stamp);
    }
  }

  @Override
  public boolean containsKey(long key) {
    long stamp = lock.readLock();
    try {
      return probe(pool.memory(), table, k, key) >= 0;
    } finally {
      lock.unlockRead(stamp);
    }
  }

  // ------------------------------------------------------------------ writes

  private static final int PUT = 0;
  private static final int PUT_IF_ABSENT = 1;
  private static final int REPLACE = 2;
  private static final int REPLACE_IF = 3;

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
    long stamp = lock.writeLock();
    try {
      MemorySegment m = pool.memory();
      long j = probe(m, table, k, key);
      if (j >= 0) {
        long at = pairOffset(table, k, j) + PAIR_VALUE;
        if (mode == PUT_IF_ABSENT || mode == REPLACE_IF && (long) LONG.get(m, at) != expected) {
          return false;
        }
        if (transactional) {
          updateInTransaction(m, at, value);
          return mode != PUT;
        }
        LONG.setRelease(m, at, value);
        // PERSIST(nvdh update): one 8-byte value store.
        persistence.persist(at, 8);
        return mode != PUT;
      }
      if (mode == REPLACE || mode == REPLACE_IF) {
        return false;
      }
      if ((size + tombstones + 1) * 4 > (3L << k)) {
        NvdhResize.rehash(this);
        m = pool.memory();
        j = probe(m, table, k, key);
      }
      long slot = -1 - j;
      boolean reuse = state(m, table, slot) == DELETED;
      long at = pairOffset(table, k, slot);
      if (transactional) {
        insertInTransaction(m, slot, at, key, value);
      } else {
        LONG.set(m, at, key);
        LONG.set(m, at + PAIR_VALUE, value);
        // PERSIST(nvdh insert 1): the pair is durable before the state word publishes it.
        persistence.persist(at, PAIR_BYTES);
        setState(m, slot, FULL);
      }
      size++;
      if (reuse) {
        tombstones--;
      }
      return true;
    } finally {
      lock.unlockWrite(stamp);
    }
  }

  /**
   * The paper's NVDH insert: the pair and its state word change in one transaction. The pair's
   * old bytes are logged too (a slot being reused holds a deleted record), so a rollback leaves
   * the slot exactly as it was.
   */
  private void insertInTransaction(MemorySegment m, long slot, long at, long key, long value) {
    try (NvlhTxn tx = txns.begin()) {
      tx.snapshot(at, PAIR_BYTES);
      tx.snapshot(stateWord(slot), 8);
      LONG.set(m, at, key);
      LONG.set(m, at + PAIR_VALUE, value);
      storeState(m, slot, FULL);
      tx.commit();
    }
  }

  private void updateInTransaction(MemorySegment m, long at, long value) {
    try (NvlhTxn tx = txns.begin()) {
      tx.snapshot(at, 8);
      LONG.setRelease(m, at, value);
      tx.commit();
    }
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
    long stamp = lock.writeLock();
    try {
      MemorySegment m = pool.memory();
      long j = probe(m, table, k, key);
      if (j < 0 || conditional && (long) LONG.get(m, pairOffset(table, k, j) + PAIR_VALUE) != expected) {
        return false;
      }
      if (transactional) {
        try (NvlhTxn tx = txns.begin()) {
          tx.snapshot(stateWord(j), 8);
          storeState(m, j, DELETED);
          tx.commit();
        }
      } else {
        setState(m, j, DELETED);
      }
      size--;
      tombstones++;
      return true;
    } finally {
      lock.unlockWrite(stamp);
    }
  }

  // ------------------------------------------------------------------ whole table

  @Override
  public long size() {
    long stamp = lock.readLock();
    try {
      return size;
    } finally {
      lock.unlockRead(stamp);
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Runs under the read lock: the action must not write to this table.
   */
  @Override
  public void forEach(LongLongConsumer action) {
    long stamp = lock.readLock();
    try {
      MemorySegment m = pool.memory();
      for (long j = 0; j < 1L << k; j++) {
        if (state(m, table, j) == FULL) {
          long at = pairOffset(table, k, j);
          action.accept((long) LONG.get(m, at), (long) LONG.get(m, at + PAIR_VALUE));
        }
      }
    } finally {
      lock.unlockRead(stamp);
    }
  }

  /** @return log2 of the slots */
  public int k() {
    long stamp = lock.readLock();
    try {
      return k;
    } finally {
      lock.unlockRead(stamp);
    }
  }

  @Override
  public double loadFactor() {
    long stamp = lock.readLock();
    try {
      return (double) size / (1L << k);
    } finally {
      lock.unlockRead(stamp);
    }
  }

  @Override
  public TableStats stats() {
    long stamp = lock.readLock();
    try {
      PersistenceStats ps = persistence.stats();
      Map<String, Long> d = new LinkedHashMap<>();
      d.put("k", (long) k);
      d.put("tombstones", tombstones);
      d.put("rehashes", rehashes);
      d.put("transactions", transactional ? 1L : 0L);
      long slots = 1L << k;
      return new TableStats(NvdhProvider.NAME, size, slots, (double) size / slots, pool.size(), ps.linesFlushed(), ps.drains(), d);
    } finally {
      lock.unlockRead(stamp);
    }
  }

  @Override
  public Pool pool() {
    return pool;
  }

  @Override
  public String scheme() {
    return NvdhProvider.NAME;
  }
}
