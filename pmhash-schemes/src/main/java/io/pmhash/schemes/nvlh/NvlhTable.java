package io.pmhash.schemes.nvlh;

import static io.pmhash.schemes.nvlh.NvlhLayout.ALL_SLOTS;
import static io.pmhash.schemes.nvlh.NvlhLayout.fingerprint;
import static io.pmhash.schemes.nvlh.NvlhLayout.BUCKET_SHIFT;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_CLEAN_OVERFLOW;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_CLEAN_SIZE;
import static io.pmhash.schemes.nvlh.NvlhLayout.LONG;
import static io.pmhash.schemes.nvlh.NvlhLayout.SLOTS;
import static io.pmhash.schemes.nvlh.NvlhLayout.level;

import io.pmhash.core.Persistence;
import io.pmhash.core.hash.ByteMatch;
import io.pmhash.core.PersistenceStats;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolFullException;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.hash.Hashing;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.LongLongConsumer;
import io.pmhash.map.TableStats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * NVLH ({@code "nvlh"}): the public facade and the per-key operations. See {@link
 * io.pmhash.schemes.nvlh} for the paper, the persist order of each operation and the deviations.
 *
 * <h2>Addressing (§II)</h2>
 *
 * With {@code N = n0 * 2^i} (round {@code i}) and split pointer {@code p}, a key with hash {@code
 * h} lives in the chain of primary bucket {@code b = h mod N} ({@code h_i}), or, if {@code b <
 * p} (already split this round), {@code b = h mod 2N} ({@code h_{i+1}}). The table has {@code N
 * + p} primary buckets. {@code i} and {@code p} are one 64-bit word ({@link NvlhLayout#state}),
 * mirrored in the volatile field {@link #state}.
 *
 * <h2>Concurrency: a lock per chain, a lock for p and the round</h2>
 *
 * Chain locks are spin locks in an {@code int[]} of {@value #STRIPES} stripes on the heap
 * (nothing to reset after a crash); bucket {@code b} uses stripe {@code b mod STRIPES}. Every
 * operation on a key, reads included, reads {@link #state}, computes its bucket, locks that
 * bucket's stripe, then re-reads {@link #state}: if the key now maps elsewhere (a split or merge
 * of its bucket finished meanwhile) it unlocks and retries. The state changes only while the
 * stripes of both buckets of the split or merge are held, so a validated bucket stays the key's
 * bucket until unlocked. An operation holds one stripe and never waits for another lock while
 * holding it, with one exception that cannot close a cycle: an insert into a full chain, with
 * the split on collision, takes {@link #structure} only if it is free ({@code tryLock}) and,
 * holding it, waits for the stripes of the split ({@link NvlhResize#insertAndSplit}); only the
 * holder of {@link #structure} ever waits for a stripe while holding one. Splits and merges
 * ({@link NvlhResize}) are serialised by {@link #structure}, the
 * lock of p and the round, and take the two stripes they touch in ascending order; {@link
 * #forEach} takes {@link #structure} and then every stripe in ascending order. Overflow buckets
 * and segments are freed only under the stripe of the chain that reached them, and the
 * allocator reuses them only after its grace period.
 */
public final class NvlhTable implements LongHashTable {
  /** Chain-lock stripes (a power of two). */
  static final int STRIPES = 1024;
  private static final int STRIPE_MASK = STRIPES - 1;
  /** Record counter cells (a power of two), each in its own cache line. */
  private static final int COUNT_CELLS = 64;
  private static final int COUNT_STRIDE = 8;
  /** Below this many primary buckets every insert and delete checks the load; above, one in eight. */
  private static final long CHECK_ALWAYS_BELOW = 1024;

  private static final VarHandle LOCK = MethodHandles.arrayElementVarHandle(int[].class).withInvokeExactBehavior();
  private static final VarHandle COUNT = MethodHandles.arrayElementVarHandle(long[].class).withInvokeExactBehavior();

  final Pool pool;
  final Persistence persistence;
  final NvlhTxn.Factory txns;
  final long header;
  final long n0;
  final int segShift;
  final long segMask;
  /** 0: split on collision (the paper); else split while records exceed this percentage of the slots. */
  final int splitLoadPercent;
  /** Merge the last bucket while records are below this percentage of the slots (0: never). */
  final int mergeLoadPercent;
  /**
   * Source chains of at most this many buckets split or merge in one transaction; longer ones
   * use the flagged multi-transaction protocol ({@link NvlhResize}). Tests set 0 to force it.
   */
  int singleTxChain = 4;
  /** The state word's mirror: written only under {@link #structure} and the stripes it affects. */
  volatile long state;
  /** Segment offsets by segment number, the directory's mirror (0: not allocated). */
  volatile long[] segs;
  final ReentrantLock structure = new ReentrantLock();
  private final int[] locks = new int[STRIPES];
  private final long[] counts = new long[COUNT_CELLS * COUNT_STRIDE];
  final AtomicLong overflowBuckets = new AtomicLong();
  final AtomicLong splits = new AtomicLong();
  /** Splits done in one transaction with the insert that triggered them ({@link NvlhResize#insertAndSplit}). */
  final AtomicLong splitsWithInsert = new AtomicLong();
  /** Splits skipped because the pool could not grow (the inserts that triggered them succeeded). */
  final AtomicLong splitsSkipped = new AtomicLong();
  final AtomicLong merges = new AtomicLong();

  NvlhTable(Pool pool, long header, long n0, int segShift, long state, long[] segs, int splitLoadPercent, int mergeLoadPercent) {
    this.pool = pool;
    this.persistence = pool.persistence();
    this.txns = NvlhTxn.undoLog(pool);
    this.header = header;
    this.n0 = n0;
    this.segShift = segShift;
    this.segMask = (1L << segShift) - 1;
    this.state = state;
    this.segs = segs;
    this.splitLoadPercent = splitLoadPercent;
    this.mergeLoadPercent = mergeLoadPercent;
  }

  /**
   * Builds an empty table in a fresh pool: the header, the segments of the first {@code n0}
   * buckets (zeroed) and their directory levels, durable before one publication links the header
   * into root 0.
   *
   * @param pool the pool
   * @param n0 the primary buckets of round 0, a power of two ({@link #bucketsFor} sizes it for
   *     a capacity)
   * @param segShift log2 of the buckets per segment
   * @param splitLoadPercent 0 to split on collision, else the load bound in percent
   * @param mergeLoadPercent the load below which the last bucket is merged back, 0 for never
   * @return the table
   */
  public static NvlhTable create(Pool pool, long n0, int segShift, int splitLoadPercent, int mergeLoadPercent) {
    if (pool.root(0) != 0) {
      throw new IllegalStateException("pool already holds a table (root 0 is set)");
    }
    if (n0 < 1 || n0 > 1L << 40 || Long.bitCount(n0) != 1) {
      throw new IllegalArgumentException("nvlh: round 0 needs a power of two of buckets in 1..2^40, got " + n0);
    }
    long segBytes = NvlhLayout.BUCKET_BYTES << segShift;
    int nSegs = (int) Math.max(1, n0 >>> segShift);
    int levels = NvlhLayout.dirLevel(nSegs - 1) + 1;
    SchemeAllocator.Reserved hdr = pool.schemeAllocator().reserve(NvlhLayout.TABLE_HEADER.byteSize());
    SchemeAllocator.Reserved[] blocks = new SchemeAllocator.Reserved[nSegs + levels];
    for (int g = 0; g < nSegs; g++) {
      blocks[g] = pool.schemeAllocator().reserve(segBytes);
    }
    for (int l = 0; l < levels; l++) {
      blocks[nSegs + l] = pool.schemeAllocator().reserve(8L << l);
    }
    MemorySegment m = pool.memory();
    Persistence p = pool.persistence();
    long h = hdr.offset();
    m.asSlice(h, NvlhLayout.TABLE_HEADER.byteSize()).fill((byte) 0);
    LONG.set(m, h + NvlhLayout.HDR_MAGIC, NvlhLayout.MAGIC);
    NvlhLayout.INT.set(m, h + NvlhLayout.HDR_VERSION, NvlhLayout.LAYOUT_VERSION);
    NvlhLayout.INT.set(m, h + NvlhLayout.HDR_SEG_SHIFT, segShift);
    LONG.set(m, h + NvlhLayout.HDR_N0, n0);
    LONG.set(m, h + HDR_CLEAN_SIZE, -1L); // no clean count until a close writes one
    long[] segs = new long[Math.max(4, nSegs)];
    for (int l = 0; l < levels; l++) {
      long dir = blocks[nSegs + l].offset();
      m.asSlice(dir, 8L << l).fill((byte) 0);
      LONG.set(m, h + NvlhLayout.HDR_DIR + 8L * l, dir);
    }
    for (int g = 0; g < nSegs; g++) {
      long seg = blocks[g].offset();
      m.asSlice(seg, segBytes).fill((byte) 0);
      p.flush(seg, segBytes);
      long dir = blocks[nSegs + NvlhLayout.dirLevel(g)].offset();
      LONG.set(m, dir + 8 * NvlhLayout.dirIndex(g), seg);
      segs[g] = seg;
    }
    for (int l = 0; l < levels; l++) {
      p.flush(blocks[nSegs + l].offset(), 8L << l);
    }
    // PERSIST(create): segments, directory and header durable before anything owns or names them.
    p.persist(h, NvlhLayout.TABLE_HEADER.byteSize());
    pool.schemeAllocator().publishUnlinked(blocks);
    pool.schemeAllocator().publish(hdr, pool.rootWord(0));
    return new NvlhTable(pool, h, n0, segShift, 0L, segs, splitLoadPercent, mergeLoadPercent);
  }

  /**
   * @param capacity records
   * @return the fewest buckets, a power of two, that hold them at 75 % load
   */
  static long bucketsFor(long capacity) {
    long n = 1;
    while (n < 1L << 40 && n * SLOTS * 3 / 4 < capacity) {
      n <<= 1;
    }
    return n;
  }

  /**
   * Opens the table of a pool and, after a crash, recovers it ({@link NvlhRecovery}).
   *
   * @param pool the pool
   * @param splitLoadPercent as at create (the provider reads it from the pool header)
   * @param mergeLoadPercent as at create
   * @return the table
   */
  public static NvlhTable open(Pool pool, int splitLoadPercent, int mergeLoadPercent) {
    NvlhTable t = NvlhRecovery.validate(pool, splitLoadPercent, mergeLoadPercent);
    NvlhRecovery.recover(t);
    return t;
  }

  @Override
  public void close() {
    if (!pool.isOpen()) {
      return;
    }
    MemorySegment m = pool.memory();
    LONG.setRelease(m, header + HDR_CLEAN_SIZE, size());
    LONG.setRelease(m, header + HDR_CLEAN_OVERFLOW, overflowBuckets.get());
    // PERSIST(close): the counts are durable before the pool marks the shutdown clean.
    persistence.persist(header + HDR_CLEAN_SIZE, 16);
    try {
      pool.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  // ------------------------------------------------------------------ addressing and locks

  static long hash(long key) {
    return Hashing.hash(key);
  }

  /** {@code h_i}, or {@code h_{i+1}} for a bucket already split this round (§II). */
  long bucketOf(long h, long s) {
    long n = n0 << level(s);
    long b = h & (n - 1);
    return b < NvlhLayout.splitPointer(s) ? h & (2 * n - 1) : b;
  }

  /** @return primary buckets of state {@code s}: {@code N + p} */
  long bucketCount(long s) {
    return (n0 << level(s)) + NvlhLayout.splitPointer(s);
  }

  /** @return the offset of primary bucket {@code b} (its segment must exist) */
  long bucketOffset(long b) {
    return segs[(int) (b >>> segShift)] + ((b & segMask) << BUCKET_SHIFT);
  }

  static int stripe(long b) {
    return (int) b & STRIPE_MASK;
  }

  void lockStripe(int s) {
    while (!(boolean) LOCK.compareAndSet(locks, s, 0, 1)) {
      Thread.onSpinWait();
    }
  }

  void unlockStripe(int s) {
    LOCK.setRelease(locks, s, 0);
  }

  /** Locks the stripe of the key's bucket and returns the bucket, validated against the state. */
  private long lockBucket(long h) {
    for (;;) {
      long s = state;
      long b = bucketOf(h, s);
      int st = stripe(b);
      lockStripe(st);
      long s2 = state;
      if (s2 == s || bucketOf(h, s2) == b) {
        return b;
      }
      unlockStripe(st);
    }
  }

  /** @return the cell's previous value */
  private long addCount(long b, long delta) {
    return (long) COUNT.getAndAdd(counts, (stripe(b) & (COUNT_CELLS - 1)) * COUNT_STRIDE, delta);
  }

  // ------------------------------------------------------------------ reads

  @Override
  public long get(long key, long absent) {
    long h = hash(key);
    long b = lockBucket(h);
    try {
      MemorySegment m = pool.memory();
      long f = NvlhBucket.find(m, bucketOffset(b), key, ByteMatch.broadcast(fingerprint(h)));
      return f < 0 ? absent : NvlhBucket.value(m, f & ~7L, (int) (f & 7));
    } finally {
      unlockStripe(stripe(b));
    }
  }

  @Override
  public boolean containsKey(long key) {
    long h = hash(key);
    long b = lockBucket(h);
    try {
      return NvlhBucket.find(pool.memory(), bucketOffset(b), key, ByteMatch.broadcast(fingerprint(h))) >= 0;
    } finally {
      unlockStripe(stripe(b));
    }
  }

  // ------------------------------------------------------------------ writes

  private static final int PUT = 0;
  private static final int PUT_IF_ABSENT = 1;
  private static final int REPLACE = 2;
  private static final int REPLACE_IF = 3;

  /** write(): the key was updated (or not) in place; no structural follow-up. */
  private static final int UPDATED = 0;
  private static final int NOT_DONE = 1;
  private static final int INSERTED = 2;
  private static final int INSERTED_OVERFLOW = 3;

  @Override
  public boolean put(long key, long value) {
    return write(PUT, key, 0, value) >= INSERTED;
  }

  @Override
  public boolean putIfAbsent(long key, long value) {
    return write(PUT_IF_ABSENT, key, 0, value) >= INSERTED;
  }

  @Override
  public boolean replace(long key, long value) {
    return write(REPLACE, key, 0, value) == UPDATED;
  }

  @Override
  public boolean replace(long key, long expected, long value) {
    return write(REPLACE_IF, key, expected, value) == UPDATED;
  }

  private int write(int mode, long key, long expected, long value) {
    long h = hash(key);
    long b = lockBucket(h);
    int result;
    try {
      result = writeLocked(mode, key, expected, value, b, fingerprint(h));
    } finally {
      unlockStripe(stripe(b));
    }
    if (result >= INSERTED) {
      afterInsert(result, h);
    }
    return result;
  }

  private int writeLocked(int mode, long key, long expected, long value, long b, int fp) {
    MemorySegment m = pool.memory();
    long head = bucketOffset(b);
    long pattern = ByteMatch.broadcast(fp);
    long free = 0;
    long tail = head;
    for (long x = head; x != 0; x = NvlhBucket.next(m, x)) {
      tail = x;
      long meta = NvlhBucket.meta(m, x);
      if (free == 0 && (meta & ALL_SLOTS) != ALL_SLOTS) {
        free = x;
      }
      int s = NvlhBucket.slotOf(m, x, key, meta, pattern);
      if (s >= 0) {
        if (mode == PUT_IF_ABSENT || mode == REPLACE_IF && NvlhBucket.value(m, x, s) != expected) {
          return NOT_DONE;
        }
        NvlhBucket.update(m, persistence, x, s, value);
        return UPDATED;
      }
    }
    if (mode == REPLACE || mode == REPLACE_IF) {
      return NOT_DONE;
    }
    if (free != 0) {
      addCount(b, 1); // before the persists (docs/persistence.md, "Counters before the persists")
      NvlhBucket.insert(m, persistence, free, key, value, fp);
      return INSERTED;
    }
    if (splitLoadPercent == 0 && NvlhResize.insertAndSplit(this, b, tail, key, value, fp)) {
      addCount(b, 1);
      return INSERTED; // and split
    }
    insertOverflow(tail, key, value, fp);
    addCount(b, 1);
    return INSERTED_OVERFLOW;
  }

  /**
   * A collision (Fig. 1(b)): the chain is full, a new overflow bucket holding the record is
   * chained after {@code tail} in one transaction (the bucket is allocated in it, so commit
   * flushes it whole).
   */
  private void insertOverflow(long tail, long key, long value, int fp) {
    try (NvlhTxn tx = txns.begin()) {
      long nb = NvlhChain.newBucketWith(pool, tx, key, value, fp);
      // the allocation's log entry is drained by the snapshot of the tail's next word
      NvlhChain.link(pool.memory(), tx, tail, nb, true);
      tx.commit();
    }
    overflowBuckets.incrementAndGet();
  }

  /**
   * The split policy: on collision (the paper), or while the load exceeds the bound. The insert
   * is complete and durable before this runs, so a split the pool has no room for is skipped (and
   * counted), not reported: the put succeeded, and the next insert that needs room gets the
   * {@link PoolFullException} before it changes anything.
   */
  private void afterInsert(int result, long h) {
    try {
      splitAfterInsert(result, h);
    } catch (PoolFullException e) {
      splitsSkipped.incrementAndGet();
    }
  }

  private void splitAfterInsert(int result, long h) {
    if (splitLoadPercent == 0) {
      if (result == INSERTED_OVERFLOW) {
        NvlhResize.split(this);
      }
      return;
    }
    if (checkLoad(h)) {
      for (int i = 0; i < 2 && loadPercentOver(splitLoadPercent); i++) {
        NvlhResize.split(this);
      }
    }
  }

  private boolean checkLoad(long h) {
    return bucketCount(state) < CHECK_ALWAYS_BELOW || (h >>> 61) == 0;
  }

  /** @return whether records exceed {@code percent} of the primary buckets' slots */
  boolean loadPercentOver(int percent) {
    return size() * 100 > (long) percent * bucketCount(state) * SLOTS;
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
    long h = hash(key);
    long b = lockBucket(h);
    try {
      MemorySegment m = pool.memory();
      long head = bucketOffset(b);
      long pred = 0;
      long x = head;
      int s = -1;
      long pattern = ByteMatch.broadcast(fingerprint(h));
      for (; x != 0; pred = x, x = NvlhBucket.next(m, x)) {
        s = NvlhBucket.slotOf(m, x, key, NvlhBucket.meta(m, x), pattern);
        if (s >= 0) {
          break;
        }
      }
      if (x == 0 || conditional && NvlhBucket.value(m, x, s) != expected) {
        return false;
      }
      addCount(b, -1); // before the persists, as in the insert
      if (x == head || NvlhBucket.count(m, x) > 1) {
        NvlhBucket.delete(m, persistence, x, s);
      } else {
        deleteLastOfOverflow(m, pred, x);
      }
    } finally {
      unlockStripe(stripe(b));
    }
    if (mergeLoadPercent > 0 && checkLoad(h)) {
      for (int i = 0; i < 2 && bucketCount(state) > n0 && !loadPercentOver(mergeLoadPercent); i++) {
        NvlhResize.merge(this);
      }
    }
    return true;
  }

  /** The record is the last of an overflow bucket: the bucket is unlinked and freed in one transaction. */
  private void deleteLastOfOverflow(MemorySegment m, long pred, long x) {
    try (NvlhTxn tx = txns.begin()) {
      NvlhChain.unlink(m, tx, pred, x, true);
      tx.commit();
    }
    overflowBuckets.decrementAndGet();
  }

  // ------------------------------------------------------------------ whole table

  @Override
  public long size() {
    long n = 0;
    for (int i = 0; i < counts.length; i += COUNT_STRIDE) {
      n += (long) COUNT.getOpaque(counts, i);
    }
    return n;
  }

  /** At open: sets the counts found by recovery. */
  void resetCounts(long records, long overflow) {
    COUNT.setOpaque(counts, 0, records);
    overflowBuckets.set(overflow);
  }

  void lockAll() {
    structure.lock();
    for (int s = 0; s < STRIPES; s++) {
      lockStripe(s);
    }
  }

  void unlockAll() {
    for (int s = STRIPES - 1; s >= 0; s--) {
      unlockStripe(s);
    }
    structure.unlock();
  }

  /**
   * {@inheritDoc}
   *
   * <p>Runs under the structure lock and every stripe: the action must not call this table.
   */
  @Override
  public void forEach(LongLongConsumer action) {
    lockAll();
    try {
      MemorySegment m = pool.memory();
      long buckets = bucketCount(state);
      for (long b = 0; b < buckets; b++) {
        for (long x = bucketOffset(b); x != 0; x = NvlhBucket.next(m, x)) {
          long bits = NvlhBucket.meta(m, x) & ALL_SLOTS;
          while (bits != 0) {
            int s = Long.numberOfTrailingZeros(bits);
            bits &= bits - 1;
            action.accept(NvlhBucket.key(m, x, s), NvlhBucket.value(m, x, s));
          }
        }
      }
    } finally {
      unlockAll();
    }
  }

  /** @return the round i */
  public int round() {
    return level(state);
  }

  /** @return the split pointer p */
  public long splitPointer() {
    return NvlhLayout.splitPointer(state);
  }

  /** @return primary buckets: {@code n0 * 2^i + p} */
  public long buckets() {
    return bucketCount(state);
  }

  @Override
  public double loadFactor() {
    return (double) size() / ((buckets() + overflowBuckets.get()) * SLOTS);
  }

  @Override
  public TableStats stats() {
    long s = state;
    long size = size();
    long slots = (bucketCount(s) + overflowBuckets.get()) * SLOTS;
    PersistenceStats ps = persistence.stats();
    Map<String, Long> d = new LinkedHashMap<>();
    d.put("round", (long) level(s));
    d.put("splitPointer", NvlhLayout.splitPointer(s));
    d.put("buckets", bucketCount(s));
    d.put("overflowBuckets", overflowBuckets.get());
    d.put("splits", splits.get());
    d.put("splitsWithInsert", splitsWithInsert.get());
    d.put("splitsSkipped", splitsSkipped.get());
    d.put("merges", merges.get());
    return new TableStats(NvlhProvider.NAME, size, slots, (double) size / slots, pool.size(), ps.linesFlushed(), ps.drains(), d);
  }

  @Override
  public Pool pool() {
    return pool;
  }

  @Override
  public String scheme() {
    return NvlhProvider.NAME;
  }
}
