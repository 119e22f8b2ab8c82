package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashBucket.*;
import static io.pmhash.schemes.dash.DashLayout.*;
import static io.pmhash.schemes.dash.DashSegment.*;

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
 * Dash-EH (Dash §4): the public facade, API and lifecycle. The hot paths are {@link #get} (Dash
 * Algorithm 3: optimistic, never writes) and the writers, which lock the key's two buckets and
 * call {@link DashSegment}; structural changes live in {@link DashSplit}, lazy recovery in
 * {@link DashRecovery}.
 *
 * <p>Every operation runs inside the pool's epoch ({@link EpochReclaimer#enter()}), so a
 * directory replaced by a doubling is freed only when no operation can still read it.
 *
 * <p><b>Routing.</b> The directory entry {@code h >>> (64 - g)} names a segment; a segment whose
 * shape (depth and pattern) does not cover the hash forwards through its side link to its right
 * neighbour (the B-link idea the side links of §4.7 make possible). A split therefore never needs
 * the directory and the segments to change in one atomic step: a stale entry costs one hop.
 */
public final class DashEhTable implements LongHashTable {
  private static final int PUT = 0;
  private static final int PUT_IF_ABSENT = 1;
  private static final int REPLACE = 2;
  private static final int REPLACE_IF = 3;
  private static final int REMOVE = 4;
  private static final int REMOVE_IF = 5;

  final Pool pool;
  final Persistence persistence;
  final EpochReclaimer epochs;
  final DashSegment segments;
  final DashSplit split;
  final DashRecovery recovery;
  final DashMerge merge;
  final long header;
  final long globalVersion;
  final int stash;
  /** Normal buckets per segment (the table header's count; {@link DashLayout#NORMAL_BUCKETS} by default). */
  final int normal;
  final ReentrantLock directoryLock = new ReentrantLock();
  /** The DRAM route to the directory; changed only under {@link #directoryLock}. */
  final DirectoryRoute route;
  /**
   * Segments whose local depth equals the global depth, or -1 when unknown (after open, after
   * a halving): a halving is possible only at 0. Guarded by {@link #directoryLock}; every
   * change of a local depth at run time happens under it.
   */
  int segmentsAtGlobalDepth = -1;
  final AtomicLong splits = new AtomicLong();
  final AtomicLong doublings = new AtomicLong();
  final AtomicLong recoveredSegments = new AtomicLong();
  final AtomicLong merges = new AtomicLong();
  final AtomicLong halvings = new AtomicLong();

