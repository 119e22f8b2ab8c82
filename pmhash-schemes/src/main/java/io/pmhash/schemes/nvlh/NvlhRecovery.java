package io.pmhash.schemes.nvlh;

import static io.pmhash.schemes.nvlh.NvlhLayout.ALL_SLOTS;
import static io.pmhash.schemes.nvlh.NvlhLayout.BUCKET_BYTES;
import static io.pmhash.schemes.nvlh.NvlhLayout.DIR_LEVELS;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_CLEAN_OVERFLOW;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_CLEAN_SIZE;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_DIR;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_MAGIC;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_N0;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_PENDING;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_PENDING_TO;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_SEG_SHIFT;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_STATE;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_VERSION;
import static io.pmhash.schemes.nvlh.NvlhLayout.INT;
import static io.pmhash.schemes.nvlh.NvlhLayout.IN_PROCESS;
import static io.pmhash.schemes.nvlh.NvlhLayout.LAYOUT_VERSION;
import static io.pmhash.schemes.nvlh.NvlhLayout.LONG;
import static io.pmhash.schemes.nvlh.NvlhLayout.MAGIC;
import static io.pmhash.schemes.nvlh.NvlhLayout.MAX_SEG_SHIFT;
import static io.pmhash.schemes.nvlh.NvlhLayout.MIN_SEG_SHIFT;
import static io.pmhash.schemes.nvlh.NvlhLayout.PENDING_KIND;
import static io.pmhash.schemes.nvlh.NvlhLayout.PENDING_SPLIT;
import static io.pmhash.schemes.nvlh.NvlhLayout.dirIndex;
import static io.pmhash.schemes.nvlh.NvlhLayout.dirLevel;
import static io.pmhash.schemes.nvlh.NvlhLayout.level;
import static io.pmhash.schemes.nvlh.NvlhLayout.splitPointer;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.schemes.internal.Damage;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Opening and recovery (§III).
 *
 * <ol>
 *   <li>The pool has already rolled back the one transaction a crash interrupted (its undo log):
 *       every chain, the directory and the header are as some transaction boundary left them.
 *   <li>{@link #validate}: magic, version, geometry, a state word whose p is below N, and a
 *       directory whose segments are owned blocks of the right size and cover every primary
 *       bucket (and the target of a pending split), and chains whose links are sound ({@link
 *       #checkChains}: every overflow bucket an allocated block, no loop; after a clean shutdown
 *       exactly as many as the count written at close), read only, O(buckets + overflow
 *       buckets); else an {@link UncheckedIOException} wrapping a {@link CorruptPoolException},
 *       the file unchanged.
 *   <li>If the header's {@code pending} names a split or merge, both of its buckets must carry
 *       the in-process flag; it is finished ({@link NvlhResize#finishPending}): O(its chains).
 *   <li>After a clean shutdown the counts written at close are used (and marked used, -1, so that
 *       only the next close validates them again): nothing beyond the chain links is read.
 *       After a crash, every chain is scanned: each record must sit in the chain its hash names,
 *       no bucket may still carry a flag, every overflow bucket must be an owned block; records
 *       and overflow buckets are counted. O(records).
 * </ol>
 *
 * Every step is a transaction or reads only, so a crash during recovery is recovered by the next
 * open the same way.
 */
final class NvlhRecovery {
  private NvlhRecovery() {}

  /** The checked {@link CorruptPoolException}, wrapped for the unchecked SPI. */
  static UncheckedIOException corrupt(String message) {
    return new UncheckedIOException(new CorruptPoolException(message));
  }

  /**
   * Marks the clean count at {@code word} used (-1): only the next {@link
   * io.pmhash.map.LongHashTable#close()} writes a valid one again. Without this, a table opened a
   * second time in one pool session (the pool still says "clean") would trust the count written
   * at the previous close, or the -1 of create, instead of scanning. One persist per open.
   */
  static void consumeCleanCount(Pool pool, long word) {
    LONG.setRelease(pool.memory(), word, -1L);
    pool.persistence().persist(word, 8);
  }

  /** Whether the scheme allocator is the backend's (PMDK's, on llpl), whose blocks are outside the heap. */
  static boolean backendAllocates(Pool pool) {
    return pool.schemeAllocator() != pool.allocator().schemeAllocator();
  }

  /** {@link Damage#blockProblem} for a backend's blocks: read-only, through its allocator's owned set. */
  private static String backendBlockProblem(Pool pool, long x, long bytes) {
    SchemeAllocator a = pool.schemeAllocator();
    if (x <= 0 || (x & 15) != 0 || !a.owned(x)) {
      return "not a block the backend's allocator owns";
    }
    return a.blockSize(x) < bytes ? "a block of " + a.blockSize(x) + " bytes, not " + bytes : null;
  }

  /**
   * Whether root 0 names a table header: an owned block of the scheme allocator, of at least
   * {@code bytes}, 16-byte aligned (pmhash's blocks of 64 bytes and more are 64-byte aligned;
   * PMDK's objects, on the llpl backend, 16-byte aligned), inside the mapping.
   */
  static boolean namesHeader(Pool pool, long h, long bytes) {
    SchemeAllocator a = pool.schemeAllocator();
    return h > 0 && (h & 15) == 0 && h + bytes <= pool.memory().byteSize() && a.owned(h) && a.blockSize(h) >= bytes;
  }

  /** Validates the header and directory and returns the table (not yet recovered). */
  static NvlhTable validate(Pool pool, int splitLoadPercent, int mergeLoadPercent) {
    long h = pool.root(0);
    MemorySegment m = pool.memory();
    if (h == 0) {
      throw corrupt("nvlh: no table (root 0 is empty): its create was interrupted; delete the file and create it again");
    }
    if (!namesHeader(pool, h, NvlhLayout.TABLE_HEADER.byteSize())) {
      throw corrupt("nvlh: root 0 (" + h + ") does not name a table header");
    }
    if ((long) LONG.get(m, h + HDR_MAGIC) != MAGIC) {
      throw corrupt("nvlh: bad table magic at " + h);
    }
    int v = (int) INT.get(m, h + HDR_VERSION);
    if (v != LAYOUT_VERSION) {
      throw corrupt("nvlh: table layout version " + v + ", expected " + LAYOUT_VERSION
          + (v == 1 ? " (version 1 had no fingerprints in the bucket's meta word; there is no converter: recreate the pool)" : ""));
    }
    int segShift = (int) INT.get(m, h + HDR_SEG_SHIFT);
    if (segShift < MIN_SEG_SHIFT || segShift > MAX_SEG_SHIFT) {
      throw corrupt("nvlh: segment shift " + segShift + " outside " + MIN_SEG_SHIFT + ".." + MAX_SEG_SHIFT);
    }
    long n0 = (long) LONG.get(m, h + HDR_N0);
    if (n0 <= 0 || Long.bitCount(n0) != 1 || n0 > 1L << 40) {
      throw corrupt("nvlh: n0 = " + n0 + " is not a power of two in 1..2^40");
    }
    long state = (long) LONG.get(m, h + HDR_STATE);
    if (level(state) > NvlhResize.MAX_LEVEL || Long.numberOfLeadingZeros(n0) - level(state) < 10
        || splitPointer(state) >= n0 << level(state)) {
      throw corrupt("nvlh: state word " + Long.toHexString(state) + " (i = " + level(state) + ", p = " + splitPointer(state) + ") is impossible with n0 = " + n0);
    }
    long buckets = (n0 << level(state)) + splitPointer(state);
    long pending = (long) LONG.get(m, h + HDR_PENDING);
    long highest = buckets - 1;
    if ((pending & PENDING_KIND) == PENDING_SPLIT) {
      highest = Math.max(highest, (long) LONG.get(m, h + HDR_PENDING_TO));
    }
    long needed = (highest >>> segShift) + 1;
    long[] segs = readDirectory(pool, h, segShift, needed);
    NvlhTable t = new NvlhTable(pool, h, n0, segShift, state, segs, splitLoadPercent, mergeLoadPercent);
    checkChains(t, highest);
    return t;
  }

  /**
   * Walks the links of every chain, not its records (issue 9: a damaged next word would be
   * followed as an offset by every get, or loop for ever): each overflow bucket must be an
   * allocated, 64-byte aligned block of 128 bytes, and the chains together may hold no more
   * overflow buckets than the heap has room for, nor (after a clean shutdown, whose count is
   * exact) other than the count written at close, so a chain that loops is found. O(primary buckets + overflow buckets), one
   * next word each; reads only, before anything is written. After a crash {@link #recover} then
   * scans the records as well.
   */
  static void checkChains(NvlhTable t, long highest) {
    Pool pool = t.pool;
    MemorySegment m = pool.memory();
    boolean counted = pool.lastShutdownClean() && (long) LONG.get(m, t.header + HDR_CLEAN_SIZE) >= 0;
    long expected = counted ? (long) LONG.get(m, t.header + HDR_CLEAN_OVERFLOW) : -1;
    boolean own = backendAllocates(pool);
    long room = own ? pool.schemeAllocator().blocksOwned() : (pool.size() - pool.heapOffset()) / BUCKET_BYTES;
    long bound = counted && expected >= 0 ? Math.min(expected, room) : room;
    long overflow = 0;
    for (long b = 0; b <= highest; b++) {
      for (long x = NvlhBucket.next(m, t.bucketOffset(b)); x != 0; x = NvlhBucket.next(m, x)) {
        String problem = own ? backendBlockProblem(pool, x, BUCKET_BYTES) : Damage.blockProblem(pool, x, BUCKET_BYTES, 64);
        if (problem != null) {
          throw corrupt(Damage.where(pool) + ": nvlh: the chain of bucket " + b + " names " + x + ", " + problem
              + ": the pool was damaged; restore it from a copy");
        }
        if (++overflow > bound) {
          throw corrupt(Damage.where(pool) + ": nvlh: the chains hold more than " + bound + " overflow buckets"
              + (counted ? " (the count written at close)" : " (the heap's room)") + " at bucket " + b
              + ": a chain loops or the count was damaged; restore the pool from a copy");
        }
      }
    }
    if (counted && overflow != expected) {
      throw corrupt(Damage.where(pool) + ": nvlh: the chains hold " + overflow + " overflow buckets, but the count"
          + " written at close says " + expected + ": the pool was damaged; restore it from a copy");
    }
  }

  private static long[] readDirectory(Pool pool, long h, int segShift, long needed) {
    MemorySegment m = pool.memory();
    SchemeAllocator a = pool.schemeAllocator();
    long segBytes = BUCKET_BYTES << segShift;
    long[] segs = new long[(int) Math.max(4, needed)];
    for (long g = 0; ; g++) {
      int lvl = dirLevel(g);
      long dir = lvl < DIR_LEVELS ? (long) LONG.get(m, h + HDR_DIR + 8L * lvl) : 0;
      if (dir != 0 && dirIndex(g) == 0 && (!a.owned(dir) || a.blockSize(dir) < 8L << lvl)) {
        throw corrupt("nvlh: directory level " + lvl + " at " + dir + " is not an owned block of " + (8L << lvl) + " bytes");
      }
      long seg = dir == 0 ? 0 : (long) LONG.get(m, dir + 8 * dirIndex(g));
      if (seg == 0) {
        if (g < needed) {
          throw corrupt("nvlh: segment " + g + " is missing; the table's " + needed + " segments hold its primary buckets");
        }
        return segs;
      }
      if (g >= needed) {
        throw corrupt("nvlh: segment " + g + " at " + seg + " is beyond the table's " + needed + " segments");
      }
      if (!a.owned(seg) || a.blockSize(seg) < segBytes) {
        throw corrupt("nvlh: segment " + g + " at " + seg + " is not an owned block of " + segBytes + " bytes");
      }
      if (g >= segs.length) {
        segs = Arrays.copyOf(segs, 2 * segs.length);
      }
      segs[(int) g] = seg;
    }
  }

  /** Finishes a pending split or merge and sets the counts (from the header, or by a scan after a crash). */
  static void recover(NvlhTable t) {
    NvlhResize.finishPending(t);
    MemorySegment m = t.pool.memory();
    long cleanSize = (long) LONG.get(m, t.header + HDR_CLEAN_SIZE);
    if (t.pool.lastShutdownClean() && cleanSize >= 0) {
      t.resetCounts(cleanSize, (long) LONG.get(m, t.header + HDR_CLEAN_OVERFLOW));
      consumeCleanCount(t.pool, t.header + HDR_CLEAN_SIZE);
      return;
    }
    SchemeAllocator a = t.pool.schemeAllocator();
    long records = 0;
    long overflow = 0;
    long buckets = t.bucketCount(t.state);
    long owned = a.blocksOwned();
    for (long b = 0; b < buckets; b++) {
      long head = t.bucketOffset(b);
      for (long x = head; x != 0; x = NvlhBucket.next(m, x)) {
        if (x != head) {
          if (!a.owned(x) || a.blockSize(x) < BUCKET_BYTES) {
            throw corrupt("nvlh: bucket " + b + "'s chain names " + x + ", not an owned overflow bucket");
          }
          if (++overflow > owned) {
            throw corrupt("nvlh: bucket " + b + "'s chain has a cycle");
          }
        }
        long meta = NvlhBucket.meta(m, x);
        if ((meta & IN_PROCESS) != 0) {
          throw corrupt("nvlh: bucket " + b + " has an in-process flag with no split or merge pending (meta " + Long.toHexString(meta) + ")");
        }
        if (NvlhLayout.withoutSlots(meta, ALL_SLOTS) != 0) {
          throw corrupt("nvlh: bucket " + b + " has a fingerprint on a free slot (meta " + Long.toHexString(meta) + ")");
        }
        for (long bits = meta & ALL_SLOTS; bits != 0; bits &= bits - 1) {
          int s = Long.numberOfTrailingZeros(bits);
          long key = NvlhBucket.key(m, x, s);
          long h = NvlhTable.hash(key);
          if (t.bucketOf(h, t.state) != b) {
            throw corrupt("nvlh: key " + key + " is in the chain of bucket " + b + ", not the one its hash names");
          }
          if (NvlhLayout.fingerprintAt(meta, s) != NvlhLayout.fingerprint(h)) {
            throw corrupt("nvlh: key " + key + " in bucket " + b + " has fingerprint " + NvlhLayout.fingerprintAt(meta, s) + ", its hash says " + NvlhLayout.fingerprint(h));
          }
          records++;
        }
      }
    }
    t.resetCounts(records, overflow);
  }
}
