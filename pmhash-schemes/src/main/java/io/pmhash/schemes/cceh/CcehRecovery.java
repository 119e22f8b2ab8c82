package io.pmhash.schemes.cceh;

import static io.pmhash.schemes.cceh.CcehLayout.*;

import io.pmhash.core.Pool;
import io.pmhash.schemes.internal.Damage;
import io.pmhash.schemes.internal.ExtendibleDirectory;
import java.lang.foreign.MemorySegment;

/**
 * Recovery at open (CCEH §3.6): a scan of the whole directory, as the paper's recovery does, so
 * its cost grows with the directory (Dash Table 1: 113 ms for 40 M records to 1673 ms for 1280 M).
 * After an unclean shutdown, for every distinct segment the directory names, in entry order:
 *
 * <ol>
 *   <li>its reader-writer lock is cleared (a lock held at the crash may be durable);
 *   <li>a split whose split child is set is rolled forward ({@link CcehSplit#finish}: N's
 *       entries, S's moved bits and shape, the child word; each step idempotent). N was complete
 *       and owned in one redo step, so rolling forward never reads half a segment;
 *   <li>its shape is checked against the directory: local depth at most the global depth, and
 *       its {@code 2^(g - d)} entries all name it. A violation is corruption (no crash of the
 *       protocol in {@link CcehSplit} leaves one) and open fails with a clear message.
 * </ol>
 *
 * Insert, update and delete need no repair: each commits with one 8-byte store (a valid bit or
 * the value), so a crash leaves them all or nothing and never a slot that cannot be reused (the
 * published code's sentinel key could be left in a slot forever). A doubling is one redo step,
 * replayed by the pool. After a clean shutdown only the record count is taken (16 bitmap words
 * per segment). A crash during recovery repeats it at the next open.
 */
final class CcehRecovery {
  /**
   * What a scan found.
   *
   * @param records records in the table
   * @param segments distinct segments
   * @param splitsFinished splits rolled forward
   * @param entriesScanned directory entries read
   */
  record Result(long records, long segments, int splitsFinished, long entriesScanned) {}

  private final CcehTable table;
  private final Pool pool;

  CcehRecovery(CcehTable table) {
    this.table = table;
    this.pool = table.pool;
  }

  Result run(boolean repair) {
    MemorySegment m = pool.memory();
    long dir = table.directory(m);
    String where = CcehTable.where(pool);
    if (Damage.outsideBlocks(pool, pool.schemeAllocator(), dir, DIR_ENTRIES) || (dir & 63) != 0) {
      throw CcehTable.corrupt(where + ": cceh directory offset " + dir + " is outside the pool or not 64-byte aligned");
    }
    int g = (int) INT.get(m, dir + DIR_DEPTH);
    if (g < 0 || g > MAX_DEPTH || dir + directoryBytes(g) > m.byteSize()) {
      throw CcehTable.corrupt(where + ": cceh directory depth " + g + " is invalid for the pool's size");
    }
    // (0) read-only, before any repair writes (issue 9): every entry an allocated segment block,
    // and every split child that (2) follows an allocated segment block of a plausible shape
    ExtendibleDirectory.validate(pool, pool.schemeAllocator(), dir, SEGMENT_BYTES, (mm, seg, first, count, depth) -> {
      long child = repair ? (long) LONG.get(mm, seg + SEG_CHILD) : 0;
      if (child == 0) {
        return null;
      }
      String problem = Damage.blockProblem(pool, pool.schemeAllocator(), child, SEGMENT_BYTES, 64);
      if (problem != null) {
        return "names a split child at " + child + ", " + problem;
      }
      long shape = (long) LONG.get(mm, seg + SEG_SHAPE);
      int d = depthOf((long) LONG.get(mm, child + SEG_SHAPE)) - 1;
      if (d < 0 || d >= depth || depthOf(shape) > d + 1) {
        return "names a split child at " + child + " whose depth " + (d + 1) + " does not follow its own " + depthOf(shape);
      }
      return null;
    }, CcehProvider.NAME);
    long entries = 1L << g;
    long records = 0;
    long segments = 0;
    int finished = 0;
    for (long i = 0; i < entries; ) {
      long seg = (long) LONG.get(m, dir + DIR_ENTRIES + 8 * i);
      if (Damage.outsideBlocks(pool, pool.schemeAllocator(), seg, SEGMENT_BYTES) || (seg & 63) != 0) {
        throw CcehTable.corrupt(where + ": cceh directory entry " + i + " names offset " + seg + ", outside the heap");
      }
      if (repair) {
        // (1) a lock held at the crash
        LONG.setRelease(m, seg + SEG_LOCK, 0L);
        // (2) an interrupted split
        long child = (long) LONG.get(m, seg + SEG_CHILD);
        if (child != 0) {
          long shape = (long) LONG.get(m, seg + SEG_SHAPE);
          long childShape = (long) LONG.get(m, child + SEG_SHAPE);
          int d = depthOf(childShape) - 1;
          if (child + SEGMENT_BYTES > m.byteSize() || d < 0 || depthOf(shape) > d + 1) {
            throw CcehTable.corrupt(where + ": cceh segment " + seg + " has an invalid split child " + child);
          }
          table.split.finish(m, seg, child, d, patternOf(childShape) >>> 1, null);
          finished++;
        }
      }
      // (3) the shape agrees with the directory
      long shape = (long) LONG.get(m, seg + SEG_SHAPE);
      int d = depthOf(shape);
      long span = d > g ? 0 : 1L << (g - d);
      if (span == 0 || patternOf(shape) << (g - d) != i) {
        throw CcehTable.corrupt(where + ": cceh directory entry " + i + " names segment " + seg + " of local depth " + d + " and pattern " + patternOf(shape) + ", which does not cover it (global depth " + g + ")");
      }
      for (long j = i + 1; j < i + span; j++) {
        if ((long) LONG.get(m, dir + DIR_ENTRIES + 8 * j) != seg) {
          throw CcehTable.corrupt(where + ": cceh directory entry " + j + " should name segment " + seg + " (local depth " + d + ")");
        }
      }
      records += CcehSegment.count(m, seg);
      segments++;
      i += span;
    }
    return new Result(records, segments, finished, entries);
  }
}
