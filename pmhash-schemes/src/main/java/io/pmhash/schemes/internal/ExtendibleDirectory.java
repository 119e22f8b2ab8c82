package io.pmhash.schemes.internal;

import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The directory of extendible hashing over segments, in the form CCEH (§3.2), Dash-EH (§4.7) and
 * ESH (dissertation §4.3, Fig. 4.2) share: a 64-byte header holding the global depth, then
 * {@code 2^depth} entries, each the u64 pool offset of a segment, indexed by the most significant
 * bits of the hash. Written once here so that a doubling or a split's directory update is the same
 * code in every scheme.
 *
 * <pre>
 *  byte 0              4          64
 *       +--------------+----------+----------------------------------------+
 *       | global depth | 0        | entries[2^depth]: u64 segment offset   |
 *       +--------------+----------+----------------------------------------+
 *  entry of hash h = h &gt;&gt;&gt; (64 - depth)   (0 at depth 0)
 * </pre>
 *
 * <p>Persist order of a doubling (derived from "nothing is reachable before it is durable"): the
 * new directory is reserved (not owned), filled and flushed; one redo step of the allocator then
 * makes it owned, stores its offset into the scheme's directory word and frees the old one (reused
 * only after the epoch grace period: a reader may still hold it). No thread and no crash image sees
 * the new directory before its entries are durable (the published CCEH code published first).
 */
public final class ExtendibleDirectory {
  private ExtendibleDirectory() {}

  private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle INT = U32.varHandle().withInvokeExactBehavior();
  /** u64 at (segment, offset); shared with {@link DirectoryRoute}. */
  static final VarHandle LONG = U64.varHandle().withInvokeExactBehavior();

  /** The directory header; entries follow at {@link #ENTRIES}. */
  public static final StructLayout HEADER =
      MemoryLayout.structLayout(U32.withName("global_depth"), MemoryLayout.paddingLayout(60));
  /** Offset of the global depth (u32). */
  public static final long DEPTH = HEADER.byteOffset(MemoryLayout.PathElement.groupElement("global_depth"));
  /** Offset of entry 0. */
  public static final long ENTRIES = HEADER.byteSize();
  /** Largest global (and local) depth: patterns are kept in 32 bits. */
  public static final int MAX_DEPTH = 31;

  /**
   * @param depth a global depth
   * @return the size in bytes of a directory of that depth
   */
  public static long bytes(int depth) {
    return ENTRIES + (8L << depth);
  }

  /**
   * @param h a hash
   * @param depth 0..32
   * @return the top {@code depth} bits of {@code h} (0 at depth 0): the entry index at that depth
   */
  public static long prefix(long h, int depth) {
    return (h >>> 1) >>> (63 - depth);
  }

  /**
   * @param capacity records the table should hold without a split
   * @param perSegment records a segment is sized for
   * @return the smallest global depth whose segments hold {@code capacity}, at most 20
   */
  public static int initialDepth(long capacity, long perSegment) {
    long segs = Math.max(1, (capacity + perSegment - 1) / perSegment);
    return Math.min(64 - Long.numberOfLeadingZeros(segs - 1), 20);
  }

  /**
   * @param m the mapping
   * @param dir a directory's offset
   * @return its global depth
   */
  public static int depth(MemorySegment m, long dir) {
    return (int) INT.get(m, dir + DEPTH);
  }

  /**
   * @param m the mapping
   * @param dir a directory's offset
   * @param index an entry index
   * @return the pool offset of the entry word
   */
  public static long entry(MemorySegment m, long dir, long index) {
    return dir + ENTRIES + 8 * index;
  }

  /**
   * The segment the directory names for {@code h}: the entry at {@code prefix(h, depth)}, read with
   * acquire (it publishes the segment), when the directory, the entry and a segment of {@code
   * segmentBytes} at the offset read all lie in {@code m}; -1 otherwise (the pool grew after the
   * caller read its mapping, or a damaged offset: the caller reads the mapping again or reports).
   * The schemes route through {@link DirectoryRoute#segmentFor}, which comes here while a doubling
   * or halving is in flight; small enough to inline.
   *
   * @param m the mapping
   * @param dir the directory's offset (read with acquire from the table header)
   * @param h the hash
   * @param segmentBytes the size of a segment
   * @return the segment's offset, or -1
   */
  public static long segmentFor(MemorySegment m, long dir, long h, long segmentBytes) {
    long limit = m.byteSize();
    if (dir + ENTRIES > limit) {
      return -1;
    }
    long e = dir + ENTRIES + 8 * prefix(h, (int) INT.get(m, dir + DEPTH));
    if (e + 8 > limit) {
      return -1;
    }
    long seg = (long) LONG.getAcquire(m, e);
    return seg < 0 || seg > limit - segmentBytes ? -1 : seg; // no overflow: readers go on by address
  }

