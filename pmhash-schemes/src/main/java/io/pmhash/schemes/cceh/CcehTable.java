package io.pmhash.schemes.cceh;

import static io.pmhash.schemes.cceh.CcehLayout.*;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.concurrent.EpochReclaimer;
import io.pmhash.core.concurrent.Prefetch;
import io.pmhash.core.concurrent.UncheckedMemory;
import io.pmhash.core.hash.Hashing;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.LongLongConsumer;
import io.pmhash.map.TableStats;
import io.pmhash.schemes.internal.Damage;
import io.pmhash.schemes.internal.DirectoryRoute;
import io.pmhash.schemes.internal.ExtendibleDirectory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

/**
 * CCEH (FAST'19): the public facade, API and lifecycle. A key's segment is the directory entry
 * of its hash's top bits; within the segment its start bucket is {@code h & 255} and the record
 * lies in one of the 16 slots (four cache lines) from that bucket's first slot (CCEH §3.3).
 * Readers hold the segment's read lock, writers its write lock ({@link CcehSegment}); a full
 * probe window splits the segment ({@link CcehSplit}); opening after a crash scans the directory
 * ({@link CcehRecovery}).
 *
 * <p>Every operation runs inside the pool's epoch ({@link EpochReclaimer#enter()}), so a
 * directory replaced by a doubling is freed only when no operation can still read it (the fix
 * Dash §6.1 applied to CCEH's lock-free directory reads). Segments are never freed.
 */
public final class CcehTable implements LongHashTable {
  private static final int PUT = 0;
  private static final int PUT_IF_ABSENT = 1;
  private static final int REPLACE = 2;
  private static final int REPLACE_IF = 3;

  final Pool pool;
  final Persistence persistence;
  final EpochReclaimer epochs;
  final CcehSegment segments;
  final CcehSplit split;
  final long header;
  final ReentrantLock directoryLock = new ReentrantLock();
  /** The DRAM route to the directory ({@link DirectoryRoute}); changed only under {@link #directoryLock}. */
  final DirectoryRoute route;
  final LongAdder size = new LongAdder();
  final AtomicLong segmentCount = new AtomicLong();
  final AtomicLong splits = new AtomicLong();
  final AtomicLong doublings = new AtomicLong();
  /** What the recovery scan of this open did (zero after a clean shutdown). */
  final CcehRecovery.Result recovered;

