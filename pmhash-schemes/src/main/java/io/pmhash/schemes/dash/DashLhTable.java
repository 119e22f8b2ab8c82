package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashBucket.*;
import static io.pmhash.schemes.dash.DashLayout.BUCKET_LINES;
import static io.pmhash.schemes.dash.DashLayout.INT;
import static io.pmhash.schemes.dash.DashLayout.LOCK;
import static io.pmhash.schemes.dash.DashLayout.LONG;
import static io.pmhash.schemes.dash.DashLayout.MAX_STASH;
import static io.pmhash.schemes.dash.DashLayout.MIN_STASH;
import static io.pmhash.schemes.dash.DashLayout.NORMAL_BUCKETS;
import static io.pmhash.schemes.dash.DashLayout.SEG_SHAPE;
import static io.pmhash.schemes.dash.DashLayout.SLOTS;
import static io.pmhash.schemes.dash.DashLayout.depthOf;
import static io.pmhash.schemes.dash.DashLayout.patternOf;
import static io.pmhash.schemes.dash.DashLayout.shape;
import static io.pmhash.schemes.dash.DashLayout.stateOf;
import static io.pmhash.schemes.dash.DashLhLayout.*;
import static io.pmhash.schemes.dash.DashSegment.bucket;
import static io.pmhash.schemes.dash.DashSegment.fingerprintOf;
import static io.pmhash.schemes.dash.DashSegment.shapeAcquire;

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
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Dash-LH (Dash §5): linear hashing over Dash segments. The public facade, API and lifecycle.
 * Reads are Dash Algorithm 3 (optimistic, validated, never writing unless a segment must first
 * be recovered or split); writers lock the key's two buckets and call {@link DashSegment} (the
 * Dash-EH bucket code, shared) and, when the segment is full, {@link DashLhSegment}'s chain.
 * Expansion and splits are {@link DashLhSplit}'s, contraction {@link DashLhMerge}'s, lazy
 * recovery {@link DashLhRecovery}'s.
 *
 * <p><b>Routing.</b> {@code N|Next} (one u64, §5.3) gives each segment index the depth it must
 * have; a thread that finds its segment ABSENT or shallower than that first does the split that
 * is due (LHlf): see {@link #materialize}. When a delete empties its bucket and the segment pair
 * split last is light, the word retreats and the pair is merged back ({@link DashLhMerge}).
 */
public final class DashLhTable implements LongHashTable {
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
  final DashLhSegment lh;
  final DashLhSplit split;
  final DashLhRecovery recovery;
  final DashLhMerge merge;
  final long header;
  final long globalVersion;
  final int stash;
  final int firstShift;
  final int stride;
  final int mergeLoad;
  final long segBytes;
  /** Held by every advance of the word, a merge's retreat of it, and array allocation and freeing. */
  final ReentrantLock arrayLock = new ReentrantLock();
  /** Segment offsets by segment number, in DRAM; written only under {@link #arrayLock}. */
  final DashLhRoute route = new DashLhRoute();
  final AtomicLong splits = new AtomicLong();
  final AtomicLong advances = new AtomicLong();
  final AtomicLong arrays = new AtomicLong();
  final AtomicLong expansionsRefused = new AtomicLong();
  final AtomicLong recoveredSegments = new AtomicLong();
  final AtomicLong merges = new AtomicLong();
  final AtomicLong retreats = new AtomicLong();
  final AtomicLong arraysFreed = new AtomicLong();

  private DashLhTable(Pool pool, long header, int stash, int firstShift, int stride, int mergeLoad, long globalVersion) {
    this.pool = pool;
    this.persistence = pool.persistence();
    this.epochs = pool.epochs();
    this.header = header;
    this.stash = stash;
    this.firstShift = firstShift;
    this.stride = stride;
    this.mergeLoad = mergeLoad;
    this.globalVersion = globalVersion;
    this.segments = new DashSegment(persistence, stash);
    this.segBytes = segments.bytes;
    this.lh = new DashLhSegment(pool, segments);
    this.split = new DashLhSplit(this);
    this.recovery = new DashLhRecovery(this);
    this.merge = new DashLhMerge(this, mergeLoad);
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Builds an empty table in a fresh pool: the first segment array ({@code firstArray} LIVE
   * segments), then the table header, owned and linked from root 0 in one allocator step, so a
   * pool whose create was interrupted has no table (open refuses it) rather than half of one.
   *
   * @param pool the pool, its header naming dash-lh
   * @param stash fixed stash buckets per segment, 2..4
   * @param firstArray segments in the first array, a power of two, 1..1024
   * @param stride fixed-size expansions before each doubling (§5.2), 1..16
   * @return the table, merging at {@link DashLhProvider#DEFAULT_MERGE_LOAD}
   */
  public static DashLhTable create(Pool pool, int stash, int firstArray, int stride) {
    return create(pool, stash, firstArray, stride, DashLhProvider.DEFAULT_MERGE_LOAD);
  }

  /**
   * Builds an empty table in a fresh pool, as {@link #create(Pool, int, int, int)}, with a merge
   * bound.
   *
   * @param pool the pool, its header naming dash-lh
   * @param stash fixed stash buckets per segment, 2..4
   * @param firstArray segments in the first array, a power of two, 1..1024
   * @param stride fixed-size expansions before each doubling (§5.2), 1..16
   * @param mergeLoad the pair split last is merged back when its two segments hold at most this
   *     percentage of one segment's slots, 0..50 (0 never contracts)
   * @return the table
   */
  public static DashLhTable create(Pool pool, int stash, int firstArray, int stride, int mergeLoad) {
    checkParams(stash, firstArray, stride, mergeLoad);
    if (pool.root(0) != 0) {
      throw new IllegalStateException("pool already holds a table (root 0 is set)");
    }
    int firstShift = Integer.numberOfTrailingZeros(firstArray);
    long gv = pool.recoveryEpoch();
    long segBytes = DashLayout.segmentBytes(stash);
    Persistence p = pool.persistence();
    SchemeAllocator.Reserved arr = pool.schemeAllocator().reserve(firstArray * segBytes);
    SchemeAllocator.Reserved hdr = pool.schemeAllocator().reserve(TABLE_HEADER.byteSize());
    MemorySegment m = pool.memory();
    long a = arr.offset();
    m.asSlice(a, firstArray * segBytes).fill((byte) 0);
    for (int i = 0; i < firstArray; i++) {
      long s = a + i * segBytes;
      LONG.set(m, s + SEG_SHAPE, shape(firstShift, LIVE, i));
      LONG.set(m, s + SEG_VERSION, gv);
    }
    p.flush(a, firstArray * segBytes);
    long h = hdr.offset();
    m.asSlice(h, TABLE_HEADER.byteSize()).fill((byte) 0);
    LONG.set(m, h + HDR_MAGIC, MAGIC);
    INT.set(m, h + HDR_VERSION, LAYOUT_VERSION);
    INT.set(m, h + HDR_STASH, stash);
    INT.set(m, h + HDR_FIRST, firstArray);
    INT.set(m, h + HDR_STRIDE, stride);
    INT.set(m, h + HDR_MERGE_LOAD, mergeLoad);
    LONG.set(m, h + HDR_GLOBAL_VERSION, gv);
    p.flush(h, TABLE_HEADER.byteSize());
    try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
      pub.publish(arr, h + HDR_DIRECTORY).publish(hdr, pool.rootWord(0));
      // PERSIST(create): the first array and the header are durable (flushed above, ordered by the redo entries' drain) before the step that owns them and links the header from root 0 commits
      pub.commit();
    }
    return new DashLhTable(pool, h, stash, firstShift, stride, mergeLoad, gv);
  }

  /**
   * Opens the table of a pool: no segment is recovered (Dash §4.8: after an unclean shutdown the
   * global version becomes the pool's new recovery epoch, persisted, so every segment is
   * recovered on first touch). What open reads is O(segments): the segment arrays and every
   * segment's chain links are validated first (issue 9); no record is read.
   *
   * @param pool the opened pool
   * @return the table
   * @throws UncheckedIOException wrapping a {@link CorruptPoolException} if the table header is
   *     missing or invalid
   */
  public static DashLhTable open(Pool pool) {
    long h = pool.root(0);
    String where = pool.path() == null ? "volatile pool" : pool.path().toString();
    if (h == 0) {
      throw corrupt(where + ": no dash-lh table (root 0 is empty): its create was interrupted; delete the file and create it again");
    }
    MemorySegment m = pool.memory();
    SchemeAllocator sa = pool.schemeAllocator();
    if (Damage.outsideBlocks(pool, sa, h, TABLE_HEADER.byteSize()) || (h & 63) != 0) {
      // on llpl: not a PMDK block (a dash-lh pool made on llpl before its blocks were PMDK's ends here)
      throw corrupt(where + ": dash-lh table header offset " + h + " is outside the heap");
    }
    if ((long) LONG.get(m, h + HDR_MAGIC) != MAGIC) {
      throw corrupt(where + ": root 0 does not point at a dash-lh table header (bad magic)");
    }
    int version = (int) INT.get(m, h + HDR_VERSION);
    if (version != LAYOUT_VERSION) {
      throw corrupt(where + ": dash-lh table layout version " + version + ", expected " + LAYOUT_VERSION);
    }
    int stash = (int) INT.get(m, h + HDR_STASH);
    int first = (int) INT.get(m, h + HDR_FIRST);
    int stride = (int) INT.get(m, h + HDR_STRIDE);
    int mergeLoad = (int) INT.get(m, h + HDR_MERGE_LOAD);
    long[] params = pool.schemeParams();
    if (params.length < 3 || params[0] != stash || params[1] != first || params[2] != stride
        || params.length > 3 && params[3] != mergeLoad) {
      throw corrupt(where + ": dash-lh table header (stash " + stash + ", first array " + first + ", stride " + stride
          + ", merge load " + mergeLoad + ") differs from the pool header's parameters");
    }
    try {
      checkParams(stash, first, stride, mergeLoad);
    } catch (IllegalArgumentException e) {
      throw corrupt(where + ": dash-lh table header: " + e.getMessage());
    }
    int firstShift = Integer.numberOfTrailingZeros(first);
    long w = (long) LONG.get(m, h + HDR_N_NEXT);
    if (firstShift + roundOf(w) >= 32 || nextOf(w) >= 1L << (firstShift + roundOf(w))) {
      throw corrupt(where + ": dash-lh N|Next word " + Long.toHexString(w) + " is out of range");
    }
    long segBytes = DashLayout.segmentBytes(stash);
    long total = (1L << (firstShift + roundOf(w))) + nextOf(w);
    int needed = entryOf(total - 1, firstShift, stride);
    for (int e = 0; e < DIRECTORY_ENTRIES; e++) {
      long a = (long) LONG.get(m, h + HDR_DIRECTORY + 8L * e);
      long bytes = arraySegments(e, firstShift, stride) * segBytes;
      if (a == 0 ? e <= needed : Damage.outsideBlocks(pool, sa, a, bytes) || (a & 63) != 0) {
        throw corrupt(where + ": dash-lh directory entry " + e + " (" + a + ") is " + (a == 0 ? "empty but N|Next addresses it" : "outside the pool"));
      }
    }
    // Every segment's chain of stash buckets, links only, before anything is written (issue 9):
    // each node an allocated block, no loop; a search follows these links. O(segments + nodes).
    java.util.function.LongUnaryOperator next = node -> DashLhSegment.nextNode(m, node);
    for (long s = 0; s < total; s++) {
      boolean inFirst = s < 1L << firstShift;
      long a = (long) LONG.get(m, h + HDR_DIRECTORY + 8L * (inFirst ? 0 : entryOf(s, firstShift, stride)));
      long seg = a + (inFirst ? s : indexInArray(s, firstShift, stride)) * segBytes;
      Damage.walkChain(pool, sa, DashLhSegment.chainHead(m, seg), next, NODE_BYTES, 64, "dash-lh stash chain of a segment");
    }
    long gv;
    if (pool.lastShutdownClean()) {
      gv = (long) LONG.get(m, h + HDR_GLOBAL_VERSION);
    } else {
      gv = pool.recoveryEpoch();
      LONG.setRelease(m, h + HDR_GLOBAL_VERSION, gv);
      // PERSIST(§4.8): the new global version is durable before any segment is recovered to it
      pool.persistence().persist(h + HDR_GLOBAL_VERSION, 8);
    }
    return new DashLhTable(pool, h, stash, firstShift, stride, mergeLoad, gv);
  }

  private static UncheckedIOException corrupt(String message) {
    return new UncheckedIOException(new CorruptPoolException(message));
  }

  /** Validates the four parameters; the messages name the parameter and the allowed range. */
  static void checkParams(long stash, long firstArray, long stride, long mergeLoad) {
    if (mergeLoad < 0 || mergeLoad > MAX_MERGE_LOAD) {
      throw new IllegalArgumentException("dash-lh parameter " + DashLhProvider.MERGE_LOAD + " must be 0 (never contract).."
          + MAX_MERGE_LOAD + " (percent of one segment's slots that the two segments split last may hold together to be merged), got " + mergeLoad);
    }
    if (stash < MIN_STASH || stash > MAX_STASH) {
      throw new IllegalArgumentException("dash-lh parameter stashBuckets must be 2..4, got " + stash);
    }
    if (firstArray < 1 || firstArray > MAX_FIRST_ARRAY || Long.bitCount(firstArray) != 1) {
      throw new IllegalArgumentException("dash-lh parameter firstArray must be a power of two in 1.." + MAX_FIRST_ARRAY + ", got " + firstArray);
    }
    if (stride < 1 || stride > MAX_STRIDE) {
      throw new IllegalArgumentException("dash-lh parameter stride must be 1.." + MAX_STRIDE + ", got " + stride);
    }
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
    return DashLhProvider.NAME;
  }

  // ---------------------------------------------------------------- routing

  /** @return the offset of directory entry {@code e}'s segment array, 0 if not allocated */
  long arrayOffset(MemorySegment m, int e) {
    return (long) LONG.getAcquire(m, header + HDR_DIRECTORY + 8L * e);
  }

  /** @return the offset of segment {@code s}, 0 if its array is not allocated */
  long segmentOffset(MemorySegment m, long s) {
    boolean first = s < 1L << firstShift;
    long a = arrayOffset(m, first ? 0 : entryOf(s, firstShift, stride));
    return a == 0 ? 0 : a + (first ? s : indexInArray(s, firstShift, stride)) * segBytes;
  }

  /** @return whether a LIVE shape covers hash {@code h} */
  static boolean covers(long shape, long h) {
    long mask = (1L << depthOf(shape)) - 1;
    return stateOf(shape) == LIVE && ((h >>> SEGMENT_HASH_SHIFT) & mask) == patternOf(shape);
  }

  /**
   * {@link #locate} for readers and writers, its common case by address: {@code N|Next}, the
   * segment's offset from the DRAM {@link #route} (or, the first time a segment is looked up, from
   * the directory entry of its array), the segment's shape and recovery version read through
   * {@link UncheckedMemory} (the header and the segment checked against {@code m}); anything
   * unusual (an array not allocated, a segment beyond the mapping, a shape other than the one
   * asked for, a segment still to recover) goes to {@link #locate}, checked, so a writer gets
   * what {@code locate} would give it (a due split done, a segment recovered, or -1 to route
   * again). {@code base} is the address of {@code m}, live ({@link UncheckedMemory#base}).
   *
   * <p>The route is what the instructions before an operation's first cache miss are spent on,
   * and their number decides whether consecutive operations' misses overlap: from the directory
   * each time, a positive search cost about 40 % more (docs/format/dash-lh.md, "The route before
   * the first miss").
   */
  private long locateAt(MemorySegment m, long base, long h) {
    long w = UncheckedMemory.getLong(base + header + HDR_N_NEXT);
    VarHandle.acquireFence(); // N|Next before the route and the segment it leads to
    long x = h >>> SEGMENT_HASH_SHIFT;
    int depth = depthFor(w, x);
    long s = x & ((1L << depth) - 1);
    long seg = route.offset(s); // an acquire: the entry before the segment it names
    if (seg == 0) {
      seg = routeThroughDirectory(m, s);
    }
    if (seg <= 0 || seg > m.byteSize() - segBytes
        || UncheckedMemory.getLong(base + seg + SEG_SHAPE) != shape(depth, LIVE, s)
        || UncheckedMemory.getLong(base + seg + SEG_VERSION) != globalVersion) {
      return locate(m, h);
    }
    return seg;
  }

  /**
   * The depth {@code N|Next} word {@code w} gives segment hash {@code x}: the level, one more
   * below Next, where the segment has split this round (branch-free: which side of Next a key
   * falls is as random as the key).
   */
  private int depthFor(long w, long x) {
    int level = firstShift + roundOf(w);
    return level + (int) (((x & ((1L << level) - 1)) - nextOf(w)) >>> 63);
  }

  /**
   * A reader's first route to segment {@code s}, as Dash-EH's {@code directSegmentAt}: the
   * segment from the DRAM {@link #route}, its bounds and recovery version; -1 for anything else
   * (a segment the route does not know, beyond {@code m}, or still to recover), after which the
   * reader routes through {@link #locateAt}. The shape is compared after the reader's snapshot
   * ({@link #read}), with what {@link #locateAt} compares it with here: before the bucket loads,
   * that compare made negative searches 35–50 % slower (docs/format/dash-lh.md, "The route
   * before the first miss").
   */
  private long directSegmentAt(MemorySegment m, long base, long s) {
    long seg = route.offset(s); // an acquire: the entry before the segment it names
    if (seg <= 0 || seg > m.byteSize() - segBytes || UncheckedMemory.getLong(base + seg + SEG_VERSION) != globalVersion) {
      return -1;
    }
    return seg;
  }

  /**
   * {@link #locateAt}'s route for a segment the DRAM route does not know (a cold path: after an
   * open, once per segment of the arrays it opened with): {@link #segmentOffset} through the
   * directory; then the route learns it.
   *
   * @return the segment's offset, not yet checked against {@code m}; -1 when {@link #locate}
   *     must decide (an entry beyond the directory, or an array not allocated)
   */
  private long routeThroughDirectory(MemorySegment m, long s) {
    if (s >= 1L << firstShift && entryOf(s, firstShift, stride) >= DIRECTORY_ENTRIES) {
      return -1;
    }
    long seg = segmentOffset(m, s);
    if (seg <= 0) {
      return -1;
    }
    learnRoute(s);
    return seg;
  }

  /**
   * Fills the route's entry for segment {@code s} from the directory, read again under the array
   * lock ({@link DashLhRoute} says why that makes it never stale); skipped when another thread
   * holds the lock, so a lookup never waits for an advance.
   */
  private void learnRoute(long s) {
    if (arrayLock.tryLock()) {
      try {
        long seg = segmentOffset(pool.memory(), s);
        if (seg > 0) {
          route.fill(s, seg);
        }
      } finally {
        arrayLock.unlock();
      }
    }
  }

  /**
   * Whether every segment the route knows is where the pool's directory puts it now, for tests
   * at a quiescent point.
   *
   * @return the first segment number whose entry disagrees, or -1
   */
  long routeDisagreement() {
    MemorySegment m = pool.memory();
    for (long s = 0; s < route.capacity(); s++) {
      long seg = route.offset(s);
      if (seg != 0 && seg != segmentOffset(m, s)) {
        return s;
      }
    }
    return -1;
  }

  /**
   * The segment that holds {@code h}, recovered and at the depth {@code N|Next} says; -1 when
   * the caller must retry (the pool grew, or a split was just done).
   */
  long locate(MemorySegment m, long h) {
    long x = h >>> SEGMENT_HASH_SHIFT;
    long w = (long) LONG.getAcquire(m, header + HDR_N_NEXT);
    int level = firstShift + roundOf(w);
    long s = x & ((1L << level) - 1);
    int depth = level;
    if (s < nextOf(w)) {
      s = x & ((1L << (level + 1)) - 1);
      depth = level + 1;
    }
    long seg = segmentOffset(m, s);
    if (seg == 0 || seg + segBytes > m.byteSize()) {
      return -1;
    }
    long shape = shapeAcquire(m, seg);
    if (shape != shape(depth, LIVE, s)) {
      locateSlow(m, s, depth, shape, w);
      return -1;
    }
    if ((long) LONG.getAcquire(m, seg + SEG_VERSION) != globalVersion) {
      recovery.recover(seg);
    }
    return seg;
  }

  /**
   * The segment is not LIVE at its due depth: make it so, unless it is deeper, which only a word
   * read before the advance that allowed the split explains (the splitter read the newer word
   * before it raised the depth, so it is visible now). If the word has not changed, the pool is
   * inconsistent: throw rather than retry forever.
   */
  private void locateSlow(MemorySegment m, long s, int depth, long shape, long w) {
    if (stateOf(shape) == LIVE && depthOf(shape) > depth) {
      if ((long) LONG.getAcquire(m, header + HDR_N_NEXT) == w) {
        throw corrupt("dash-lh: segment " + s + " has depth " + depthOf(shape)
            + ", deeper than N|Next " + Long.toHexString(w) + " allows (" + depth + "): the pool is damaged");
      }
      return;
    }
    materialize(s, depth);
  }

  /**
   * Makes segment {@code s} LIVE at depth {@code depth} or more (LHlf, §5.3): an ABSENT segment
   * is created by splitting its parent (made ready the same way first); a shallower one is split.
   * Nothing is done once the word no longer asks for that depth (a merge took it back). Bounded:
   * each round raises a depth, and depths are bounded by the level.
   */
  void materialize(long s, int depth) {
    for (;;) {
      MemorySegment m = pool.memory();
      if (dueDepth(s, nNextWord(), firstShift) < depth) {
        return; // a merge took the word back since the caller read it: the caller routes again
      }
      long seg = segmentOffset(m, s);
      if (seg == 0) {
        if (dueDepth(s, nNextWord(), firstShift) < depth) {
          return; // a merge took the word back and freed the array since the check above
        }
        throw corrupt("dash-lh: segment " + s + " has no segment array although Next addresses it: the pool is damaged");
      }
      long shape = shapeAcquire(m, seg);
      if (stateOf(shape) == LIVE) {
        int d = depthOf(shape);
        if (d >= depth) {
          return;
        }
        split.split(seg, s, d);
      } else if (s < 1L << firstShift) {
        throw corrupt("dash-lh: segment " + s + " of the first array is not LIVE: the pool is damaged");
      } else {
        int d = 63 - Long.numberOfLeadingZeros(s);
        long w = nNextWord();
        materialize(s - (1L << d), d + 1); // the parent's split at depth d creates s
        m = pool.memory();
        if (stateOf(shapeAcquire(m, seg)) != LIVE) {
          checkParentSplit(m, s, d, w);
        }
      }
    }
  }

  /**
   * Segment {@code s} is still ABSENT after its parent was made ready: if the parent is deeper
   * than d although the word has not changed, s should exist (a split makes s LIVE before its
   * parent deeper, a merge makes the parent shallower before s ABSENT, and under one word a
   * pair is not split again after a merge): the pool is damaged, and retrying would never end.
   */
  private void checkParentSplit(MemorySegment m, long s, int d, long w) {
    long parent = segmentOffset(m, s - (1L << d));
    long ps = parent == 0 ? 0 : shapeAcquire(m, parent);
    if (stateOf(ps) == LIVE && depthOf(ps) > d && nNextWord() == w) {
      throw corrupt("dash-lh: segment " + s + " is ABSENT although its parent " + (s - (1L << d)) + " has depth "
          + depthOf(ps) + " under N|Next " + Long.toHexString(w) + ": the pool is damaged");
    }
  }

  /** Recovers {@code seg} if its version is not the global one. */
  void recoverIfNeeded(MemorySegment m, long seg) {
    if ((long) LONG.getAcquire(m, seg + SEG_VERSION) != globalVersion) {
      recovery.recover(seg);
    }
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

  /** Dash Algorithm 3: snapshot both buckets' versions, search, validate, retry. */
  private long read(long key, long absent, boolean contains) {
    long h = Hashing.hash(key);
    int fp = fingerprintOf(h);
    int y = segments.bucketIndex(h);
    EpochReclaimer e = epochs;
    EpochReclaimer.Section section = e.enterSection();
    try {
      boolean routed = false; // whether to route through locateAt (after the direct route failed once)
      for (;;) {
        MemorySegment m = pool.memory();
        long base = UncheckedMemory.base(m);
        long w = UncheckedMemory.getLong(base + header + HDR_N_NEXT);
        VarHandle.acquireFence(); // N|Next before the route and the segment it leads to
        long x = h >>> SEGMENT_HASH_SHIFT;
        int depth = depthFor(w, x);
        long s = x & ((1L << depth) - 1);
        long seg = routed ? locateAt(m, base, h) : directSegmentAt(m, base, s);
        if (seg < 0) {
          routed = true;
          continue;
        }
        // the buckets by address, as in DashEhTable.read (directSegmentAt or locateAt checked the
        // segment against m, taken inside the epoch section); the stash and the chain through the segment
        long b1 = bucket(seg, y);
        long b2 = bucket(seg, (y + 1) & (NORMAL_BUCKETS - 1));
        long a1 = base + b1;
        long a2 = base + b2;
        long versions = VersionLock.snapshotBothAt(a1 + LOCK, a2 + LOCK);
        long shape = UncheckedMemory.getLong(base + seg + SEG_SHAPE); // after the versions (their acquire)
        if (routed ? !covers(shape, h) : shape != shape(depth, LIVE, s)) {
          // the direct route: not the segment N|Next asks for (a split due, a merge done, or a
          // word since changed), which locateAt finishes or routes around; locateAt's: a split
          // between it and the snapshot. Checked before the lock words are trusted: the direct
          // route may name an ABSENT segment, whose buckets hold anything (recycled bytes)
          routed = true;
          continue;
        }
        if (VersionLock.eitherLocked(versions)) {
          Damage.awaitUnlocked(m, VersionLock.firstLocked(versions) ? b1 + LOCK : b2 + LOCK, "dash-lh bucket lock");
          continue;
        }
        long v = absent;
        long at = findInEitherAt(a1, a2, key, fp);
        if (at >= 0) {
          v = contains ? 1 : valueAt(at);
        } else {
          long w1 = overflowWordAt(a1);
          long w2 = overflowWordAt(a2);
          // as in DashEhTable.read: the common miss stops here, without a call
          long loc = DashSegment.mayBeInStash(w1, w2) ? searchPast(m, seg, b1, w1, b2, w2, key, fp) : -1;
          if (loc >= 0) {
            v = contains ? 1 : value(pool.memory(), loc & ~63L, (int) loc & 63);
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

  /**
   * The key's location in the fixed stash or the chain, its two buckets searched already (their
   * overflow words {@code w1}, {@code w2}); -1 if absent. The overflow candidates are computed
   * once, for the stash and the chain both; neither word naming anything means neither holds it.
   */
  private long searchPast(MemorySegment m, long seg, long b1, long w1, long b2, long w2, long key, int fp) {
    if (!DashSegment.mayBeInStash(w1, w2)) {
      return -1;
    }
    int candidates = segments.overflowCandidates(m, b1, w1, b2, w2, fp);
    long loc = segments.probeStash(m, seg, candidates, key, fp);
    if (loc < 0 && lh.chainMayHold(m, seg, w1, candidates)) {
      loc = lh.findInChain(m, seg, key, fp);
    }
    return loc;
  }

  /** The key's location in its two buckets, the fixed stash or the chain; -1 if absent. */
  private long search(MemorySegment m, long seg, long b1, long b2, long key, int fp) {
    long loc = segments.findInBuckets(m, b1, b2, key, fp); // (reads only: safe unlocked too)
    return loc >= 0 ? loc : searchPast(m, seg, b1, overflowWord(m, b1), b2, overflowWord(m, b2), key, fp);
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
    int y2 = (y + 1) & (NORMAL_BUCKETS - 1);
    EpochReclaimer e = epochs;
    boolean grew = false;
    boolean emptied = false;
    EpochReclaimer.Section section = e.enterSection();
    try {
      for (;;) {
        MemorySegment m = pool.memory();
        // the readers' route by address (its checks, and locate for anything unusual): through
        // the checked locate, inserts and deletes were about 10 % slower at the median of six
        // JVMs each (docs/format/dash-lh.md, "Writers' persist cost, and their route")
        long seg = locateAt(m, UncheckedMemory.base(m), h);
        if (seg < 0) {
          continue;
        }
        long b1 = bucket(seg, y);
        long b2 = bucket(seg, y2);
        // both buckets' lines before the locks, as in Dash-EH (Prefetch)
        Prefetch.keep(Prefetch.lines(m, b1, BUCKET_LINES) ^ Prefetch.lines(m, b2, BUCKET_LINES));
        long held = DashSegment.lockPair(m, b1, b2, y < y2);
        try {
          if (!covers(shapeAcquire(m, seg), h)) {
            continue; // split while we waited
          }
          long loc = search(m, seg, b1, b2, key, fp);
          if (op != PUT && op != PUT_IF_ABSENT) {
            // asked before the delete persists b1's line
            boolean empties = op >= REMOVE && loc >= 0 && DashSegment.deleteEmpties(m, b1, loc);
            boolean changed = change(m, seg, b1, b2, loc, fp, value, expected, op);
            emptied = changed && empties;
            return changed;
          }
          if (loc >= 0) {
            if (op == PUT) {
              segments.updateLocked(pool.memory(), loc, value);
            }
            return false;
          }
          if (segments.insertLocked(m, seg, y, b1, b2, key, value, fp) != DashSegment.INSERTED) {
            grew = lh.insertChain(m, seg, b1, b2, key, value, fp);
          }
          return true;
        } finally {
          DashSegment.unlockPair(m, b1, b2, y < y2, held);
        }
      }
    } finally {
      if (grew) {
        split.advance(); // a chained stash bucket was allocated: one more segment is due (§5.1)
      }
      if (emptied) {
        merge.maybeMerge(); // a delete emptied its bucket (as Dash-EH): the pair split last may merge back
      }
      e.exit(section);
    }
  }

  /** Replace and remove of a located (or absent, {@code loc < 0}) key, the two buckets locked. */
  private boolean change(MemorySegment m, long seg, long b1, long b2, long loc, int fp, long value, long expected, int op) {
    if (loc < 0) {
      return false;
    }
    MemorySegment cur = pool.memory(); // covers a chained bucket
    if ((op == REPLACE_IF || op == REMOVE_IF) && value(cur, loc & ~63L, (int) loc & 63) != expected) {
      return false;
    }
    if (op == REPLACE || op == REPLACE_IF) {
      segments.updateLocked(cur, loc, value);
    } else if (DashLhSegment.isChained(seg, segBytes, loc)) {
      lh.deleteChained(cur, b1, b2, loc, fp);
    } else {
      segments.deleteLocked(m, seg, b1, b2, loc, fp);
    }
    return true;
  }

  // ---------------------------------------------------------------- whole table

  /**
   * Every segment, each made LIVE at its due depth (finishing due splits) and recovered, in
   * index order.
   */
  long[] segmentOffsets() {
    epochs.enter();
    try {
      for (;;) {
        MemorySegment m = pool.memory();
        long w = (long) LONG.getAcquire(m, header + HDR_N_NEXT);
        int level = firstShift + roundOf(w);
        long next = nextOf(w);
        long total = (1L << level) + next;
        long[] out = new long[(int) total];
        boolean same = true;
        for (long s = 0; s < total && same; s++) {
          int depth = s < next || s >= 1L << level ? level + 1 : level;
          materialize(s, depth);
          m = pool.memory();
          long seg = segmentOffset(m, s);
          same = nNextWord() == w; // else a merge may have taken s away: start again
          if (same) {
            recoverIfNeeded(m, seg);
            out[(int) s] = seg;
          }
        }
        if (same && nNextWord() == w) {
          return out;
        }
      }
    } finally {
      epochs.exit();
    }
  }

  @Override
  public long size() {
    long n = 0;
    long[] segs = segmentOffsets();
    MemorySegment m = pool.memory();
    for (long seg : segs) {
      n += lh.records(m, seg);
    }
    return n;
  }

  @Override
  public void forEach(LongLongConsumer action) {
    long[] keys = new long[SLOTS];
    long[] values = new long[SLOTS];
    epochs.enter(); // a merge frees chained buckets and arrays: not reused while we read them
    try {
      long[] segs = segmentOffsets();
      MemorySegment m = pool.memory();
      for (long seg : segs) {
        for (int i = 0; i < NORMAL_BUCKETS + stash; i++) {
          visit(m, bucket(seg, i), keys, values, action);
        }
        for (long node = DashLhSegment.chainHead(m, seg); node != 0; node = DashLhSegment.nextNode(m, node)) {
          visit(m, node + NODE_BUCKET, keys, values, action);
        }
      }
    } finally {
      epochs.exit();
    }
  }

  /** An optimistic copy of one bucket (Dash §4.4; never writes), then the action on each record. */
  private static void visit(MemorySegment m, long b, long[] keys, long[] values, LongLongConsumer action) {
    int n;
    for (;;) {
      int v = VersionLock.snapshotAcquire(m, b + LOCK);
      if (VersionLock.isLocked(v)) {
        Damage.awaitUnlocked(m, b + LOCK, "dash-lh bucket lock");
        continue;
      }
      n = 0;
      for (int alloc = allocated(bitmap(m, b)); alloc != 0; alloc &= alloc - 1) {
        int slot = Integer.numberOfTrailingZeros(alloc);
        keys[n] = key(m, b, slot);
        values[n++] = value(m, b, slot);
      }
      if (VersionLock.validate(m, b + LOCK, v)) {
        break;
      }
    }
    for (int j = 0; j < n; j++) {
      action.accept(keys[j], values[j]);
    }
  }

  /** @return record slots of the segments and their chains */
  private long slots(MemorySegment m, long[] segs) {
    long n = 0;
    for (long seg : segs) {
      n += (NORMAL_BUCKETS + stash + DashLhSegment.chainLength(m, seg)) * SLOTS;
    }
    return n;
  }

  @Override
  public double loadFactor() {
    long[] segs = segmentOffsets();
    MemorySegment m = pool.memory();
    long n = 0;
    for (long seg : segs) {
      n += lh.records(m, seg);
    }
    return (double) n / slots(m, segs);
  }

  /** @return the N|Next word (§5.3) */
  long nNextWord() {
    return (long) LONG.getAcquire(pool.memory(), header + HDR_N_NEXT);
  }

  @Override
  public TableStats stats() {
    long[] segs = segmentOffsets();
    MemorySegment m = pool.memory();
    long n = 0;
    long stashed = 0;
    long chained = 0;
    for (long seg : segs) {
      n += lh.records(m, seg);
      stashed += lh.stashRecords(m, seg);
      chained += DashLhSegment.chainLength(m, seg);
    }
    long slots = slots(m, segs);
    long w = nNextWord();
    Map<String, Long> details = new LinkedHashMap<>();
    details.put("segments", (long) segs.length);
    details.put("round", (long) roundOf(w));
    details.put("next", nextOf(w));
    details.put("firstArray", 1L << firstShift);
    details.put("stride", (long) stride);
    details.put("stashBuckets", (long) stash);
    details.put("stashRecords", stashed);
    details.put("chainedBuckets", chained);
    details.put("mergeLoadPercent", (long) mergeLoad);
    details.put("splits", splits.get());
    details.put("merges", merges.get());
    details.put("retreats", retreats.get());
    details.put("segmentArraysFreed", arraysFreed.get());
    details.put("advances", advances.get());
    details.put("segmentArrays", arrays.get());
    details.put("expansionsRefused", expansionsRefused.get());
    details.put("recoveredSegments", recoveredSegments.get());
    details.put("globalVersion", globalVersion);
    var ps = persistence.stats();
    return new TableStats(DashLhProvider.NAME, n, slots, slots == 0 ? 0 : (double) n / slots,
        pool.size(), ps.linesFlushed(), ps.drains(), details);
  }

  @Override
  public String toString() {
    return "dash-lh table (stash " + stash + ", first array " + (1L << firstShift) + ", stride " + stride + ", merge load " + mergeLoad + "%"
        + ", global version " + globalVersion + ") in " + pool;
  }
}