  /** What a scheme checks of each distinct segment its directory names ({@link #validate}). */
  @FunctionalInterface
  public interface SegmentCheck {
    /**
     * @param m the mapping
     * @param seg a segment, already checked to be an allocated block of the segment size
     * @param first the first of the entries that name it (a run)
     * @param count how many consecutive entries name it
     * @param depth the global depth
     * @return null if the segment may be named by that run, else what is wrong, for the message
     */
    String check(MemorySegment m, long seg, long first, long count, int depth);
  }

  /**
   * Validates a directory read from the pool, at open or in recovery, before anything follows it
   * (issue 9): its offset names an allocated block, its global depth is 0..{@link #MAX_DEPTH} and
   * the block holds {@code 2^depth} entries, and each distinct segment the entries name is an
   * allocated, 64-byte aligned block of at least {@code segmentBytes} that {@code check} accepts
   * for its run of entries. O(directory): every entry is read once; each segment is checked once
   * per run (the allocator loads the chunk headers up to the highest one; no record is read).
   * Reads only, so a refused open writes nothing.
   *
   * @param pool the pool
   * @param dir the directory's offset, as read from the table header
   * @param segmentBytes the size of a segment
   * @param check the scheme's check of a segment against its run of entries
   * @param scheme the scheme's name, for messages
   * @return the global depth
   * @throws java.io.UncheckedIOException wrapping a {@link io.pmhash.core.CorruptPoolException}
   *     naming the entry, the offset and what is wrong
   */
  public static int validate(Pool pool, long dir, long segmentBytes, SegmentCheck check, String scheme) {
    return validate(pool, pool.allocator().schemeAllocator(), dir, segmentBytes, check, scheme);
  }

  /**
   * {@link #validate(Pool, long, long, SegmentCheck, String)} for a scheme whose directory and
   * segments come from {@code allocator} ({@link Pool#schemeAllocator()}).
   *
   * @param pool the pool
   * @param allocator the allocator the scheme's blocks come from
   * @param dir the directory's offset, as read from the table header
   * @param segmentBytes the size of a segment
   * @param check the scheme's check of a segment against its run of entries
   * @param scheme the scheme's name, for messages
   * @return the global depth
   * @throws java.io.UncheckedIOException wrapping a {@link io.pmhash.core.CorruptPoolException}
   */
  public static int validate(Pool pool, SchemeAllocator allocator, long dir, long segmentBytes, SegmentCheck check,
      String scheme) {
    Damage.requireBlock(pool, allocator, dir, ENTRIES, 64, scheme + " table header's directory word");
    MemorySegment m = pool.memory();
    int g = depth(m, dir);
    if (g < 0 || g > MAX_DEPTH) {
      throw Damage.corrupt(Damage.where(pool) + ": " + scheme + " directory at " + dir + " has global depth " + g
          + ", not 0.." + MAX_DEPTH + ": the pool was damaged; restore it from a copy");
    }
    Damage.requireBlock(pool, allocator, dir, bytes(g), 64, scheme + " table header's directory word (global depth " + g + ")");
    long entries = 1L << g;
    for (long i = 0; i < entries; ) {
      long seg = (long) LONG.get(m, dir + ENTRIES + 8 * i);
      // The message is built only on failure, not once per entry run (issue 3).
      String bad = Damage.blockProblem(pool, allocator, seg, segmentBytes, 64);
      if (bad != null) {
        throw Damage.corrupt(Damage.where(pool) + ": " + scheme + " directory entry " + i + " names offset " + seg
            + ", " + bad + ": the pool was damaged; restore it from a copy");
      }
      long j = i + 1;
      while (j < entries && (long) LONG.get(m, dir + ENTRIES + 8 * j) == seg) {
        j++;
      }
      String problem = check.check(m, seg, i, j - i, g);
      if (problem != null) {
        throw Damage.corrupt(Damage.where(pool) + ": " + scheme + " directory entries " + i + ".." + (j - 1)
            + " (global depth " + g + ") name the segment at " + seg + ", which " + problem
            + ": the pool was damaged; restore it from a copy");
      }
      i = j;
    }
    return g;
  }

