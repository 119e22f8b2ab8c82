package io.pmhash.schemes.esh;

import static io.pmhash.schemes.esh.EshLayout.*;
import static io.pmhash.schemes.esh.EshSegment.*;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Persistence;
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
import java.util.concurrent.locks.ReentrantLock;

/**
 * ESH (dissertation chapter 4) and, configured with 64-byte buckets, ACCEH (chapter 3): the public
 * facade, API and lifecycle. A key's segment is the directory entry of its hash's top bits; its
 * home bucket is {@code (h >>> 8) & (buckets - 1)}. Readers are optimistic (they validate the home
 * bucket's version lock and never write, except to recover a segment a crash left unrecovered);
 * writers lock the home bucket, and the neighbour they overflow into or delete from ({@link
 * EshSegment}); a segment splits only when every bucket of it is full ({@link EshSplit}); open
 * validates the directory (O(directory) reads) and recovers nothing: segments are recovered
 * lazily ({@link EshRecovery}).
 *
 * <p>Every operation runs inside the pool's epoch ({@link EpochReclaimer#enter()}), so a directory
 * replaced by a doubling is freed only when no operation can still read it. Segments are never
 * freed (no merge, as in the paper).
 */
public final class EshTable implements LongHashTable {
  final Pool pool;
  final Persistence persistence;
  final EpochReclaimer epochs;
  final EshSegment segments;
  final EshSplit split;
  final EshRecovery recovery;
  final long header;
  final long globalVersion;
  /** The low 32 bits of {@link #globalVersion}: a bucket whose state differs is unrecovered. */
  final int stateTag;
  final ReentrantLock directoryLock = new ReentrantLock();
  /** The DRAM route to the directory ({@link DirectoryRoute}); changed only under {@link #directoryLock}. */
  final DirectoryRoute route;
  final AtomicLong splits = new AtomicLong();
  final AtomicLong doublings = new AtomicLong();
  final AtomicLong recoveredSegments = new AtomicLong();

