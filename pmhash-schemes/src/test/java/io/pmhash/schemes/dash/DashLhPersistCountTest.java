package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.PersistenceStats;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Drains per operation, as {@code docs/format/dash-lh.md} states them: insert 2, update 1,
 * delete 1, search 0; an insert into an existing chained bucket 2; an insert with a displacement
 * 5 (Dash-EH's: 3 for the move); an insert that allocates a chained bucket 4 (the node's
 * allocator step; the advance persists nothing), plus 4 when the advance allocates a segment array
 * (whose segments' headers alone are flushed: one line each, checked on every array); a split
 * 4 (n's allocator step) + 1 (p's drop; p's new depth is not persisted) + 2 per chained record placed in n (+ 3 per
 * displacement there), on top of the operation that runs it. Operations during which the pool
 * grew or the allocator formatted a chunk (every segment array is a huge block in a new chunk)
 * are left out: those persist the pool's and the allocator's own headers, counted by their tests.
 * A delete that merges: 1 (the delete) + 2 (n's records into p) + 4 (p's new depth flushed; n
 * ABSENT and its chained buckets freed: one allocator step) + 4 per segment array freed (the
 * word back only flushed, before); a delete whose merge only takes the word back (the split was
 * never done): 1 + 4 per array freed. (Retiring blocks can make a block freed earlier reusable: the allocator
 * then persists its own span headers, up to 2 drains more, which the test tells apart.)
 */
class DashLhPersistCountTest {
  @TempDir Path dir;

  private DashLhTable create() throws Exception {
    return (DashLhTable) PmHash.create(dir.resolve("t.pool"), TableOptions.scheme(DashLhProvider.NAME)
        .withParam("firstArray", 1).withParam("stride", 1).withDurability(Durability.PROCESS));
  }

  @Test
  void insertUpdateDeleteSearch() throws Exception {
    try (DashLhTable t = create()) {
      PersistenceStats s0 = t.persistence.stats();
      t.put(1, 10);
      PersistenceStats s1 = t.persistence.stats();
      assertEquals(2, s1.minus(s0).drains(), "insert");
      t.put(1, 11);
      PersistenceStats s2 = t.persistence.stats();
      assertEquals(1, s2.minus(s1).drains(), "update");
      assertEquals(11, t.get(1, -1));
      assertTrue(t.containsKey(1));
      assertEquals(-1, t.get(2, -1));
      PersistenceStats s3 = t.persistence.stats();
      assertEquals(0, s3.minus(s2).drains(), "searches persist nothing");
      t.remove(1);
      PersistenceStats s4 = t.persistence.stats();
      assertEquals(1, s4.minus(s3).drains(), "delete");
      t.remove(1);
      t.replace(1, 5);
      assertEquals(0, t.persistence.stats().minus(s4).drains(), "a failed remove and replace persist nothing");
    }
  }

  @Test
  void chainedInsertsAdvancesAndSplits() throws Exception {
    try (DashLhTable t = create()) {
      SplittableRandom r = new SplittableRandom(5);
      int chainedNew = 0;
      int splitsSeen = 0;
      int displaced = 0;
      int grown = 0;
      long arraySegmentsSeen = 0;
      for (int i = 0; i < 20_000; i++) {
        long advances = t.advances.get();
        long arrays = t.arrays.get();
        long splits = t.splits.get();
        long poolSize = t.pool.size();
        var alloc = t.pool.allocator().stats();
        PersistenceStats s0 = t.persistence.stats();
        t.put(r.nextLong(), i);
        var alloc2 = t.pool.allocator().stats();
        if (t.arrays.get() != arrays) {
          // one header line per segment of the new array, not its buckets (DashLhSplit.allocateArray);
          // counted before the growth check below, since every array takes a new chunk
          long segments = newestArraySegments(t);
          long lines = t.persistence.stats().minus(s0).linesFlushed();
          assertTrue(segments >= 1 && lines >= segments && lines - segments <= NON_ARRAY_LINES,
              "an insert allocating an array of " + segments + " segments flushed " + lines + " lines");
          arraySegmentsSeen = Math.max(arraySegmentsSeen, segments);
        }
        if (t.pool.size() != poolSize || alloc2.chunksFormatted() != alloc.chunksFormatted()
            || alloc2.runChunks() != alloc.runChunks() || alloc2.hugeChunks() != alloc.hugeChunks()) {
          grown++;
          continue; // the pool's growth or the allocator taking a chunk persists their own headers: not this table's count
        }
        long drains = t.persistence.stats().minus(s0).drains();
        long a = t.advances.get() - advances;
        long arr = t.arrays.get() - arrays;
        long sp = t.splits.get() - splits;
        if (sp > 0) {
          // a split: at least its 5 drains; 2 more per chained record Dash-EH's placement put into n
          assertTrue(drains >= 2 + 5 * sp,
              "insert with " + sp + " split(s): " + drains + " drains");
          splitsSeen++;
          continue;
        }
        if (a == 0) {
          assertTrue(drains == 2 || drains == 5, "insert (into a bucket, the fixed stash, or a chained bucket: 2; with a displacement: 5): " + drains);
          displaced += drains == 5 ? 1 : 0;
          continue;
        }
        assertEquals(1, a);
        assertEquals(4 + 4 * arr, drains, "insert that allocates a chained bucket (" + arr + " array)");
        chainedNew++;
      }
      assertTrue(chainedNew > 5 && splitsSeen > 5 && displaced > 0 && grown > 0, "all kinds were seen (pool growths skipped: " + grown + "): " + t.stats());
      assertTrue(arraySegmentsSeen >= 4, "an array of several segments was allocated: " + arraySegmentsSeen);
    }
  }

  /**
   * Lines an insert that allocates a chained bucket and a segment array flushes besides the
   * array's segment headers: the node (5 lines), the bucket metadata that names the record, the
   * two allocator steps (redo entries, commit words) and the new chunk's headers; 19 to 20 when
   * measured. A segment is 265 lines, so flushing a whole array (as before 2026-11-27) exceeds
   * this with any array.
   */
  private static final long NON_ARRAY_LINES = 32;

  /** @return the segments of the highest allocated segment array (no array is freed in these tests) */
  private static long newestArraySegments(DashLhTable t) {
    for (int e = DashLhLayout.DIRECTORY_ENTRIES - 1; e >= 0; e--) {
      if (t.arrayOffset(t.pool.memory(), e) != 0) {
        return DashLhLayout.arraySegments(e, t.firstShift, t.stride);
      }
    }
    return 0;
  }

  @Test
  void deletesThatMerge() throws Exception {
    try (DashLhTable t = create()) {
      SplittableRandom r = new SplittableRandom(7);
      long[] keys = new long[20_000];
      for (int i = 0; i < keys.length; i++) {
        keys[i] = r.nextLong();
        t.put(keys[i], i);
      }
      long grownTo = t.stats().details().get("segments");
      int merged = 0;
      int retreatedOnly = 0;
      int arraysFreed = 0;
      int plain = 0;
      int allocatorOwn = 0;
      for (long k : keys) {
        long merges = t.merges.get();
        long retreats = t.retreats.get();
        long freed = t.arraysFreed.get();
        long splits = t.splits.get();
        var alloc = t.pool.allocator().stats();
        PersistenceStats s0 = t.persistence.stats();
        assertTrue(t.remove(k));
        long drains = t.persistence.stats().minus(s0).drains();
        var alloc2 = t.pool.allocator().stats();
        if (t.splits.get() != splits) {
          continue; // the delete first ran a due split (counted in chainedInsertsAdvancesAndSplits)
        }
        long m = t.merges.get() - merges;
        long back = t.retreats.get() - retreats;
        long arr = t.arraysFreed.get() - freed;
        arraysFreed += (int) arr;
        assertTrue(m <= back && back <= 1, "one merge at most per delete");
        long expected = m == 1 ? 1 + 2 + 4 + 4 * arr : back == 1 ? 1 + 4 * arr : 1;
        if (alloc2.freeChunks() != alloc.freeChunks() || alloc2.runChunks() != alloc.runChunks()
            || alloc2.hugeChunks() != alloc.hugeChunks()) {
          // a freed block's reuse gave a chunk back to a free span: the allocator persists its own
          // span headers (counted by its tests) on top of the table's drains
          assertTrue(drains >= expected, "delete with the allocator's own span changes: " + drains + " drains, at least " + expected);
          allocatorOwn++;
          continue;
        }
        if (m == 1 && drains != expected) {
          // a merge retires blocks (n's chained buckets): retiring one may make a block freed
          // earlier reusable, and the allocator persists its own span header for that (at most
          // a span merge with each neighbour)
          assertTrue(drains > expected && drains <= expected + 2, "delete that merges (" + arr + " array freed): " + drains + " drains, " + expected + " + the allocator's own");
          allocatorOwn++;
        } else if (m == 1) {
          merged++;
        } else if (back == 1) {
          assertEquals(expected, drains, "delete whose merge only takes the word back (" + arr + " array freed)");
          retreatedOnly++;
        } else {
          assertEquals(1, drains, "delete");
          plain++;
        }
      }
      assertTrue(merged > 5 && arraysFreed > 0 && plain > 1000, "all kinds were seen: " + merged + " merges, " + retreatedOnly
          + " retreats only, " + arraysFreed + " arrays freed, " + allocatorOwn + " with the allocator's own span changes; " + t.stats());
      assertTrue(t.stats().details().get("segments") < grownTo, "the table shrank from " + grownTo + " segments: " + t.stats());
    }
  }
}