  /**
   * The common shape check of {@link #validate}: a segment of local depth {@code d} and pattern
   * {@code p} covers the entries {@code [p << (g - d), (p + 1) << (g - d))}; the run must lie
   * inside them.
   *
   * @param localDepth the segment's local depth
   * @param pattern its pattern
   * @param first the run's first entry
   * @param count the run's length
   * @param depth the global depth
   * @return null if the segment covers the run, else what is wrong
   */
  public static String coverage(int localDepth, long pattern, long first, long count, int depth) {
    if (localDepth < 0 || localDepth > depth) {
      return "has local depth " + localDepth + ", above the global depth";
    }
    if ((pattern >>> localDepth) != 0) {
      return "has pattern " + pattern + ", wider than its local depth " + localDepth;
    }
    long lo = pattern << (depth - localDepth);
    long hi = (pattern + 1) << (depth - localDepth);
    if (first < lo || first + count > hi) {
      return "covers entries " + lo + ".." + (hi - 1) + " only (local depth " + localDepth + ", pattern " + pattern + ")";
    }
    return null;
  }

  /**
   * Fills (not publishes) the first directory of a table: entry i names {@code segments[i]};
   * flushed, not drained. The caller publishes it with its table header.
   *
   * @param m the mapping, covering {@code dir}
   * @param p the pool's persistence
   * @param dir a reserved block of {@link #bytes}{@code (depth)} bytes
   * @param segments {@code 2^depth} reserved segments
   */
  public static void fill(MemorySegment m, Persistence p, long dir, SchemeAllocator.Reserved[] segments) {
    int depth = Integer.numberOfTrailingZeros(segments.length);
    m.asSlice(dir, ENTRIES).fill((byte) 0);
    INT.set(m, dir + DEPTH, depth);
    for (int i = 0; i < segments.length; i++) {
      LONG.set(m, dir + ENTRIES + 8L * i, segments[i].offset());
    }
    p.flush(dir, bytes(depth));
  }

  /**
   * Doubles the directory the route's table header word names (CCEH §3.4 Fig. 6; Dash §4.7):
   * entry i of the old directory becomes entries 2i and 2i + 1 of the new one, published and the
   * old one freed by one step of {@code allocator} ({@link Pool#schemeAllocator()}). The route is
   * cleared before that step and set from the header after it, also when it fails ({@link
   * DirectoryRoute}). The caller holds its table's directory lock.
   *
   * @param pool the pool
   * @param allocator the allocator the scheme's blocks come from
   * @param route the table's route, naming the table header's directory word
   * @param scheme the scheme's name, for messages
   * @return the new directory's offset
   * @throws IllegalStateException at {@link #MAX_DEPTH}
   */
  public static long doubleInto(Pool pool, SchemeAllocator allocator, DirectoryRoute route, String scheme) {
    route.changing(); // before the step frees the current directory
    try {
      MemorySegment m = pool.memory();
      long old = route.directory(m);
      int g = depth(m, old);
      if (g >= MAX_DEPTH) {
        throw new IllegalStateException(scheme + ": the directory is at its maximum depth " + g);
      }
      long bytes = bytes(g + 1);
      SchemeAllocator.Reserved r = allocator.reserve(bytes);
      m = pool.memory();
      long n = r.offset();
      m.asSlice(n, ENTRIES).fill((byte) 0);
      INT.set(m, n + DEPTH, g + 1);
      long entries = 1L << g;
      for (long i = 0; i < entries; i++) {
        long e = (long) LONG.get(m, old + ENTRIES + 8 * i);
        LONG.set(m, n + ENTRIES + 16 * i, e);
        LONG.set(m, n + ENTRIES + 16 * i + 8, e);
      }
      pool.persistence().flush(n, bytes);
      try (SchemeAllocator.Step pub = allocator.begin()) {
        pub.publish(r, route.directoryWord()).deferFree(old);
        // PERSIST(doubling): the new directory is filled and durable before the step that publishes it (and frees the old one) commits; no thread sees it before
        pub.commit();
      }
      return n;
    } finally {
      route.published(pool.memory());
    }
  }


  /**
   * The directory part of a split: every entry of the hash range {@code (depth, pattern)} that
   * names {@code from} is set to {@code to} (release stores) and flushed; not drained, the caller
   * drains with its own reason. Idempotent. The caller holds the directory lock (or is recovery).
   *
   * @param m the mapping
   * @param p the pool's persistence
   * @param dir the current directory
   * @param from the segment that gives the range up
   * @param to the segment that takes it
   * @param depth the range's depth, at most the global depth
   * @param pattern the range's prefix of {@code depth} bits
   */
  public static void redirect(MemorySegment m, Persistence p, long dir, long from, long to, int depth, long pattern) {
    int g = depth(m, dir);
    long count = 1L << (g - depth);
    long e0 = dir + ENTRIES + 8 * (pattern << (g - depth));
    for (long i = 0; i < count; i++) {
      long e = e0 + 8 * i;
      if ((long) LONG.get(m, e) == from) {
        LONG.setRelease(m, e, to);
      }
    }
    p.flush(e0, 8 * count);
  }
}