  private DashEhTable(Pool pool, long header, int normal, int stash, long globalVersion, boolean pointer, int techniques) {
    this.pool = pool;
    this.persistence = pool.persistence();
    this.epochs = pool.epochs();
    this.header = header;
    this.stash = stash;
    this.normal = normal;
    this.globalVersion = globalVersion;
    this.segments = new DashSegment(persistence, normal, stash, pointer, pool.schemeAllocator(), techniques);
    this.split = new DashSplit(this);
    this.recovery = new DashRecovery(this);
    this.merge = new DashMerge(this);
    this.route = new DirectoryRoute(pool.memory(), header + HDR_DIRECTORY);
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Builds an empty table in a fresh pool: a directory of {@code 2^depth} segments, then the
   * table header published into root 0 last, so a pool whose create was interrupted has no
   * table (open refuses it) rather than half of one.
   *
   * @param pool the pool, its header naming dash-eh
   * @param stash stash buckets per segment, 2..4
   * @param initialCapacity records to size the first directory for
   * @return the table
   */
  public static DashEhTable create(Pool pool, int stash, long initialCapacity) {
    return create(pool, NORMAL_BUCKETS, stash, initialCapacity, false);
  }

  /**
   * Builds an empty inline table whose segments have {@code normal} normal buckets (Dash §6.6,
   * Fig. 11 varies the segment size); otherwise {@link #create(Pool, int, long)}.
   *
   * @param pool the pool, its header naming dash-eh
   * @param normal normal buckets per segment, a power of two {@value DashLayout#MIN_NORMAL_BUCKETS}..{@value
   *     DashLayout#MAX_NORMAL_BUCKETS}
   * @param stash stash buckets per segment, 2..4
   * @param initialCapacity records to size the first directory for
   * @return the table
   */
  public static DashEhTable create(Pool pool, int normal, int stash, long initialCapacity) {
    return create(pool, normal, stash, initialCapacity, false);
  }

  /**
   * {@link #create(Pool, int, long)} in inline or pointer mode (Dash §4.5, recorded in the table
   * header's key mode). A pointer-mode table is used only through {@link DashPointerTable}.
   *
   * @param pool the pool, its header naming dash-eh
   * @param normal normal buckets per segment, a power of two 4..512
   * @param stash stash buckets per segment, 2..4
   * @param initialCapacity records to size the first directory for
   * @param pointer whether slots hold record offsets and hashes
   * @return the table
   */
  static DashEhTable create(Pool pool, int normal, int stash, long initialCapacity, boolean pointer) {
    return create(pool, normal, stash, initialCapacity, pointer, DashSegment.TECHNIQUES_ALL);
  }

  /**
   * {@link #create(Pool, int, int, long, boolean)} whose inserts use only some of Dash's insert
   * techniques ({@link DashEhProvider#INSERT_TECHNIQUES}; not recorded in the pool).
   */
  static DashEhTable create(Pool pool, int normal, int stash, long initialCapacity, boolean pointer, int techniques) {
    checkStash(stash);
    checkNormal(normal);
    checkTechniques(techniques);
    if (pool.root(0) != 0) {
      throw new IllegalStateException("pool already holds a table (root 0 is set)");
    }
    int depth = initialDepth(initialCapacity, normal);
    long gv = pool.recoveryEpoch();
    long segBytes = segmentBytes(normal, stash);
    int n = 1 << depth;
    Persistence p = pool.persistence();
    SchemeAllocator a = pool.schemeAllocator();
    SchemeAllocator.Reserved[] segs = new SchemeAllocator.Reserved[n];
    for (int i = 0; i < n; i++) {
      segs[i] = a.reserve(segBytes);
    }
    SchemeAllocator.Reserved dir = a.reserve(directoryBytes(depth));
    SchemeAllocator.Reserved hdr = a.reserve(TABLE_HEADER.byteSize());
    MemorySegment m = pool.memory();
    for (int i = 0; i < n; i++) {
      long s = segs[i].offset();
      m.asSlice(s, segBytes).fill((byte) 0);
      LONG.set(m, s + SEG_SHAPE, shape(depth, NORMAL, i));
      LONG.set(m, s + SEG_SIDE, i + 1 < n ? segs[i + 1].offset() : 0L);
      LONG.set(m, s + SEG_VERSION, gv);
      p.flush(s, segBytes);
    }
    long d = dir.offset();
    ExtendibleDirectory.fill(m, p, d, segs);
    long h = hdr.offset();
    m.asSlice(h, TABLE_HEADER.byteSize()).fill((byte) 0);
    LONG.set(m, h + HDR_MAGIC, MAGIC);
    INT.set(m, h + HDR_VERSION, LAYOUT_VERSION);
    INT.set(m, h + HDR_STASH, stash);
    LONG.set(m, h + HDR_DIRECTORY, d);
    LONG.set(m, h + HDR_GLOBAL_VERSION, gv);
    INT.set(m, h + HDR_KEY_MODE, pointer ? KEY_MODE_POINTER : KEY_MODE_INLINE);
    INT.set(m, h + HDR_NORMAL, normal);
    p.flush(h, TABLE_HEADER.byteSize());
    // PERSIST(create): segments, directory and header are durable before any of them is owned
    // and linked; the header is linked from root 0 in the last step, so everything before is
    // unreachable (and the pool without a table) if the create is interrupted
    a.publishUnlinked(segs);
    try (SchemeAllocator.Step pub = a.begin()) {
      pub.publish(dir).publish(hdr, pool.rootWord(0));
      pub.commit();
    }
    return new DashEhTable(pool, h, normal, stash, gv, pointer, techniques);
  }

  /**
   * Opens the inline table of a pool: {@link #open(Pool, boolean)} with {@code pointer = false}.
   *
   * @param pool the opened pool
   * @return the table
   * @throws UncheckedIOException wrapping a {@link CorruptPoolException} if the table header is
   *     missing or invalid, or a {@link io.pmhash.core.SchemeMismatchException} if it is in
   *     pointer mode
   */
  public static DashEhTable open(Pool pool) {
    return open(pool, false);
  }

  /**
   * Opens the table of a pool: no segment is recovered (Dash §4.8: after an unclean shutdown
   * the global version becomes the pool's new recovery epoch, persisted, so every segment is
   * recovered on first touch), and nothing else is written. What open reads is O(directory):
   * the directory, each segment's header word and the side-link chain are validated first
   * (issue 9, {@code validateStructure}), so a damaged pool is refused here, unchanged, rather
   * than followed by the routing; no record is read.
   *
   * @param pool the opened pool
   * @return the table
   * @throws UncheckedIOException wrapping a {@link CorruptPoolException} if the table header is
   *     missing or invalid
   */
  static DashEhTable open(Pool pool, boolean pointer) {
    return open(pool, pointer, DashSegment.TECHNIQUES_ALL);
  }

  /** {@link #open(Pool, boolean)} whose inserts use only some of Dash's insert techniques (the Fig. 11 experiment). */
  static DashEhTable open(Pool pool, boolean pointer, int techniques) {
    checkTechniques(techniques);
    long h = pool.root(0);
    String where = pool.path() == null ? "volatile pool" : pool.path().toString();
    if (h == 0) {
      throw corrupt(where + ": no dash-eh table (root 0 is empty): its create was interrupted; delete the file and create it again");
    }
    MemorySegment m = pool.memory();
    if (Damage.outsideBlocks(pool, pool.schemeAllocator(), h, TABLE_HEADER.byteSize()) || (h & 63) != 0) {
      throw corrupt(where + ": dash-eh table header offset " + h + " is outside the heap");
    }
    if ((long) LONG.get(m, h + HDR_MAGIC) != MAGIC) {
      throw corrupt(where + ": root 0 does not point at a dash-eh table header (bad magic)");
    }
    int version = (int) INT.get(m, h + HDR_VERSION);
    if (version != LAYOUT_VERSION) {
      throw corrupt(where + ": dash-eh table layout version " + version + ", expected " + LAYOUT_VERSION);
    }
    int stash = (int) INT.get(m, h + HDR_STASH);
    long[] params = pool.schemeParams();
    if (stash < MIN_STASH || stash > MAX_STASH || params.length < 1 || params[0] != stash) {
      throw corrupt(where + ": dash-eh stash bucket count " + stash + " is not 2..4 or differs from the pool header's");
    }
    int normal = normalOf((int) INT.get(m, h + HDR_NORMAL));
    if (!validNormal(normal) || normal != normalOf(params.length < 2 ? 0 : params[1])) {
      throw corrupt(where + ": dash-eh normal bucket count " + normal + " is not a power of two "
          + MIN_NORMAL_BUCKETS + ".." + MAX_NORMAL_BUCKETS + " or differs from the pool header's");
    }
    long dir = (long) LONG.get(m, h + HDR_DIRECTORY);
    if (Damage.outsideBlocks(pool, pool.schemeAllocator(), dir, DIR_ENTRIES) || (dir & 63) != 0) {
      throw corrupt(where + ": dash-eh directory offset " + dir + " is outside the pool or not 64-byte aligned");
    }
    int mode = (int) INT.get(m, h + HDR_KEY_MODE);
    if (mode != KEY_MODE_INLINE && mode != KEY_MODE_POINTER) {
      throw corrupt(where + ": dash-eh key mode " + mode + " is neither 0 (inline) nor 1 (pointer)");
    }
    if ((mode == KEY_MODE_POINTER) != pointer) {
      throw new UncheckedIOException(new io.pmhash.core.SchemeMismatchException(where + ": the dash-eh table is in "
          + (pointer ? "inline" : "pointer") + " mode, not " + (pointer ? "pointer" : "inline") + " mode: open it with "
          + (pointer ? "PmHash.open" : "PmHash.openMap and the codecs it was created with")));
    }
    int depth = (int) INT.get(m, dir + DIR_DEPTH);
    if (depth < 0 || depth > MAX_GLOBAL_DEPTH || dir + directoryBytes(depth) > m.byteSize()) {
      // Routing would read entries beyond the mapping and wait for ever for a growth that
      // never comes (found by the bad-input fuzz test).
      throw corrupt(where + ": dash-eh directory at " + dir + " has global depth " + depth
          + ", not 0.." + MAX_GLOBAL_DEPTH + " or reaching past the end of the pool");
    }
    long gv = pool.lastShutdownClean() ? (long) LONG.get(m, h + HDR_GLOBAL_VERSION) : pool.recoveryEpoch();
    validateStructure(pool, dir, segmentBytes(normal, stash), gv);
    if (!pool.lastShutdownClean()) {
      LONG.setRelease(m, h + HDR_GLOBAL_VERSION, gv);
      // PERSIST(§4.8): the new global version is durable before any segment is recovered to it
      pool.persistence().persist(h + HDR_GLOBAL_VERSION, 8);
    }
    return new DashEhTable(pool, h, normal, stash, gv, pointer, techniques);
  }

  /**
   * What open checks beyond the table header, reading only (so a refused open writes nothing) and
   * O(directory), never a record (issue 9): the directory ({@link ExtendibleDirectory#validate}:
   * depth, every entry an allocated segment block) and each segment it names: an SMO state
   * 0..4 and a local depth at most the global depth; a segment already in the current version
   * (recovered or made in the session that closed cleanly, so no structural change of it is in
   * flight) must be NORMAL and cover exactly the entries that name it; one left unrecovered by an
   * earlier crash may be in any state its lazy recovery repairs. Then the side-link chain from
   * entry 0: every link an allocated segment block, no loop. Routing ({@link #locate}) follows
   * nothing else, so after this it can neither leave the heap nor loop.
   *
   * <p>The chain is checked with the directory when it can be ({@link SideLinks}): when no split
   * or merge was left in flight, it is exactly the directory's segments in order, which the
   * directory pass has just checked, so one comparison per segment proves it. Otherwise it is
   * walked node by node ({@link Damage#walkChain}), as it always was before: in a fresh JVM that
   * walk was half of a 10M-record open's checks (docs/persistence.md, "What an open costs in a
   * fresh JVM").
   */
  private static void validateStructure(Pool pool, long dir, long segBytes, long gv) {
    boolean clean = pool.lastShutdownClean();
    SideLinks links = new SideLinks();
    ExtendibleDirectory.validate(pool, pool.schemeAllocator(), dir, segBytes, (m, seg, first, count, g) -> {
      links.next(seg, (long) LONG.getAcquire(m, seg + SEG_SIDE));
      long shape = shapeAcquire(m, seg);
      int state = stateOf(shape);
      if (state > MERGED) {
        return "has SMO state " + state + ", not 0..4";
      }
      if (depthOf(shape) > g) {
        return "has local depth " + depthOf(shape) + ", above the global depth";
      }
      if (clean && (long) LONG.getAcquire(m, seg + SEG_VERSION) == gv) {
        return state != NORMAL ? "is in SMO state " + state + " after a clean shutdown"
            : ExtendibleDirectory.coverage(depthOf(shape), patternOf(shape), first, count, g);
      }
      return null;
    }, DashEhProvider.NAME);
    if (links.followTheDirectory()) {
      return;
    }
    MemorySegment m = pool.memory();
    long first = (long) LONG.getAcquire(m, dir + DIR_ENTRIES);
    Damage.walkChain(pool, pool.schemeAllocator(), first, seg -> (long) LONG.getAcquire(m, seg + SEG_SIDE), segBytes, 64,
        "dash-eh side-link chain");
  }

  /**
   * Whether the side-link chain from entry 0 is the directory's runs of entries in order: the
   * runs' segments are s0, s1, ..., s(R-1) (a segment may name two runs if the pool is damaged),
   * {@link #next} is given each run's segment and its side link in that order, and the chain is
   * them when side(sk) = s(k+1) for every k and side(s(R-1)) = 0. Then every chain node is a
   * segment the directory pass checked (an allocated block), and the chain has no loop: were
   * si = sj with i &lt; j, their equal side links would make s(i+1) = s(j+1) and so on up to
   * s(R-1-(j-i)) = s(R-1), whose side links would be s(R-(j-i)), a directory entry and not 0, and
   * 0. Anything else (a split or merge left in flight by a crash, damage) answers false, and the
   * chain is walked node by node.
   */
  static final class SideLinks {
    /** Whether a run was given; no sentinel in {@link #expected}: a damaged link may hold any value. */
    private boolean started;
    /** The side link of the last run's segment. */
    private long expected;
    private boolean matching = true;

    void next(long seg, long side) {
      if (started && expected != seg) {
        matching = false;
      }
      started = true;
      expected = side;
    }

    boolean followTheDirectory() {
      return matching && expected == 0;
    }
  }

  private static UncheckedIOException corrupt(String message) {
    return new UncheckedIOException(new CorruptPoolException(message));
  }

  static void checkStash(long stash) {
    if (stash < MIN_STASH || stash > MAX_STASH) {
      throw new IllegalArgumentException("dash-eh parameter stashBuckets must be 2..4, got " + stash);
    }
  }

  static void checkNormal(long normal) {
    if (!validNormal(normal)) {
      throw new IllegalArgumentException("dash-eh parameter normalBuckets must be a power of two from "
          + MIN_NORMAL_BUCKETS + " to " + MAX_NORMAL_BUCKETS + " (1 KB to 128 KB segments of 256-byte buckets), got " + normal);
    }
  }

  static void checkTechniques(long techniques) {
    if (techniques < DashSegment.TECHNIQUES_BUCKETIZED || techniques > DashSegment.TECHNIQUES_ALL) {
      throw new IllegalArgumentException("dash-eh parameter " + DashEhProvider.INSERT_TECHNIQUES + " must be 0..4 (0 the target"
          + " bucket only, 1 + the probing bucket, 2 balanced insert, 3 + displacement, 4 + stashing: Dash), got " + techniques);
    }
  }

  private static boolean validNormal(long normal) {
    return normal >= MIN_NORMAL_BUCKETS && normal <= MAX_NORMAL_BUCKETS && Long.bitCount(normal) == 1;
  }

  /** A recorded normal bucket count: 0, in a pool made before the count was recorded, is 64. */
  static int normalOf(long recorded) {
    return recorded == 0 ? NORMAL_BUCKETS : (int) Math.min(recorded, Integer.MAX_VALUE);
  }

  /**
   * Global depth for a capacity: segments of about 700 records per 64 normal buckets (≈ 75 % of
   * the 924 slots of a default segment), scaled to the table's normal bucket count.
   */
  static int initialDepth(long capacity, int normal) {
    return ExtendibleDirectory.initialDepth(capacity, 700L * normal / NORMAL_BUCKETS);
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
    return DashEhProvider.NAME;
  }

  // ---------------------------------------------------------------- routing

  /**
   * The segment covering {@code h}, recovered (§4.8) and reached through side links where the
   * directory is stale; -1 when the pool grew and {@code m} must be read again. The directory is
   * the one {@link #route} names, or the header's while a doubling or halving is in flight.
   */
  long locate(MemorySegment m, long h) {
    long limit = m.byteSize();
    long r = route.get(); // 0 while a doubling or halving is in flight: then the header's word
    long dir = r != 0 ? DirectoryRoute.directoryOf(r) : route.directory(m);
    if (dir + DIR_ENTRIES > limit) {
      return -1;
    }
    int g = r != 0 ? DirectoryRoute.depthOf(r) : (int) INT.get(m, dir + DIR_DEPTH);
    long e = dir + DIR_ENTRIES + 8 * prefix(h, g);
    if (e + 8 > limit) {
      return -1;
    }
    long seg = (long) LONG.getAcquire(m, e);
    long bytes = segments.bytes;
    for (;;) {
      if (seg + bytes > limit) {
        return -1;
      }
      if ((long) LONG.getAcquire(m, seg + SEG_VERSION) != globalVersion) {
        recovery.recover(m, seg);
      }
      long shape = shapeAcquire(m, seg);
      if (covers(shape, h)) {
        return seg;
      }
      if (stateOf(shape) == MERGED) {
        return mergedSlow(m, h, shape, seg);
      }
      seg = (long) LONG.getAcquire(m, seg + SEG_SIDE);
      if (seg == 0) {
        throw chainEnds(h);
      }
    }
  }

  /**
   * The read path's route (Algorithm 3): {@link #locate}'s common case, small enough for the JIT
   * to inline into {@link #read} — the directory entry's segment, when the directory, the entry and
   * the segment lie in {@code m} and the segment is recovered in this version; -1 for anything else
   * (a mapping to read again, a segment to recover), which {@code locate} handles. It does not
   * check that the segment covers {@code h}: the reader checks that after its version snapshots
   * (it must anyway: a split may come between routing and snapshot), and routes through {@code
   * locate} when it does not. One shape check per read instead of two, no call in the common case
   * ({@code locate} is too large to inline); docs/persistence.md gives what it saved. By address
   * ({@code base} is the live mapping {@code m}'s, {@link UncheckedMemory}): the entry and the
   * recovery version, after {@link DirectoryRoute#segmentAt} checked both offsets against {@code m}.
   */
  private long directSegmentAt(MemorySegment m, long base, long h) {
    // -1 also for a damaged (negative) entry: locate then meets it and reports it as before
    long seg = route.segmentAt(m, base, h, segments.bytes);
    return seg < 0 || UncheckedMemory.getLong(base + seg + SEG_VERSION) != globalVersion ? -1 : seg;
  }

  /** No segment on the side-link chain covers a hash: their shapes were damaged. */
  private UncheckedIOException chainEnds(long h) {
    return corrupt(Damage.where(pool) + ": dash-eh: no segment covers hash " + Long.toHexString(h)
        + ": the side-link chain ends; segment shapes were damaged; restore the pool from a copy");
  }

  /**
   * A stale entry led to the right buddy of a merge: help the merge finish (recover the left
   * buddy, found at the first entry of the merged range, never stale) and retry.
   */
  private long mergedSlow(MemorySegment mapping, long h, long shape, long seg) {
    int busy = 0;
    for (;;) {
      MemorySegment m = pool.memory(); // covers the current directory
      int d = depthOf(shape) - 1;
      long dir = (long) LONG.getAcquire(m, header + HDR_DIRECTORY);
      int g = (int) INT.get(m, dir + DIR_DEPTH);
      if (d >= 0 && g >= d) {
        long left = (long) LONG.getAcquire(m, dir + DIR_ENTRIES + 8 * (prefix(h, d) << (g - d)));
        if (left != 0 && left + segments.bytes <= m.byteSize()
            && (long) LONG.getAcquire(m, left + SEG_VERSION) != globalVersion) {
          recovery.recover(m, left);
        }
      }
      // Retry once routing would no longer lead here (the merge finished: the entries name the
      // left buddy). A route that keeps leading here after the left buddy was helped is damage
      // (a merge finishes within its holder's locks), not a reason to retry for ever (issue 9):
      // bounded like a lock held for ever.
      if (shapeAcquire(m, seg) != shape || !routesTo(m, (long) LONG.getAcquire(m, dir + DIR_ENTRIES + 8 * prefix(h, g)), h, seg)) {
        return -1;
      }
      busy = Damage.backOff(busy, "a dash-eh route to a merged segment (no merge finishes)");
    }
  }

  /** Whether {@link #locate} from {@code seg} for {@code h} would end at the merged {@code target}. */
  private static boolean routesTo(MemorySegment m, long seg, long h, long target) {
    long limit = m.byteSize();
    for (long x = seg; x != 0 && x + SEG_BUCKETS <= limit; x = (long) LONG.getAcquire(m, x + SEG_SIDE)) {
      long shape = shapeAcquire(m, x);
      if (x == target || covers(shape, h) || stateOf(shape) == MERGED) {
        return x == target; // the chain is acyclic (checked at open), so this ends
      }
    }
    return false;
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
   * Dash Algorithm 3: snapshot both buckets' versions, search, validate, retry; never writes.
   *
   * <p>The buckets are read by address ({@link UncheckedMemory}: FFM's per-access checks cost the
   * overlap of consecutive searches' cache misses, docs/persistence.md "Unchecked reads"). What
   * makes that safe: the directory entry and the segment come through {@link #directSegmentAt} or
   * {@link #locate}, which check every offset against the mapping {@code m} (taken inside the
   * epoch section, so it stays mapped: {@code Pool.close} waits for the threads inside), and every
   * address read here lies in that segment's buckets. The stash, rarely searched, is read through
   * the segment.
   *
   * <p>Ordering: {@link VersionLock#snapshotBothAt} takes both versions with one acquire fence
   * after them, so the shape and the buckets' contents are read after both, and {@link
   * VersionLock#unchangedBothAt} fences before re-reading them (the seqlock protocol of {@link
   * VersionLock#validate}). A location is {@code bucket address | slot}: the mapping is
   * page-aligned and buckets are 64-byte aligned in it.
   */
  private long read(long key, long absent, boolean contains) {
    long h = Hashing.hash(key);
    int fp = fingerprintOf(h);
    int y = segments.bucketIndex(h);
    EpochReclaimer e = epochs;
    EpochReclaimer.Section section = e.enterSection();
    try {
      boolean routed = false; // whether to route through locate (after the direct entry failed once)
      for (;;) {
        MemorySegment m = pool.memory();
        long base = UncheckedMemory.base(m);
        long seg = routed ? locate(m, h) : directSegmentAt(m, base, h);
        if (seg < 0) {
          routed = true;
          continue;
        }
        long b1 = bucket(seg, y);
        long b2 = bucket(seg, (y + 1) & segments.mask);
        long a1 = base + b1;
        long a2 = base + b2;
        long versions = VersionLock.snapshotBothAt(a1 + LOCK, a2 + LOCK);
        if (VersionLock.eitherLocked(versions)) {
          Damage.awaitUnlocked(m, VersionLock.firstLocked(versions) ? b1 + LOCK : b2 + LOCK, "dash-eh bucket lock");
          continue;
        }
        if (!covers(UncheckedMemory.getLong(base + seg + SEG_SHAPE), h)) {
          // A stale directory entry (its segment split and the directory is not updated yet, or
          // merged: a MERGED segment's pattern covers no hash), or a split between routing and
          // the snapshot: route through locate, which follows side links and helps merges.
          routed = true;
          continue;
        }
        long v = absent;
        long at = findInEitherAt(a1, a2, key, fp);
        if (at >= 0) {
          v = contains ? 1 : valueAt(at);
        } else {
          long w1 = overflowWordAt(a1);
          long w2 = overflowWordAt(a2);
          // a miss whose overflow words name no stash record stops here, without a call: the
          // probe's call site is cold when read is compiled (docs/persistence.md, "A miss without a call")
          long loc = mayBeInStash(w1, w2) ? segments.findInStash(m, seg, b1, w1, b2, w2, key, fp) : -1;
          if (loc >= 0) {
            v = contains ? 1 : value(m, loc & ~63L, (int) loc & 63);
          }
        }
        if (VersionLock.unchangedBothAt(a1 + LOCK, a2 + LOCK, versions)) {
          return v;
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

  /** Every writer: lock the target and probing bucket (index order), act, unlock (Dash §4.4). */
  private boolean write(long key, long value, long expected, int op) {
    long h = Hashing.hash(key);
    int fp = fingerprintOf(h);
    int y = segments.bucketIndex(h);
    int y2 = (y + 1) & segments.mask;
    DashSegment s = segments;
    EpochReclaimer e = epochs;
    long emptied = 0;
    EpochReclaimer.Section section = e.enterSection();
    try {
      for (;;) {
        MemorySegment m = pool.memory();
        long seg = locate(m, h);
        if (seg < 0) {
          continue;
        }
        long b1 = bucket(seg, y);
        long b2 = bucket(seg, y2);
        // both buckets' lines before the locks: their misses overlap, and the CASes and the work
        // under them hit the cache (Prefetch)
        Prefetch.keep(Prefetch.lines(m, b1, BUCKET_LINES) ^ Prefetch.lines(m, b2, BUCKET_LINES));
        long held = lockPair(m, b1, b2, y < y2);
        long shape;
        try {
          shape = shapeAcquire(m, seg);
          if (!covers(shape, h)) {
            continue; // split while we waited
          }
          long loc = s.findLocked(m, seg, b1, b2, key, fp);
          switch (op) {
            case PUT -> {
              if (loc >= 0) {
                s.updateLocked(m, loc, value);
                return false;
              }
            }
            case PUT_IF_ABSENT -> {
              if (loc >= 0) {
                return false;
              }
            }
            case REPLACE -> {
              if (loc < 0) {
                return false;
              }
              s.updateLocked(m, loc, value);
              return true;
            }
            case REPLACE_IF -> {
              if (loc < 0 || value(m, loc & ~63L, (int) loc & 63) != expected) {
                return false;
              }
              s.updateLocked(m, loc, value);
              return true;
            }
            case REMOVE -> {
              if (loc < 0) {
                return false;
              }
              emptied = deleteEmpties(m, b1, loc) ? seg : 0;
              s.deleteLocked(m, seg, b1, b2, loc, fp);
              return true;
            }
            default -> {
              if (loc < 0 || value(m, loc & ~63L, (int) loc & 63) != expected) {
                return false;
              }
              emptied = deleteEmpties(m, b1, loc) ? seg : 0;
              s.deleteLocked(m, seg, b1, b2, loc, fp);
              return true;
            }
          }
          if (s.insertLocked(m, seg, y, b1, b2, key, value, fp) == INSERTED) {
            return true;
          }
        } finally {
          unlockPair(m, b1, b2, y < y2, held);
        }
        split.split(seg, shape); // the segment is full (Dash §4.7): split it, then retry
      }
    } finally {
      if (emptied != 0) {
        merge.maybeMerge(emptied); // a delete emptied its bucket: the load may allow a merge
      }
      e.exit(section);
    }
  }

  // ---------------------------------------------------------------- whole table

  /** @return the leftmost segment (directory entry 0, which always names it) */
  long firstSegment(MemorySegment m) {
    long dir = (long) LONG.getAcquire(m, header + HDR_DIRECTORY);
    return (long) LONG.getAcquire(m, dir + DIR_ENTRIES);
  }

  /** Visits every segment once, in hash order, through the side links; recovers each. */
  long[] segmentOffsets() {
    epochs.enter();
    try {
      MemorySegment m = pool.memory();
      List<Long> list = new ArrayList<>();
      for (long seg = firstSegment(m); seg != 0; seg = (long) LONG.getAcquire(m, seg + SEG_SIDE)) {
        if (seg + segments.bytes > m.byteSize()) {
          m = pool.memory();
        }
        if ((long) LONG.getAcquire(m, seg + SEG_VERSION) != globalVersion) {
          recovery.recover(m, seg);
        }
        list.add(seg);
      }
      long[] out = new long[list.size()];
      for (int i = 0; i < out.length; i++) {
        out[i] = list.get(i);
      }
      return out;
    } finally {
      epochs.exit();
    }
  }

  @Override
  public long size() {
    long n = 0;
    long[] segs = segmentOffsets();
    MemorySegment m = pool.memory(); // read after the offsets: covers them
    for (long seg : segs) {
      n += segments.records(m, seg);
    }
    return n;
  }

  /**
   * Every segment in hash order, one {@link #scanPart} each, so a record present for the whole
   * call is seen exactly once even while inserts displace records and segments split or merge
   * (a copy bucket by bucket over a list of segments taken first was not: it saw a displaced
   * record twice or not at all, and missed records a split moved to a segment not in the list).
   */
  @Override
  public void forEach(LongLongConsumer action) {
    long[] words = new long[2 * (normal + stash) * SLOTS + 1];
    int[] versions = new int[normal + stash];
    long c = 0;
    do {
      c = part(c, words, versions, action);
    } while (c != 0);
  }

  /**
   * One segment per call: see {@link #scanPart}; the records' key and value words as they are
   * (inline keys and values).
   */
  @Override
  public long scan(long from, LongLongConsumer action) {
    return part(from, new long[2 * (normal + stash) * SLOTS + 1], new int[normal + stash], action);
  }

  /** One {@link #scanPart} inside the epoch, then the action on its copies, outside it. */
  private long part(long from, long[] words, int[] versions, LongLongConsumer action) {
    EpochReclaimer e = epochs;
    e.enter();
    long next;
    int n;
    try {
      next = scanPart(from, words, versions);
      n = (int) words[words.length - 1];
    } finally {
      e.exit();
    }
    for (int i = 0; i < n; i += 2) {
      action.accept(words[i], words[i + 1]);
    }
    return next;
  }

  /**
   * One part of a weakly consistent iteration (the caller is inside the epoch): the segment
   * covering hash {@code from}; the key and value words of its records of hash {@code >= from}
   * (unsigned), copied bucket by bucket with the optimistic protocol, kept only if the segment's
   * shape and every bucket's lock word are unchanged after the last copy (else the segment is read
   * again): the copies are then one consistent snapshot of the segment. A record present throughout
   * is in exactly one segment's hash range, and ranges are visited in increasing order, so it is
   * visited exactly once.
   *
   * @param from the cursor: a hash, 0 to start
   * @param words receives key and value words in pairs; its last element receives their count
   *     (it needs room for every slot of a segment, plus one)
   * @param versions scratch for the buckets' lock words, one per bucket of a segment
   * @return the end of the segment's hash range (the next cursor), 0 after the last segment
   */
  long scanPart(long from, long[] words, int[] versions) {
    int buckets = normal + stash;
    for (;;) {
      MemorySegment m = pool.memory();
      long seg = locate(m, from);
      if (seg < 0) {
        continue;
      }
      long shape = shapeAcquire(m, seg);
      if (!covers(shape, from)) {
        continue;
      }
      int n = 0;
      for (int i = 0; i < buckets; i++) {
        n = copyBucket(m, bucket(seg, i), shape, from, words, n, versions, i);
      }
      if (shapeAcquire(m, seg) != shape || !unchangedSince(m, seg, versions, buckets)) {
        continue;
      }
      words[words.length - 1] = n;
      int d = depthOf(shape);
      return d == 0 ? 0 : (patternOf(shape) + 1) << (64 - d);
    }
  }

  /**
   * Whether no bucket of the segment changed since {@link #copyBucket} validated it. Each bucket
   * is consistent on its own; this makes the copies consistent with each other: a record that an
   * insert displaced (copied into a neighbour, then cleared, each under the buckets' locks) while
   * the part was read would otherwise be seen twice (copied from both buckets) or not at all.
   */
  private static boolean unchangedSince(MemorySegment m, long seg, int[] versions, int buckets) {
    for (int i = 0; i < buckets; i++) {
      if (!VersionLock.validate(m, bucket(seg, i) + LOCK, versions[i])) {
        return false;
      }
    }
    return true;
  }

  /**
   * Optimistic copy of a bucket's pairs of hash {@code >= from} that the segment covers (a
   * segment being split still holds the records it moved until the split completes, and the
   * shape check in {@link #scanPart} only sees a split that changed the shape); never writes.
   */
  private int copyBucket(MemorySegment m, long b, long shape, long from, long[] words, int start, int[] versions, int index) {
    for (;;) {
      int v = VersionLock.snapshotAcquire(m, b + LOCK);
      if (VersionLock.isLocked(v)) {
        Damage.awaitUnlocked(m, b + LOCK, "dash-eh bucket lock");
        continue;
      }
      int n = start;
      for (int a = allocated(bitmap(m, b)); a != 0; a &= a - 1) {
        int slot = Integer.numberOfTrailingZeros(a);
        long h = segments.hashAt(m, b, slot);
        if (covers(shape, h) && Long.compareUnsigned(h, from) >= 0) {
          words[n++] = key(m, b, slot);
          words[n++] = value(m, b, slot);
        }
      }
      if (VersionLock.validate(m, b + LOCK, v)) {
        versions[index] = v;
        return n;
      }
    }
  }

  /** @return record slots: segments × (normal + stash) × 14 */
  long slots(int segmentCount) {
    return (long) segmentCount * (normal + stash) * SLOTS;
  }

  @Override
  public double loadFactor() {
    long[] segs = segmentOffsets();
    MemorySegment m = pool.memory();
    long n = 0;
    for (long seg : segs) {
      n += segments.records(m, seg);
    }
    return (double) n / slots(segs.length);
  }

  /** @return the global depth of the current directory */
  int globalDepth() {
    MemorySegment m = pool.memory();
    long dir = (long) LONG.getAcquire(m, header + HDR_DIRECTORY);
    return (int) INT.get(m, dir + DIR_DEPTH);
  }

  @Override
  public TableStats stats() {
    long[] segs = segmentOffsets();
    MemorySegment m = pool.memory();
    long n = 0;
    long stashed = 0;
    for (long seg : segs) {
      n += segments.records(m, seg);
      for (int i = 0; i < stash; i++) {
        stashed += DashBucket.count(bitmapAcquire(m, bucket(seg, normal + i)));
      }
    }
    long slots = slots(segs.length);
    Map<String, Long> details = new LinkedHashMap<>();
    details.put("segments", (long) segs.length);
    details.put("globalDepth", (long) globalDepth());
    details.put("normalBuckets", (long) normal);
    details.put("stashBuckets", (long) stash);
    details.put("stashRecords", stashed);
    details.put("splits", splits.get());
    details.put("doublings", doublings.get());
    details.put("merges", merges.get());
    details.put("halvings", halvings.get());
    details.put("recoveredSegments", recoveredSegments.get());
    details.put("globalVersion", globalVersion);
    var ps = persistence.stats();
    return new TableStats(DashEhProvider.NAME, n, slots, slots == 0 ? 0 : (double) n / slots,
        pool.size(), ps.linesFlushed(), ps.drains(), details);
  }

  @Override
  public String toString() {
    return "dash-eh table (normal buckets " + normal + ", stash " + stash + ", global version " + globalVersion + ") in " + pool;
  }
}