  private CcehTable(Pool pool, long header, boolean recover) {
    this.pool = pool;
    this.persistence = pool.persistence();
    this.epochs = pool.epochs();
    this.header = header;
    this.segments = new CcehSegment(persistence);
    this.split = new CcehSplit(this);
    this.recovered = new CcehRecovery(this).run(recover);
    // after the recovery's read-only checks of the directory (a damaged word is refused there, typed)
    this.route = new DirectoryRoute(pool.memory(), header + HDR_DIRECTORY);
    size.add(recovered.records());
    segmentCount.set(recovered.segments());
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Builds an empty table in a fresh pool: {@code 2^depth} segments and their directory, then
   * the table header published into root 0 last, so a pool whose create was interrupted holds no
   * table (open refuses it) rather than half of one.
   *
   * @param pool the pool, its header naming cceh
   * @param initialCapacity records to size the first directory for
   * @return the table
   */
  public static CcehTable create(Pool pool, long initialCapacity) {
    if (pool.root(0) != 0) {
      throw new IllegalStateException("pool already holds a table (root 0 is set)");
    }
    int depth = initialDepth(initialCapacity);
    int n = 1 << depth;
    Persistence p = pool.persistence();
    SchemeAllocator a = pool.schemeAllocator();
    SchemeAllocator.Reserved[] segs = new SchemeAllocator.Reserved[n];
    for (int i = 0; i < n; i++) {
      segs[i] = a.reserve(SEGMENT_BYTES);
    }
    SchemeAllocator.Reserved dir = a.reserve(directoryBytes(depth));
    SchemeAllocator.Reserved hdr = a.reserve(TABLE_HEADER.byteSize());
    MemorySegment m = pool.memory();
    for (int i = 0; i < n; i++) {
      long s = segs[i].offset();
      m.asSlice(s, SEG_PAIRS).fill((byte) 0);
      LONG.set(m, s + SEG_SHAPE, shape(depth, i));
      p.flush(s, SEG_PAIRS);
    }
    long d = dir.offset();
    ExtendibleDirectory.fill(m, p, d, segs);
    long h = hdr.offset();
    m.asSlice(h, TABLE_HEADER.byteSize()).fill((byte) 0);
    LONG.set(m, h + HDR_MAGIC, MAGIC);
    INT.set(m, h + HDR_VERSION, LAYOUT_VERSION);
    LONG.set(m, h + HDR_DIRECTORY, d);
    p.flush(h, TABLE_HEADER.byteSize());
    // PERSIST(create): segments, directory and header are flushed before any of them is owned
    // (the first redo step's drain orders them); the header is linked from root 0 in the last
    // step, so an interrupted create leaves owned but unreachable blocks only in a pool without
    // a table, which open refuses
    a.publishUnlinked(segs);
    try (SchemeAllocator.Step pub = a.begin()) {
      pub.publish(dir).publish(hdr, pool.rootWord(0));
      pub.commit();
    }
    return new CcehTable(pool, h, false);
  }

  /**
   * Opens the table of a pool. After an unclean shutdown the directory is scanned and repaired
   * ({@link CcehRecovery}); after a clean one, only the record count is taken from the segments'
   * bitmaps.
   *
   * @param pool the opened pool
   * @return the table
   * @throws UncheckedIOException wrapping a {@link CorruptPoolException} if the table header or
   *     directory is missing or invalid
   */
  public static CcehTable open(Pool pool) {
    long h = pool.root(0);
    String where = where(pool);
    if (h == 0) {
      throw corrupt(where + ": no cceh table (root 0 is empty): its create was interrupted; delete the file and create it again");
    }
    MemorySegment m = pool.memory();
    if (Damage.outsideBlocks(pool, pool.schemeAllocator(), h, TABLE_HEADER.byteSize()) || (h & 63) != 0) {
      throw corrupt(where + ": cceh table header offset " + h + " is outside the heap");
    }
    if ((long) LONG.get(m, h + HDR_MAGIC) != MAGIC) {
      throw corrupt(where + ": root 0 does not point at a cceh table header (bad magic)");
    }
    int version = (int) INT.get(m, h + HDR_VERSION);
    if (version != LAYOUT_VERSION) {
      throw corrupt(where + ": cceh table layout version " + version + ", expected " + LAYOUT_VERSION);
    }
    return new CcehTable(pool, h, !pool.lastShutdownClean());
  }

  static String where(Pool pool) {
    return pool.path() == null ? "volatile pool" : pool.path().toString();
  }

  static UncheckedIOException corrupt(String message) {
    return new UncheckedIOException(new CorruptPoolException(message));
  }

  /** Global depth for a capacity: segments of about 400 records (CCEH's ≈ 40 % of 1024 slots). */
  static int initialDepth(long capacity) {
    long segs = Math.max(1, (capacity + 399) / 400);
    int depth = 64 - Long.numberOfLeadingZeros(segs - 1);
    return Math.min(depth, 20);
  }

  @Override
  public void close() {
    try {
      pool.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public Pool pool() {
    return pool;
  }

  @Override
  public String scheme() {
    return CcehProvider.NAME;
  }

  // ---------------------------------------------------------------- routing

  long directory(MemorySegment m) {
    return (long) LONG.getAcquire(m, header + HDR_DIRECTORY);
  }

  int globalDepth(MemorySegment m) {
    return (int) INT.get(m, directory(m) + DIR_DEPTH);
  }

  /** The segment the directory names for {@code h}, or -1 when the mapping must be read again. */
  private long locate(MemorySegment m, long h) {
    return route.segmentFor(m, h, SEGMENT_BYTES);
  }

  // ---------------------------------------------------------------- reads

  @Override
  public long get(long key, long absent) {
    return read(key, absent, false);
  }

  @Override
  public boolean containsKey(long key) {
    return read(key, 0, true) != 0;
  }

  /**
   * A search under the segment's reader lock (CCEH's concurrency as Dash evaluated it). The
   * segment is read by address ({@link UncheckedMemory}: FFM's checks on every access are
   * instructions before the next search's first miss, docs/persistence.md "Unchecked reads"):
   * {@link DirectoryRoute#segmentAt} checks the entry and the segment against {@code m}, taken
   * inside the epoch section, so it stays mapped, and every address read lies in that segment.
   * The lock word itself is taken and released through the mapping.
   *
   * @return the value, 1 for a key found when {@code contains}, else {@code absent}
   */
  private long read(long key, long absent, boolean contains) {
    long h = Hashing.hash(key);
    int start = startSlot(h);
    EpochReclaimer e = epochs;
    EpochReclaimer.Section section = e.enterSection();
    try {
      for (;;) {
        MemorySegment m = pool.memory();
        long base = UncheckedMemory.base(m);
        long seg = route.segmentAt(m, base, h, SEGMENT_BYTES);
        if (seg < 0) {
          continue;
        }
        long a = base + seg;
        // the bitmap word and the window's first line before the lock: the lock's locked
        // instruction orders every later load after it, so these misses would follow its own
        Prefetch.keep(CcehSegment.prefetchWindowAt(a, start));
        CcehSegment.readLock(m, seg);
        try {
          if (!covers(CcehSegment.shapeAcquire(m, seg), h)) {
            continue; // split between locate and the lock: the directory names another segment now
          }
          int slot = CcehSegment.findAt(a, start, key);
          return slot < 0 ? absent : contains ? 1 : CcehSegment.valueAt(a, slot);
        } finally {
          CcehSegment.readUnlock(m, seg);
        }
      }
    } finally {
      e.exit(section);
    }
  }

  // ---------------------------------------------------------------- writes

  @Override
  public boolean put(long key, long value) {
    return write(key, value, 0, PUT);
  }

  @Override
  public boolean putIfAbsent(long key, long value) {
    return write(key, value, 0, PUT_IF_ABSENT);
  }

  @Override
  public boolean replace(long key, long value) {
    return write(key, value, 0, REPLACE);
  }

  @Override
  public boolean replace(long key, long expected, long value) {
    return write(key, value, expected, REPLACE_IF);
  }

  /**
   * Insert, update or conditional update under the segment's write lock (CCEH Algorithm 1). A key
   * already in its window is updated in place, whatever the window's fill: repeated inserts of
   * one key never split (the published code split on them and crashed after 16 splits).
   */
  private boolean write(long key, long value, long expected, int op) {
    long h = Hashing.hash(key);
    int start = startSlot(h);
    EpochReclaimer e = epochs;
    EpochReclaimer.Section section = e.enterSection();
    try {
      for (;;) {
        MemorySegment m = pool.memory();
        long seg = locate(m, h);
        if (seg < 0) {
          continue;
        }
        long shape;
        // the window's lines before the lock, so that their misses overlap the lock's (Prefetch)
        Prefetch.keep(CcehSegment.prefetchWindow(m, seg, start, PROBE_BUCKETS));
        CcehSegment.writeLock(m, seg);
        try {
          shape = CcehSegment.shapeAcquire(m, seg);
          if (!covers(shape, h)) {
            continue;
          }
          int slot = CcehSegment.find(m, seg, start, key);
          if (slot >= 0) {
            if (op == PUT_IF_ABSENT || (op == REPLACE_IF && CcehSegment.value(m, seg, slot) != expected)) {
              return false;
            }
            segments.update(m, seg, slot, value);
            return op != PUT;
          }
          if (op == REPLACE || op == REPLACE_IF) {
            return false;
          }
          slot = CcehSegment.freeSlot(m, seg, start);
          if (slot >= 0) {
            size.increment(); // before the persists (docs/persistence.md, "Counters before the persists")
            segments.insert(m, seg, slot, key, value);
            return true;
          }
        } finally {
          CcehSegment.writeUnlock(m, seg);
        }
        split.split(seg, shape); // the window is full: split (CCEH §3.4), then retry
      }
    } finally {
      e.exit(section);
    }
  }

  @Override
  public boolean remove(long key) {
    return delete(key, 0, false);
  }

  @Override
  public boolean remove(long key, long expected) {
    return delete(key, expected, true);
  }

  /** Delete, which the published code left as a TODO: clear the valid bit, one drain. */
  private boolean delete(long key, long expected, boolean conditional) {
    long h = Hashing.hash(key);
    int start = startSlot(h);
    EpochReclaimer e = epochs;
    EpochReclaimer.Section section = e.enterSection();
    try {
      for (;;) {
        MemorySegment m = pool.memory();
        long seg = locate(m, h);
        if (seg < 0) {
          continue;
        }
        // the window's lines before the lock, so that their misses overlap the lock's (Prefetch)
        Prefetch.keep(CcehSegment.prefetchWindow(m, seg, start, PROBE_BUCKETS));
        CcehSegment.writeLock(m, seg);
        try {
          if (!covers(CcehSegment.shapeAcquire(m, seg), h)) {
            continue;
          }
          int slot = CcehSegment.find(m, seg, start, key);
          if (slot < 0 || (conditional && CcehSegment.value(m, seg, slot) != expected)) {
            return false;
          }
          size.decrement(); // before the persist, as in write
          segments.delete(m, seg, slot);
          return true;
        } finally {
          CcehSegment.writeUnlock(m, seg);
        }
      }
    } finally {
      e.exit(section);
    }
  }

  // ---------------------------------------------------------------- whole table

  @Override
  public long size() {
    return size.sum();
  }

  @Override
  public double loadFactor() {
    return (double) size() / ((double) segmentCount.get() * SLOTS);
  }

  /**
   * Walks the hash space in segment ranges: the segment covering the cursor is read-locked, its
   * records copied out, and the cursor moves past its range; the action runs with no lock held.
   */
  @Override
  public void forEach(LongLongConsumer action) {
    long[] buf = new long[2 * SLOTS];
    long cursor = 0;
    for (;;) {
      int n;
      long shape;
      epochs.enter();
      try {
        MemorySegment m;
        long seg;
        for (;;) {
          m = pool.memory();
          seg = locate(m, cursor);
          if (seg < 0) {
            continue;
          }
          CcehSegment.readLock(m, seg);
          shape = CcehSegment.shapeAcquire(m, seg);
          if (covers(shape, cursor)) {
            break;
          }
          CcehSegment.readUnlock(m, seg);
        }
        try {
          n = 0;
          for (int w = 0; w < BITMAP_WORDS; w++) {
            for (long b = CcehSegment.bitmapWord(m, seg, w); b != 0; b &= b - 1) {
              int slot = 64 * w + Long.numberOfTrailingZeros(b);
              buf[n++] = CcehSegment.key(m, seg, slot);
              buf[n++] = CcehSegment.value(m, seg, slot);
            }
          }
        } finally {
          CcehSegment.readUnlock(m, seg);
        }
      } finally {
        epochs.exit();
      }
      for (int i = 0; i < n; i += 2) {
        action.accept(buf[i], buf[i + 1]);
      }
      int d = depthOf(shape);
      if (d == 0) {
        return;
      }
      long next = (patternOf(shape) + 1) << (64 - d);
      if (next == 0) {
        return;
      }
      cursor = next;
    }
  }

  /** @return the distinct segments, in hash order (quiescent tables; for tests and stats) */
  List<Long> segmentOffsets() {
    MemorySegment m = pool.memory();
    long dir = directory(m);
    int g = (int) INT.get(m, dir + DIR_DEPTH);
    List<Long> out = new ArrayList<>();
    long prev = 0;
    for (long i = 0; i < 1L << g; i++) {
      long s = (long) LONG.get(m, dir + DIR_ENTRIES + 8 * i);
      if (s != prev) {
        out.add(s);
        prev = s;
      }
    }
    return out;
  }

  @Override
  public TableStats stats() {
    MemorySegment m = pool.memory();
    long slots = segmentCount.get() * SLOTS;
    long n = size();
    Map<String, Long> details = new LinkedHashMap<>();
    details.put("globalDepth", (long) globalDepth(m));
    details.put("segments", segmentCount.get());
    details.put("splits", splits.get());
    details.put("doublings", doublings.get());
    details.put("recoveredSplits", (long) recovered.splitsFinished());
    details.put("recoveryEntriesScanned", recovered.entriesScanned());
    var ps = persistence.stats();
    return new TableStats(CcehProvider.NAME, n, slots, slots == 0 ? 0 : (double) n / slots, pool.size(), ps.linesFlushed(), ps.drains(), details);
  }
}