  private EshTable(Pool pool, long header, int bucketBytes, int buckets, long globalVersion) {
    this.pool = pool;
    this.persistence = pool.persistence();
    this.epochs = pool.epochs();
    this.header = header;
    this.route = new DirectoryRoute(pool.memory(), header + HDR_DIRECTORY);
    this.globalVersion = globalVersion;
    this.stateTag = (int) globalVersion;
    this.segments = new EshSegment(persistence, pairsOf(bucketBytes), buckets);
    this.split = new EshSplit(this);
    this.recovery = new EshRecovery(this);
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * @param bucketBytes 64, 128, 192 or 256
   * @return pairs per bucket: {@code (bucketBytes - 32) / 16}
   */
  static int pairsOf(int bucketBytes) {
    return (bucketBytes - (int) PAIRS) / (int) PAIR_BYTES;
  }

  /**
   * @param bucketBytes bytes per bucket
   * @param buckets buckets per segment
   * @throws IllegalArgumentException naming the bad parameter and the accepted values
   */
  static void checkGeometry(long bucketBytes, long buckets) {
    if (bucketBytes < 64 || bucketBytes > 256 || bucketBytes % 64 != 0) {
      throw new IllegalArgumentException("esh parameter " + EshProvider.BUCKET_BYTES + " must be 64, 128, 192 or 256 (256 = ESH, 64 = ACCEH), got " + bucketBytes);
    }
    if (buckets < 1 || buckets > MAX_BUCKETS || Long.bitCount(buckets) != 1) {
      throw new IllegalArgumentException("esh parameter " + EshProvider.BUCKETS + " must be a power of two from 1 to " + MAX_BUCKETS + ", got " + buckets);
    }
  }

  /**
   * Builds an empty table in a fresh pool: {@code 2^depth} segments and their directory, then the
   * table header published into root 0 last, so a pool whose create was interrupted holds no
   * table (open refuses it) rather than half of one.
   *
   * @param pool the pool, its header naming esh
   * @param bucketBytes bytes per bucket: 256 for ESH, 64 for ACCEH
   * @param buckets buckets per segment, a power of two up to 64
   * @param initialCapacity records to size the first directory for
   * @return the table
   */
  public static EshTable create(Pool pool, int bucketBytes, int buckets, long initialCapacity) {
    checkGeometry(bucketBytes, buckets);
    if (pool.root(0) != 0) {
      throw new IllegalStateException("pool already holds a table (root 0 is set)");
    }
    EshSegment geometry = new EshSegment(pool.persistence(), pairsOf(bucketBytes), buckets);
    int depth = ExtendibleDirectory.initialDepth(initialCapacity, (long) buckets * geometry.pairs * 3 / 4);
    long gv = pool.recoveryEpoch();
    int n = 1 << depth;
    Persistence p = pool.persistence();
    SchemeAllocator a = pool.schemeAllocator();
    SchemeAllocator.Reserved[] segs = new SchemeAllocator.Reserved[n];
    for (int i = 0; i < n; i++) {
      segs[i] = a.reserve(geometry.bytes);
    }
    MemorySegment m = pool.memory();
    for (int i = 0; i < n; i++) {
      long s = segs[i].offset();
      m.asSlice(s, geometry.bytes).fill((byte) 0);
      LONG.set(m, s + SEG_SHAPE, shape(depth, i));
      LONG.set(m, s + SEG_RECOVERY_LOCK, 2 * gv);
      for (int b = 0; b < buckets; b++) {
        INT.set(m, geometry.bucket(s, b) + STATE, (int) gv);
      }
      p.flush(s, geometry.bytes);
    }
    SchemeAllocator.Reserved dir = a.reserve(ExtendibleDirectory.bytes(depth));
    SchemeAllocator.Reserved hdr = a.reserve(TABLE_HEADER.byteSize());
    m = pool.memory();
    ExtendibleDirectory.fill(m, p, dir.offset(), segs);
    long h = hdr.offset();
    m.asSlice(h, TABLE_HEADER.byteSize()).fill((byte) 0);
    LONG.set(m, h + HDR_MAGIC, MAGIC);
    INT.set(m, h + HDR_VERSION, LAYOUT_VERSION);
    INT.set(m, h + HDR_BUCKET_BYTES, bucketBytes);
    INT.set(m, h + HDR_BUCKETS, buckets);
    LONG.set(m, h + HDR_DIRECTORY, dir.offset());
    LONG.set(m, h + HDR_GLOBAL_VERSION, gv);
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
    return new EshTable(pool, h, bucketBytes, buckets, gv);
  }

  /**
   * Opens the table of a pool, recovering nothing (§4.3.7, Table 4.1): after an unclean shutdown
   * the global version becomes the pool's new recovery epoch (persisted), which makes every
   * bucket's state stale; segments are recovered on first touch ({@link EshRecovery}). Before
   * that, the directory is validated (O(directory) reads, issue 9): every entry an allocated
   * segment block whose shape covers it; a damaged pool is refused, unchanged.
   *
   * @param pool the opened pool
   * @return the table
   * @throws UncheckedIOException wrapping a {@link CorruptPoolException} if the table header is
   *     missing or invalid
   */
  public static EshTable open(Pool pool) {
    long h = pool.root(0);
    String where = pool.path() == null ? "volatile pool" : pool.path().toString();
    if (h == 0) {
      throw corrupt(where + ": no esh table (root 0 is empty): its create was interrupted; delete the file and create it again");
    }
    MemorySegment m = pool.memory();
    if (Damage.outsideBlocks(pool, pool.schemeAllocator(), h, TABLE_HEADER.byteSize()) || (h & 63) != 0) {
      throw corrupt(where + ": esh table header offset " + h + " is outside the heap");
    }
    if ((long) LONG.get(m, h + HDR_MAGIC) != MAGIC) {
      throw corrupt(where + ": root 0 does not point at an esh table header (bad magic)");
    }
    int version = (int) INT.get(m, h + HDR_VERSION);
    if (version != LAYOUT_VERSION) {
      throw corrupt(where + ": esh table layout version " + version + ", expected " + LAYOUT_VERSION);
    }
    int bucketBytes = (int) INT.get(m, h + HDR_BUCKET_BYTES);
    int buckets = (int) INT.get(m, h + HDR_BUCKETS);
    long[] params = pool.schemeParams();
    try {
      checkGeometry(bucketBytes, buckets);
    } catch (IllegalArgumentException e) {
      throw corrupt(where + ": esh table header: " + e.getMessage());
    }
    if (params.length < 2 || params[0] != bucketBytes || params[1] != buckets) {
      throw corrupt(where + ": esh geometry " + bucketBytes + " B x " + buckets + " buckets differs from the pool header's parameters");
    }
    long dir = (long) LONG.get(m, h + HDR_DIRECTORY);
    if (Damage.outsideBlocks(pool, pool.schemeAllocator(), dir, ExtendibleDirectory.ENTRIES) || (dir & 63) != 0) {
      throw corrupt(where + ": esh directory offset " + dir + " is outside the pool or not 64-byte aligned");
    }
    // Reads only, O(directory), before anything is written (issue 9): the directory and each
    // segment it names, whose shape must cover its entries at every moment (EshSplit, invariant I),
    // so routing never follows a damaged entry nor retries for ever on a shape that covers nothing.
    EshSegment geometry = new EshSegment(pool.persistence(), pairsOf(bucketBytes), buckets);
    ExtendibleDirectory.validate(pool, pool.schemeAllocator(), dir, geometry.bytes, (mm, seg, first, count, g) -> {
      long shape = EshSegment.shapeAcquire(mm, seg);
      return ExtendibleDirectory.coverage(depthOf(shape), patternOf(shape), first, count, g);
    }, EshProvider.NAME);
    long gv;
    if (pool.lastShutdownClean()) {
      gv = (long) LONG.get(m, h + HDR_GLOBAL_VERSION);
    } else {
      gv = pool.recoveryEpoch();
      LONG.setRelease(m, h + HDR_GLOBAL_VERSION, gv);
      // PERSIST(§4.3.7): the new global version is durable before any bucket is recovered to it
      pool.persistence().persist(h + HDR_GLOBAL_VERSION, 8);
    }
    return new EshTable(pool, h, bucketBytes, buckets, gv);
  }

  private static UncheckedIOException corrupt(String message) {
    return new UncheckedIOException(new CorruptPoolException(message));
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
    return EshProvider.NAME;
  }

  // ---------------------------------------------------------------- routing

  long directory(MemorySegment m) {
    return (long) LONG.getAcquire(m, header + HDR_DIRECTORY);
  }

  int globalDepth() {
    MemorySegment m = pool.memory();
    return ExtendibleDirectory.depth(m, directory(m));
  }

  /** The segment the directory names for {@code h}, or -1 when the mapping must be read again. */
  private long locate(MemorySegment m, long h) {
    return route.segmentFor(m, h, segments.bytes);
  }

  private static boolean covers(long shape, long h) {
    return ExtendibleDirectory.prefix(h, depthOf(shape)) == patternOf(shape);
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
   * Algorithm 4.2, optimistic: snapshot the home bucket's version, check its state, search the
   * home and (only if its OC says so) the buckets its OFRB names, validate, retry; never writes.
   */
  private long read(long key, long absent, boolean contains) {
    long h = Hashing.hash(key);
    int fp = fingerprint(h);
    EshSegment s = segments;
    int y = s.bucketIndex(h);
    EpochReclaimer e = epochs;
    EpochReclaimer.Section section = e.enterSection();
    try {
      for (;;) {
        MemorySegment m = pool.memory();
        // read by address, as DashEhTable.read does (docs/persistence.md "Unchecked reads"): the
        // route checks the segment against m, taken inside the epoch section
        long base = UncheckedMemory.base(m);
        long seg = route.segmentAt(m, base, h, s.bytes);
        if (seg < 0) {
          continue;
        }
        long hb = s.bucket(seg, y);
        long aseg = base + seg;
        long ah = s.bucket(aseg, y);
        // the home bucket's record lines with its metadata line: a search that finds its key (or
        // one of the 0.8 wrong keys a 4-bit fingerprint lets through) reads one, and loaded after
        // the fingerprints it is a second miss (format/esh.md, "Against Dash-EH"); never trusted
        Prefetch.keep(s.recordLinesAt(ah));
        int v = VersionLock.snapshotAt(ah + LOCK);
        if (UncheckedMemory.getInt(ah + STATE) != stateTag) {
          recovery.recover(m, seg, hb); // Alg. 4.2 line 8: the bucket is not consistent
          continue;
        }
        if (VersionLock.isLocked(v)) {
          Damage.awaitUnlocked(m, hb + LOCK, "esh bucket lock");
          continue;
        }
        if (!covers(UncheckedMemory.getLong(aseg + SEG_SHAPE), h)) {
          continue; // split between locate and the snapshot
        }
        long loc = s.locateAt(aseg, ah, key, fp);
        long r = loc < 0 ? absent : contains ? 1 : EshSegment.valueAt(loc);
        if (VersionLock.unchangedAt(ah + LOCK, v)) {
          return r;
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

  @Override
  public boolean remove(long key) {
    return write(key, 0, 0, REMOVE);
  }

  @Override
  public boolean remove(long key, long expected) {
    return write(key, 0, expected, REMOVE_IF);
  }

  /** Algorithm 4.1 and the other writers: lock the home bucket (§4.3.1 (b)), act, unlock. */
  private boolean write(long key, long value, long expected, int op) {
    long h = Hashing.hash(key);
    int fp = fingerprint(h);
    EshSegment s = segments;
    int y = s.bucketIndex(h);
    EpochReclaimer e = epochs;
    int busy = 0;
    EpochReclaimer.Section section = e.enterSection();
    try {
      for (;;) {
        MemorySegment m = pool.memory();
        long seg = locate(m, h);
        if (seg < 0) {
          continue;
        }
        long hb = s.bucket(seg, y);
        // the lines the critical section reads, before its lock: their misses overlap, and the work
        // under it hits the cache (Prefetch). The home bucket whole, and the next bucket: the one
        // an insert into a full home overflows to when it has room (EshSegment.insertOverflow), and
        // the one a home's OFRB names most often, which an absence check or a delete then reads;
        // its record lines only for an insert. By address (locate checked the segment against m)
        // and unrolled, as the read's (EshSegment.recordLinesAt)
        long base = UncheckedMemory.base(m);
        long ah = base + hb;
        long an = base + s.bucket(seg, (y + 1) & (s.buckets - 1));
        long next = UncheckedMemory.getLong(an) ^ (op == PUT || op == PUT_IF_ABSENT ? s.recordLinesAt(an) : 0);
        Prefetch.keep(UncheckedMemory.getLong(ah) ^ s.recordLinesAt(ah) ^ next);
        if (state(m, hb) != stateTag) {
          recovery.recover(m, seg, hb); // Alg. 4.1 line 9: the bucket is not consistent
          continue;
        }
        Damage.lock(m, hb + LOCK, "esh bucket lock");
        int held = VersionLock.held(m, hb + LOCK);
        long shape;
        int r;
        try {
          shape = shapeAcquire(m, seg);
          if (!covers(shape, h)) {
            continue; // split while we waited
          }
          r = s.write(m, seg, hb, key, value, expected, op, fp);
        } finally {
          VersionLock.unlock(m, hb + LOCK, held); // no load of the line the write persisted
        }
        if (r == TRUE || r == FALSE) {
          return r == TRUE;
        }
        if (r == FULL) {
          split.split(seg, shape); // every bucket of the segment is full (§4.3.5): split, then retry
        } else {
          busy = Damage.backOff(busy, "an esh neighbour bucket lock"); // let its holder finish
        }
      }
    } finally {
      e.exit(section);
    }
  }

  // ---------------------------------------------------------------- whole table

  /**
   * Every distinct segment in hash order, each recovered; exact on a quiescent table (tests,
   * stats, size).
   *
   * <p>After a crash every segment is recovered here on the first call. A recovery changes only
   * the hash range of the segment it recovers (a split it finishes, its own or its old half's,
   * stays inside that range, and an old half listed earlier was recovered, so its split was
   * finished then), so the walk goes on from the entry it recovered rather than from the first:
   * starting again from the first made the first call after a crash quadratic in the number of
   * segments (2.0 s at 6M records, against 0.15 s for Dash-EH's).
   */
  long[] segmentOffsets() {
    epochs.enter();
    try {
      List<Long> out = new ArrayList<>();
      long from = 0; // the first hash of the entry to go on from; out holds every segment before it
      restart:
      for (;;) {
        MemorySegment m = pool.memory();
        long dir = directory(m);
        int g = ExtendibleDirectory.depth(m, dir);
        for (long i = ExtendibleDirectory.prefix(from, g); i < 1L << g; ) {
          long seg = (long) LONG.getAcquire(m, ExtendibleDirectory.entry(m, dir, i));
          if (!recovery.recovered(m, seg)) {
            recovery.recover(m, seg);
            from = i << (64 - g); // at depth 0, i is 0
            continue restart;
          }
          int d = depthOf(shapeAcquire(m, seg));
          if (d > g) {
            out.clear(); // a doubling since the directory was read: start again
            from = 0;
            continue restart;
          }
          out.add(seg);
          i += 1L << (g - d);
        }
        long[] a = new long[out.size()];
        for (int k = 0; k < a.length; k++) {
          a[k] = out.get(k);
        }
        return a;
      }
    } finally {
      epochs.exit();
    }
  }

  /** Recovers every segment now (tests; a crash test's recovery ends here). */
  void recoverAll() {
    segmentOffsets();
  }

  @Override
  public long size() {
    return records(segmentOffsets());
  }

  private long records(long[] segs) {
    MemorySegment m = pool.memory(); // read after the offsets: covers them
    long n = 0;
    for (long seg : segs) {
      n += segments.records(m, seg);
    }
    return n;
  }

  /** @return record slots in {@code count} segments */
  long slots(long count) {
    return count * segments.buckets * segments.pairs;
  }

  @Override
  public double loadFactor() {
    long[] segs = segmentOffsets();
    return (double) records(segs) / slots(segs.length);
  }

  /**
   * Walks the hash space one segment range at a time: the segment covering the cursor is copied
   * bucket by bucket (each copy validated against its bucket's version), and copied again if its
   * shape changed meanwhile; the action runs outside the epoch.
   */
  @Override
  public void forEach(LongLongConsumer action) {
    EshSegment s = segments;
    long[] buf = new long[2 * s.buckets * s.pairs];
    long cursor = 0;
    for (;;) {
      int n;
      long shape;
      epochs.enter();
      try {
        for (;;) {
          MemorySegment m = pool.memory();
          long seg = locate(m, cursor);
          if (seg < 0) {
            continue;
          }
          if (!recovery.recovered(m, seg)) {
            recovery.recover(m, seg);
            continue;
          }
          shape = shapeAcquire(m, seg);
          if (!covers(shape, cursor)) {
            continue;
          }
          n = copy(m, seg, buf);
          if (shapeAcquire(m, seg) == shape) {
            break;
          }
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

  private int copy(MemorySegment m, long seg, long[] buf) {
    int n = 0;
    for (int i = 0; i < segments.buckets; i++) {
      long b = segments.bucket(seg, i);
      for (;;) {
        int v = VersionLock.snapshotAcquire(m, b + LOCK);
        if (VersionLock.isLocked(v)) {
          Damage.awaitUnlocked(m, b + LOCK, "esh bucket lock");
          continue;
        }
        int k = n;
        for (int a = alloc(commitAcquire(m, b)); a != 0; a &= a - 1) {
          int slot = Integer.numberOfTrailingZeros(a);
          buf[k++] = key(m, b, slot);
          buf[k++] = value(m, b, slot);
        }
        if (VersionLock.validate(m, b + LOCK, v)) {
          n = k;
          break;
        }
      }
    }
    return n;
  }

  @Override
  public TableStats stats() {
    long[] segs = segmentOffsets();
    long n = records(segs);
    MemorySegment m = pool.memory();
    long foreign = 0;
    for (long seg : segs) {
      for (int i = 0; i < segments.buckets; i++) {
        foreign += Integer.bitCount(EshLayout.foreign(commitAcquire(m, segments.bucket(seg, i))));
      }
    }
    long slots = slots(segs.length);
    Map<String, Long> details = new LinkedHashMap<>();
    details.put("segments", (long) segs.length);
    details.put("globalDepth", (long) globalDepth());
    details.put("bucketBytes", segments.bucketBytes);
    details.put("bucketsPerSegment", (long) segments.buckets);
    details.put("overflowRecords", foreign);
    details.put("splits", splits.get());
    details.put("doublings", doublings.get());
    details.put("recoveredSegments", recoveredSegments.get());
    details.put("globalVersion", globalVersion);
    var ps = persistence.stats();
    return new TableStats(EshProvider.NAME, n, slots, slots == 0 ? 0 : (double) n / slots, pool.size(), ps.linesFlushed(), ps.drains(), details);
  }

  @Override
  public String toString() {
    return "esh table (" + segments.bucketBytes + " B buckets, " + segments.buckets + " per segment, global version " + globalVersion + ") in " + pool;
  }
}
