package io.pmhash.schemes.level;

import static io.pmhash.schemes.level.LevelLayout.BUCKET_BYTES;
import static io.pmhash.schemes.level.LevelLayout.BUCKET_LINES;
import static io.pmhash.schemes.level.LevelLayout.HDR_BOTTOM;
import static io.pmhash.schemes.level.LevelLayout.HDR_CLEAN_SIZE;
import static io.pmhash.schemes.level.LevelLayout.HDR_K;
import static io.pmhash.schemes.level.LevelLayout.HDR_MAGIC;
import static io.pmhash.schemes.level.LevelLayout.HDR_TOP;
import static io.pmhash.schemes.level.LevelLayout.HDR_VERSION;
import static io.pmhash.schemes.level.LevelLayout.INT;
import static io.pmhash.schemes.level.LevelLayout.LAYOUT_VERSION;
import static io.pmhash.schemes.level.LevelLayout.LONG;
import static io.pmhash.schemes.level.LevelLayout.MAGIC;
import static io.pmhash.schemes.level.LevelLayout.MAX_K;
import static io.pmhash.schemes.level.LevelLayout.MIN_K;
import static io.pmhash.schemes.level.LevelLayout.SLOTS;
import static io.pmhash.schemes.level.LevelLayout.TABLE_HEADER;
import static io.pmhash.schemes.level.LevelLayout.slotsAt;
import static io.pmhash.schemes.level.LevelLayout.topIndex;

import io.pmhash.core.Persistence;
import io.pmhash.core.PersistenceStats;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.concurrent.Prefetch;
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
import java.util.function.LongConsumer;

/**
 * Level hashing ({@code "level"}): the public facade and the per-key operations. See {@link
 * io.pmhash.schemes.level} for the paper, the guarantees and the deviations.
 *
 * <h2>Concurrency: striped locks, as evaluated</h2>
 *
 * Dash §6.1 ran level hashing with its locks co-located in a small array (lock striping). Here a
 * stripe is a spin lock in an {@code int[]} of {@value #STRIPES} entries, on the heap (not in
 * the pool, so nothing needs resetting after a crash). Bucket {@code b} of the bottom level and
 * top buckets {@code 2b}, {@code 2b+1} belong to stripe {@code b mod STRIPES}. Every operation
 * on a key, reads included (pessimistic, as in the original), takes the stripes of its two
 * bottom buckets in ascending order, then checks that no resize replaced the levels meanwhile;
 * a read takes only the lower of the two ({@link #read}: every change to a key is made
 * holding both of its stripes). A movement holds both stripes of the record it moves; one of
 * them it does not hold already it only tries, and skips the candidate if it is held, so no
 * thread ever waits while holding a lock out of order. Resize, shrink and {@code forEach} take
 * every stripe in ascending order.
 */
public final class LevelTable implements LongHashTable {
  /** Lock stripes (a power of two). */
  static final int STRIPES = 1024;
  private static final int STRIPE_MASK = STRIPES - 1;
  /** Record counter cells (a power of two), each in its own cache line. */
  private static final int COUNT_CELLS = 64;
  private static final int COUNT_STRIDE = 8;
  /** Seed of the second hash function. */
  static final long SEED2 = 0x5bd1e9955bd1e995L;

  private static final VarHandle LOCK = MethodHandles.arrayElementVarHandle(int[].class).withInvokeExactBehavior();
  private static final VarHandle COUNT = MethodHandles.arrayElementVarHandle(long[].class).withInvokeExactBehavior();

  /** The two levels in DRAM: replaced (never changed) by a resize, under every stripe lock. */
  record Levels(long top, long bottom, int k) {}

  final Pool pool;
  final Persistence persistence;
  final long header;
  volatile Levels levels;
  private final int[] locks = new int[STRIPES];
  private final long[] counts = new long[COUNT_CELLS * COUNT_STRIDE];
  final AtomicLong resizes = new AtomicLong();
  final AtomicLong shrinks = new AtomicLong();
  final AtomicLong moves = new AtomicLong();
  /** Of {@link #moves}, those from the bottom level up to the top (a test reads it). */
  final AtomicLong bottomToTopMoves = new AtomicLong();

  private LevelTable(Pool pool, long header, Levels levels) {
    this.pool = pool;
    this.persistence = pool.persistence();
    this.header = header;
    this.levels = levels;
  }

  // ------------------------------------------------------------------ lifecycle

  /**
   * Builds an empty table in a fresh pool and publishes it into root 0.
   *
   * @param pool the pool
   * @param capacity records to hold before the first resize
   * @return the table
   */
  public static LevelTable create(Pool pool, long capacity) {
    int k = MIN_K;
    while (k < MAX_K && slotsAt(k) * 0.85 < capacity) {
      k++;
    }
    SchemeAllocator.Reserved hdr = pool.schemeAllocator().reserve(TABLE_HEADER.byteSize());
    SchemeAllocator.Reserved top = pool.schemeAllocator().reserve(LevelLayout.topBytes(k));
    SchemeAllocator.Reserved bottom = pool.schemeAllocator().reserve(LevelLayout.bottomBytes(k));
    MemorySegment m = pool.memory();
    Persistence p = pool.persistence();
    m.asSlice(top.offset(), LevelLayout.topBytes(k)).fill((byte) 0);
    m.asSlice(bottom.offset(), LevelLayout.bottomBytes(k)).fill((byte) 0);
    long h = hdr.offset();
    m.asSlice(h, TABLE_HEADER.byteSize()).fill((byte) 0);
    LONG.set(m, h + HDR_MAGIC, MAGIC);
    INT.set(m, h + HDR_VERSION, LAYOUT_VERSION);
    LONG.set(m, h + HDR_TOP, top.offset());
    LONG.set(m, h + HDR_BOTTOM, bottom.offset());
    LONG.set(m, h + HDR_K, (long) k);
    // PERSIST(create): both levels (empty tokens) and the header durable before root 0 names them.
    p.flush(top.offset(), LevelLayout.topBytes(k));
    p.flush(bottom.offset(), LevelLayout.bottomBytes(k));
    p.persist(h, TABLE_HEADER.byteSize());
    try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
      pub.publish(top).publish(bottom).publish(hdr, pool.rootWord(0));
      pub.commit();
    }
    return new LevelTable(pool, h, new Levels(top.offset(), bottom.offset(), k));
  }

  /**
   * Opens the table of a pool and, after a crash, recovers it ({@link LevelRecovery}).
   *
   * @param pool the pool
   * @return the table
   */
  public static LevelTable open(Pool pool) {
    long h = pool.root(0);
    Levels l = LevelRecovery.validate(pool, h);
    LevelTable t = new LevelTable(pool, h, l);
    long size = pool.lastShutdownClean()
        ? (long) LONG.get(pool.memory(), h + HDR_CLEAN_SIZE)
        : LevelRecovery.repair(pool, l);
    t.counts[0] = size;
    return t;
  }

  @Override
  public void close() {
    if (!pool.isOpen()) {
      return;
    }
    persistCleanSize();
    try {
      pool.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Stores the count where an open after a clean shutdown reads it; the close's first step. */
  void persistCleanSize() {
    LONG.setRelease(pool.memory(), header + HDR_CLEAN_SIZE, size());
    // PERSIST(close): the count is durable before the pool marks the shutdown clean.
    persistence.persist(header + HDR_CLEAN_SIZE, 8);
  }

  // ------------------------------------------------------------------ locking

  static long hash1(long key) {
    return Hashing.hash(key);
  }

  static long hash2(long key) {
    return Hashing.hash(key, SEED2);
  }

  /** @return the stripe of the bottom bucket of hash {@code h} at level {@code k} */
  static int stripe(long h, int k) {
    return stripeOfTop(topIndex(h, k));
  }

  /** @return the stripe of top bucket {@code top} (that of the bottom bucket below it) */
  private static int stripeOfTop(long top) {
    return (int) (top >>> 1) & STRIPE_MASK;
  }

  private void lockStripe(int s) {
    while (!(boolean) LOCK.compareAndSet(locks, s, 0, 1)) {
      Thread.onSpinWait();
    }
  }

  boolean tryLockStripe(int s) {
    return (boolean) LOCK.compareAndSet(locks, s, 0, 1);
  }

  /** Tests only: called with each record a movement is about to move, its locks held. */
  LongConsumer movementCheck;

  private void beforeMove(long key) {
    if (movementCheck != null) {
      movementCheck.accept(key);
    }
  }

  /** @return whether stripe {@code s} is locked (by any thread; for tests) */
  boolean stripeLocked(int s) {
    return (int) LOCK.getVolatile(locks, s) != 0;
  }

  void unlockStripe(int s) {
    LOCK.setRelease(locks, s, 0);
  }

  /**
   * {@link #lock} for a writer: first it loads the four candidate buckets' lines, which a write
   * reads under the stripes ({@link Prefetch}; offsets in levels a resize has since replaced are
   * still inside the pool's mapping, which never shrinks, and what they hold is not used).
   * Readers do not: they load the two top buckets at once anyway, and measured 10–12 % slower
   * with the extra loads (docs/persistence.md, "Loads before a lock").
   */
  private Levels lockForWrite(long h1, long h2) {
    Prefetch.keep(prefetch(pool.memory(), levels, h1, h2));
    return lock(h1, h2);
  }

  /** Takes the stripes of a key's buckets and returns the levels they are valid for. */
  private Levels lock(long h1, long h2) {
    for (;;) {
      Levels l = levels;
      int a = stripe(h1, l.k);
      int b = stripe(h2, l.k);
      lockStripe(Math.min(a, b));
      if (a != b) {
        lockStripe(Math.max(a, b));
      }
      if (levels == l) {
        return l;
      }
      unlock(l, h1, h2);
    }
  }

  /**
   * Every read ({@link #get}, {@link #containsKey}), under a reader's lock: one of the key's two
   * stripes (the lower), validated against a resize, and unlocked by the stripe it locked (not
   * one computed again from the levels: docs/format/level.md). The one stripe suffices because
   * every change to a key's presence, place or value is made holding both of its stripes: its
   * own insert, update and delete take both ({@link #lock}), and a movement of the key to make
   * room for another (one-step or bottom-to-top) holds the stripe of the bucket it leaves and
   * tries the key's other stripe, skipping the key if it is held ({@link #bottomToTop}); a
   * resize takes them all. Changes to other keys in the same buckets do not disturb the probe
   * ({@link #find}: a slot whose token is set holds a whole 8-byte key, never this one). Half
   * the lock operations of {@link #lock}: searches 7-16 % faster (docs/format/level.md).
   */
  private long read(long key, long absent, boolean contains) {
    long h1 = hash1(key);
    long h2 = hash2(key);
    Levels l;
    int s;
    for (;;) {
      l = levels;
      s = readStripe(l, h1, h2);
      lockStripe(s);
      if (levels == l) {
        break;
      }
      unlockStripe(s);
    }
    try {
      MemorySegment m = pool.memory();
      long f = find(m, l, key, h1, h2);
      return f < 0 ? absent : contains ? 1 : LevelBucket.value(m, f & ~7L, (int) (f & 7));
    } finally {
      unlockStripe(s);
    }
  }

  private static int readStripe(Levels l, long h1, long h2) {
    return Math.min(stripe(h1, l.k), stripe(h2, l.k));
  }

  /** @return the lines of a key's two top and two bottom buckets, folded, for {@link Prefetch#keep} */
  private static long prefetch(MemorySegment m, Levels l, long h1, long h2) {
    long t1 = topIndex(h1, l.k);
    long t2 = topIndex(h2, l.k);
    return Prefetch.lines(m, bucket(l.top, t1), BUCKET_LINES) ^ Prefetch.lines(m, bucket(l.top, t2), BUCKET_LINES)
        ^ Prefetch.lines(m, bucket(l.bottom, t1 >>> 1), BUCKET_LINES)
        ^ Prefetch.lines(m, bucket(l.bottom, t2 >>> 1), BUCKET_LINES);
  }

  private void unlock(Levels l, long h1, long h2) {
    int a = stripe(h1, l.k);
    int b = stripe(h2, l.k);
    unlockStripe(a);
    if (a != b) {
      unlockStripe(b);
    }
  }

  /** Takes every stripe in ascending order (resize, shrink, forEach). */
  void lockAll() {
    for (int s = 0; s < STRIPES; s++) {
      lockStripe(s);
    }
  }

  void unlockAll() {
    for (int s = STRIPES - 1; s >= 0; s--) {
      unlockStripe(s);
    }
  }

  /** @return the cell's previous value */
  private long addCount(long h1, int k, long delta) {
    // cells are shared by stripes: an atomic add (uncontended, one locked instruction)
    return (long) COUNT.getAndAdd(counts, (stripe(h1, k) & (COUNT_CELLS - 1)) * COUNT_STRIDE, delta);
  }

  // ------------------------------------------------------------------ probing

  static long bucket(long level, long index) {
    return level + index * BUCKET_BYTES;
  }

  /**
   * Probes the key's four buckets in the paper's order (top 1, top 2, bottom 1, bottom 2).
   *
   * @return the bucket offset in the high bits and the slot in the low 3 bits, or -1
   */
  static long find(MemorySegment m, Levels l, long key, long h1, long h2) {
    long t1 = topIndex(h1, l.k);
    long t2 = topIndex(h2, l.k);
    long a = bucket(l.top, t1);
    long b = bucket(l.top, t2);
    long c = bucket(l.bottom, t1 >>> 1);
    long d = bucket(l.bottom, t2 >>> 1);
    // both top buckets are probed before any branch on what they hold: four independent lines
    long ma = LevelBucket.matches(m, a, key);
    long mb = LevelBucket.matches(m, b, key);
    if (ma != 0) {
      return a | Long.numberOfTrailingZeros(ma);
    }
    if (mb != 0) {
      return b | Long.numberOfTrailingZeros(mb);
    }
    long mc = LevelBucket.matches(m, c, key);
    long md = LevelBucket.matches(m, d, key);
    if (mc != 0) {
      return c | Long.numberOfTrailingZeros(mc);
    }
    if (md != 0) {
      return d | Long.numberOfTrailingZeros(md);
    }
    return -1;
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
    long h1 = hash1(key);
    long h2 = hash2(key);
    for (;;) {
      Levels l = lockForWrite(h1, h2);
      try {
        MemorySegment m = pool.memory();
        long f = find(m, l, key, h1, h2);
        if (f >= 0) {
          long b = f & ~7L;
          int s = (int) (f & 7);
          if (mode == PUT_IF_ABSENT || mode == REPLACE_IF && LevelBucket.value(m, b, s) != expected) {
            return false;
          }
          LevelBucket.update(m, persistence, b, s, key, value);
          return mode != PUT;
        }
        if (mode == REPLACE || mode == REPLACE_IF) {
          return false;
        }
        addCount(h1, l.k, 1); // before the persists (docs/persistence.md, "Counters before the persists")
        if (insertNew(m, l, key, value, h1, h2)) {
          return true;
        }
        addCount(h1, l.k, -1); // no room: a resize, then the insert again
      } finally {
        unlock(l, h1, h2);
      }
      LevelResize.expand(this, l);
    }
  }

  /**
   * Level hashing's insert of a key known to be absent (§3.2): a free slot of the less loaded
   * top bucket, else of the less loaded bottom bucket, else one movement of a record of a top
   * bucket to its alternative top bucket, else of a bottom bucket to its alternative bottom
   * bucket.
   *
   * @return false if there is no room without a resize
   */
  private boolean insertNew(MemorySegment m, Levels l, long key, long value, long h1, long h2) {
    long t1 = topIndex(h1, l.k);
    long t2 = topIndex(h2, l.k);
    if (place(m, bucket(l.top, t1), bucket(l.top, t2), key, value)
        || place(m, bucket(l.bottom, t1 >>> 1), bucket(l.bottom, t2 >>> 1), key, value)) {
      return true;
    }
    return insertSlow(m, l, key, value, h1, h2, t1, t2);
  }

  private boolean place(MemorySegment m, long b1, long b2, long key, long value) {
    int c1 = LevelBucket.count(m, b1);
    int c2 = LevelBucket.count(m, b2);
    long b = c1 <= c2 ? b1 : b2;
    int c = Math.min(c1, c2);
    if (c >= SLOTS) {
      return false;
    }
    LevelBucket.insert(m, persistence, b, LevelBucket.freeSlot(m, b), key, value);
    return true;
  }

  /** The movement paths, rare: cuckoo-style one-step moves in the top, then the bottom level. */
  private boolean insertSlow(MemorySegment m, Levels l, long key, long value, long h1, long h2, long t1, long t2) {
    int own1 = stripe(h1, l.k);
    int own2 = stripe(h2, l.k);
    for (int level = 0; level < 2; level++) {
      long base = level == 0 ? l.top : l.bottom;
      int shift = level;
      for (int which = 0; which < 2; which++) {
        long idx = (which == 0 ? t1 : t2) >>> shift;
        long from = bucket(base, idx);
        long tok = LevelBucket.tokenAcquire(m, from);
        while (tok != 0) {
          int s = Long.numberOfTrailingZeros(tok);
          tok &= tok - 1;
          long other = LevelBucket.key(m, from, s);
          long a1 = topIndex(hash1(other), l.k) >>> shift;
          long a2 = topIndex(hash2(other), l.k) >>> shift;
          long alt = a1 == idx ? a2 : a1;
          if (alt == idx) {
            continue;
          }
          int altStripe = (int) (shift == 0 ? alt >>> 1 : alt) & STRIPE_MASK;
          boolean mine = altStripe == own1 || altStripe == own2;
          if (!mine && !tryLockStripe(altStripe)) {
            continue;
          }
          try {
            long to = bucket(base, alt);
            int free = LevelBucket.freeSlot(m, to);
            if (free < 0) {
              continue;
            }
            beforeMove(other);
            LevelBucket.move(m, persistence, from, s, to, free);
            moves.incrementAndGet();
          } finally {
            if (!mine) {
              unlockStripe(altStripe);
            }
          }
          LevelBucket.insert(m, persistence, from, s, key, value);
          return true;
        }
      }
    }
    return bottomToTop(m, l, key, value, t1 >>> 1, own1, own2) || bottomToTop(m, l, key, value, t2 >>> 1, own1, own2);
  }

  /**
   * Bottom-to-top movement, the last resort before a resize (the original's {@code b2t_movement}):
   * a record of the full bottom bucket {@code idx} moves up into a free slot of one of its own two
   * top buckets, and the new key takes the slot it leaves. A record lands in a bottom bucket only
   * when its top buckets were full at the time; deletes, and above all a resize (whose new top
   * level starts empty while the old top becomes the bottom), free them later. The original tried
   * it only after a resize; it is correct at any time, so it is tried whenever the one-step
   * movements fail. Crash consistency is {@link LevelBucket#move}'s (a crash leaves a duplicate
   * that recovery removes, never a loss), then {@link LevelBucket#insert}'s.
   *
   * @return false if no record of the bucket has a free top slot
   */
  private boolean bottomToTop(MemorySegment m, Levels l, long key, long value, long idx, int own1, int own2) {
    long from = bucket(l.bottom, idx);
    long tok = LevelBucket.tokenAcquire(m, from);
    while (tok != 0) {
      int s = Long.numberOfTrailingZeros(tok);
      tok &= tok - 1;
      long other = LevelBucket.key(m, from, s);
      // both of the moved record's stripes, so that a reader holding either one is excluded
      // (read): the bucket it leaves is one (ours), the other is tried
      long top1 = topIndex(hash1(other), l.k);
      long top2 = topIndex(hash2(other), l.k);
      int o1 = stripeOfTop(top1);
      int o2 = stripeOfTop(top2);
      int otherStripe = o1 == (int) (idx & STRIPE_MASK) ? o2 : o1;
      boolean mine = otherStripe == own1 || otherStripe == own2;
      if (!mine && !tryLockStripe(otherStripe)) {
        continue;
      }
      try {
        for (int which = 0; which < 2; which++) {
          long to = bucket(l.top, which == 0 ? top1 : top2);
          int free = LevelBucket.freeSlot(m, to);
          if (free < 0) {
            continue;
          }
          beforeMove(other);
          LevelBucket.move(m, persistence, from, s, to, free);
          moves.incrementAndGet();
          bottomToTopMoves.incrementAndGet();
          LevelBucket.insert(m, persistence, from, s, key, value);
          return true;
        }
      } finally {
        if (!mine) {
          unlockStripe(otherStripe);
        }
      }
    }
    return false;
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
    long h1 = hash1(key);
    long h2 = hash2(key);
    Levels l = lockForWrite(h1, h2);
    boolean check;
    try {
      MemorySegment m = pool.memory();
      long f = find(m, l, key, h1, h2);
      if (f < 0) {
        return false;
      }
      long b = f & ~7L;
      int s = (int) (f & 7);
      if (conditional && LevelBucket.value(m, b, s) != expected) {
        return false;
      }
      addCount(h1, l.k, -1); // before the persist, as in write
      LevelBucket.delete(m, persistence, b, s);
      check = (stripe(h1, l.k) & 63) == 0;
    } finally {
      unlock(l, h1, h2);
    }
    if (check && l.k > MIN_K && size() * 10 < slotsAt(l.k)) {
      LevelResize.shrink(this, l);
    }
    return true;
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

  /** Under every stripe lock: sets the count after a structural change recounted it. */
  void resetCount(long n) {
    for (int i = 0; i < counts.length; i += COUNT_STRIDE) {
      COUNT.setOpaque(counts, i, 0L);
    }
    COUNT.setOpaque(counts, 0, n);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Runs under every stripe lock: the action must not call this table.
   */
  @Override
  public void forEach(LongLongConsumer action) {
    lockAll();
    try {
      Levels l = levels;
      MemorySegment m = pool.memory();
      scan(m, l.top, 1L << l.k, action);
      scan(m, l.bottom, 1L << (l.k - 1), action);
    } finally {
      unlockAll();
    }
  }

  static void scan(MemorySegment m, long level, long buckets, LongLongConsumer action) {
    for (long i = 0; i < buckets; i++) {
      long b = bucket(level, i);
      long tok = LevelBucket.tokenAcquire(m, b);
      while (tok != 0) {
        int s = Long.numberOfTrailingZeros(tok);
        tok &= tok - 1;
        action.accept(LevelBucket.key(m, b, s), LevelBucket.value(m, b, s));
      }
    }
  }

  /**
   * The current size of the levels.
   *
   * @return log2 of the top level's bucket count
   */
  public int k() {
    return levels.k;
  }

  @Override
  public double loadFactor() {
    return (double) size() / slotsAt(levels.k);
  }

  @Override
  public TableStats stats() {
    Levels l = levels;
    long size = size();
    long slots = slotsAt(l.k);
    PersistenceStats ps = persistence.stats();
    Map<String, Long> d = new LinkedHashMap<>();
    d.put("k", (long) l.k);
    d.put("topBuckets", 1L << l.k);
    d.put("bottomBuckets", 1L << (l.k - 1));
    d.put("resizes", resizes.get());
    d.put("shrinks", shrinks.get());
    d.put("moves", moves.get());
    d.put("bottomToTopMoves", bottomToTopMoves.get());
    return new TableStats(LevelProvider.NAME, size, slots, (double) size / slots, pool.size(), ps.linesFlushed(), ps.drains(), d);
  }

  @Override
  public Pool pool() {
    return pool;
  }

  @Override
  public String scheme() {
    return LevelProvider.NAME;
  }
}
