package io.pmhash.schemes.nvlh;

import static io.pmhash.schemes.contract.CrashModel.key;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.PersistenceStats;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Drains (and, for the log-free operations, flushed lines) per operation equal the tables in
 * {@link io.pmhash.schemes.nvlh} and {@code docs/format/nvlh.md}. A transaction costs one drain
 * per snapshot plus two at commit ({@link io.pmhash.core.log.Tx}); its flushed lines depend on
 * where its log entries fall in the lane, so only its drains are asserted.
 */
class NvlhPersistCountTest {
  @TempDir Path dir;

  private static PersistenceStats stats(LongHashTable t) {
    return t.pool().persistence().stats();
  }

  private static void assertCost(LongHashTable t, PersistenceStats before, long drains, long lines, String what) {
    PersistenceStats d = stats(t).minus(before);
    assertEquals(drains, d.drains(), what + ": drains");
    if (lines >= 0) {
      assertEquals(lines, d.linesFlushed(), what + ": lines flushed");
    }
  }

  private LongHashTable create(TableOptions o) throws Exception {
    return PmHash.create(dir.resolve("t.pool"), o.withDurability(Durability.PMEM_EMULATED));
  }

  @Test
  void logFreeOperations() throws Exception {
    try (LongHashTable t = create(TableOptions.scheme(NvlhProvider.NAME).withInitialCapacity(10_000))) {
      PersistenceStats s = stats(t);
      assertTrue(t.put(1, 10));
      assertCost(t, s, 2, 2, "insert into a free slot");
      s = stats(t);
      assertFalse(t.put(1, 11));
      assertCost(t, s, 1, 1, "update");
      s = stats(t);
      assertEquals(11, t.get(1, -1));
      assertTrue(t.containsKey(1));
      assertEquals(-1, t.get(2, -1));
      assertCost(t, s, 0, 0, "reads");
      s = stats(t);
      assertTrue(t.remove(1));
      assertCost(t, s, 1, 1, "delete");
    }
  }

  @Test
  void overflowInsertAndDeleteAreOneTransactionEach() throws Exception {
    // never splits: chains grow, so the tenth insert into a 4-bucket table chains an overflow bucket
    try (NvlhTable t = (NvlhTable) create(TableOptions.scheme(NvlhProvider.NAME).withParam(NvlhProvider.INITIAL_BUCKETS, 4)
        .withParam(NvlhProvider.SPLIT_LOAD, 100).withParam(NvlhProvider.MERGE_LOAD, 0))) {
      int i = 0;
      PersistenceStats s;
      for (;; i++) {
        // a block of the overflow buckets' size class reserved and given back, so the allocation
        // below formats no chunk: the drains counted are the transaction's alone
        t.pool.allocator().cancel(t.pool.allocator().reserve(NvlhLayout.BUCKET_BYTES));
        s = stats(t);
        long before = t.overflowBuckets.get();
        t.put(key(i), i);
        if (t.overflowBuckets.get() > before) {
          break;
        }
      }
      // alloc (entry flushed), snapshot of the tail's next word (1 drain), commit (2 drains)
      assertCost(t, s, 3, -1, "insert chaining an overflow bucket");
      s = stats(t);
      assertTrue(t.remove(key(i)));
      // free (entry flushed), snapshot of the predecessor's next word (1), commit (2)
      assertCost(t, s, 3, -1, "delete emptying an overflow bucket");
      assertEquals(0, t.splits.get());
    }
  }

  /**
   * Split on collision (the default): the insert into a full chain and the split it triggers are
   * one transaction, one snapshot call and one commit: 3 drains, 4 when the moves free a source
   * overflow bucket or chain one to q (a log entry written after the snapshot call, drained first
   * at commit). Segments of 256 buckets, so that no segment is allocated.
   */
  @Test
  void anInsertIntoAFullChainAndItsSplitAreOneTransaction() throws Exception {
    try (NvlhTable t = (NvlhTable) create(TableOptions.scheme(NvlhProvider.NAME).withParam(NvlhProvider.INITIAL_BUCKETS, 4)
        .withParam(NvlhProvider.SEGMENT_SHIFT, 8))) {
      for (int i = 0; ; i++) {
        t.pool.allocator().cancel(t.pool.allocator().reserve(NvlhLayout.BUCKET_BYTES)); // formats no chunk below
        long expected = 3 + (nextSplitFreesOrChainsABucket(t) ? 1 : 0);
        PersistenceStats s = stats(t);
        long combined = t.splitsWithInsert.get();
        t.put(key(i), i);
        if (t.splitsWithInsert.get() > combined) {
          assertCost(t, s, expected, -1, "insert " + i + " into a full chain, with its split");
          NvlhInvariants.check(t, "after it");
          assertEquals(i + 1, t.size());
          return;
        }
      }
    }
  }

  /** Whether the next split of {@code t} frees an overflow bucket of p's chain or chains one to q. */
  private static boolean nextSplitFreesOrChainsABucket(NvlhTable t) {
    MemorySegment m = t.pool.memory();
    long s = t.state;
    long n = t.n0 << NvlhLayout.level(s);
    long q = NvlhLayout.splitPointer(s) + n;
    long head = t.bucketOffset(NvlhLayout.splitPointer(s));
    int moving = 0;
    boolean frees = false;
    for (long x = head; x != 0; x = NvlhBucket.next(m, x)) {
      int r = 0;
      for (long bits = NvlhBucket.meta(m, x) & NvlhLayout.ALL_SLOTS; bits != 0; bits &= bits - 1) {
        r += (NvlhTable.hash(NvlhBucket.key(m, x, Long.numberOfTrailingZeros(bits))) & (2 * n - 1)) == q ? 1 : 0;
      }
      frees |= x != head && r == NvlhBucket.count(m, x);
      moving += r;
    }
    return frees || moving > NvlhLayout.SLOTS;
  }

  /** The flagged protocol first (forced), then the default single transaction. */
  @Test
  void splitAndMergeCostWhatTheirTransactionsSnapshot() throws Exception {
    try (NvlhTable t = (NvlhTable) create(TableOptions.scheme(NvlhProvider.NAME).withParam(NvlhProvider.INITIAL_BUCKETS, 4)
        .withParam(NvlhProvider.SPLIT_LOAD, 100).withParam(NvlhProvider.MERGE_LOAD, 0))) {
      for (int i = 0; i < 20; i++) {
        t.put(key(i), i);
      }
      // bucket 0 splits into 4 (same segment: no allocation); records of 0's chain whose h1 is 4 move
      MemorySegment m = t.pool.memory();
      long expected = 5 + 5; // start: pending + two flags + commit; finish: state + two flags + commit
      int moved = 0;
      for (long x = t.bucketOffset(0); x != 0; x = NvlhBucket.next(m, x)) {
        int r = 0;
        for (long bits = NvlhBucket.meta(m, x) & NvlhLayout.ALL_SLOTS; bits != 0; bits &= bits - 1) {
          r += (NvlhTable.hash(NvlhBucket.key(m, x, Long.numberOfTrailingZeros(bits))) & 7) == 4 ? 1 : 0;
        }
        if (r > 0) {
          expected += 1 + 1 + 2; // q's meta (its pairs are flushed, not logged), the source's meta or next, commit
        }
        moved += r;
      }
      assertTrue(moved > 0 && moved <= NvlhLayout.SLOTS, "a split moving into free slots of bucket 4: " + moved);
      PersistenceStats s = stats(t);
      t.singleTxChain = 0; // the flagged protocol, whatever the chain's length
      NvlhResize.split(t);
      assertCost(t, s, expected, -1, "split moving " + moved + " records");
      NvlhInvariants.check(t, "after the split");
      // the merge moves every record of bucket 4 back into bucket 0's chain, in one transaction
      assertEquals(0, NvlhBucket.next(m, t.bucketOffset(4)), "bucket 4 has no overflow bucket");
      int r4 = NvlhBucket.count(m, t.bucketOffset(4));
      long merge = 5 + 5 + (r4 > 0 ? appendDrains(m, t.bucketOffset(0), r4) + 1 + 2 : 0);
      s = stats(t);
      NvlhResize.merge(t);
      assertCost(t, s, merge, -1, "merge of bucket 4 (" + r4 + " records)");
      NvlhInvariants.check(t, "after the merge");
      // the default: a chain of at most four buckets splits in one transaction
      t.singleTxChain = 4;
      // one snapshot call for the state word and every source bucket's header, then the commit;
      // bucket 4 is beyond the table until the commit, so nothing of it is logged
      long one = 1 + 2;
      boolean unlinks = false;
      moved = 0;
      for (long x = t.bucketOffset(0); x != 0; x = NvlhBucket.next(m, x)) {
        int r = 0;
        for (long bits = NvlhBucket.meta(m, x) & NvlhLayout.ALL_SLOTS; bits != 0; bits &= bits - 1) {
          r += (NvlhTable.hash(NvlhBucket.key(m, x, Long.numberOfTrailingZeros(bits))) & 7) == 4 ? 1 : 0;
        }
        unlinks |= x != t.bucketOffset(0) && r == NvlhBucket.count(m, x);
        moved += r;
      }
      one += unlinks ? 1 : 0; // a free's log entry, written after the snapshot: drained first at commit
      assertTrue(moved > 0 && moved <= NvlhLayout.SLOTS, "again a split moving into free slots of bucket 4: " + moved);
      s = stats(t);
      NvlhResize.split(t);
      assertCost(t, s, one, -1, "split in one transaction");
      NvlhInvariants.check(t, "after the single-transaction split");
      // and the merge back in one transaction: one snapshot call (state, bucket 4's header), one
      // snapshot per receiving bucket of 0's chain (it is reachable), commit
      r4 = NvlhBucket.count(m, t.bucketOffset(4));
      assertEquals(0, NvlhBucket.next(m, t.bucketOffset(4)), "bucket 4 has no overflow bucket");
      long mergeOne = 1 + appendDrains(m, t.bucketOffset(0), r4) + 2;
      s = stats(t);
      NvlhResize.merge(t);
      assertCost(t, s, mergeOne, -1, "merge in one transaction (" + r4 + " records)");
      NvlhInvariants.check(t, "after the single-transaction merge");
    }
  }

  /**
   * Drains of appending {@code r} records to a chain in one transaction: one snapshot per bucket
   * with a free slot that receives one, one per new overflow bucket linked.
   */
  static long appendDrains(MemorySegment m, long head, int r) {
    long drains = 0;
    for (long b = head; b != 0 && r > 0; b = NvlhBucket.next(m, b)) {
      int free = NvlhLayout.SLOTS - NvlhBucket.count(m, b);
      if (free > 0) {
        drains++;
        r -= Math.min(free, r);
      }
    }
    for (; r > 0; r -= NvlhLayout.SLOTS) {
      drains++;
    }
    return drains;
  }

  @Test
  void nvdh() throws Exception {
    try (NvdhTable t = (NvdhTable) create(TableOptions.scheme(NvdhProvider.NAME))) {
      PersistenceStats s = stats(t);
      assertTrue(t.put(1, 10));
      assertCost(t, s, 2, 2, "nvdh insert");
      s = stats(t);
      assertFalse(t.put(1, 11));
      assertCost(t, s, 1, 1, "nvdh update");
      s = stats(t);
      assertEquals(11, t.get(1, -1));
      assertCost(t, s, 0, 0, "nvdh reads");
      s = stats(t);
      assertTrue(t.remove(1));
      assertCost(t, s, 1, 1, "nvdh delete");
      int i = 0;
      for (;; i++) {
        // as above: the new table's block is reserved and given back first, so that the rehash
        // formats no chunk
        t.pool.allocator().cancel(t.pool.allocator().reserve(NvdhLayout.tableBytes(t.k + 1)));
        s = stats(t);
        long r = t.rehashes;
        t.put(key(i), i);
        if (t.rehashes > r) {
          break;
        }
      }
      // the new table persisted (1), the publication (a redo step: 4), then the insert (2)
      assertCost(t, s, 7, -1, "nvdh insert that rehashes");
    }
  }

  /**
   * The paper's NVDH: a transaction drains once per snapshot, then twice at commit (the changed
   * ranges, then the generation word that invalidates the log; Tx's persist order).
   */
  @Test
  void nvdhTransactions() throws Exception {
    try (NvdhTable t = (NvdhTable) create(TableOptions.scheme(NvdhProvider.NAME).withParam(NvdhProvider.TRANSACTIONS, 1))) {
      PersistenceStats s = stats(t);
      assertTrue(t.put(1, 10));
      assertCost(t, s, 4, -1, "transactional nvdh insert: the pair and the state word snapshotted, then the commit");
      s = stats(t);
      assertFalse(t.put(1, 11));
      assertCost(t, s, 3, -1, "transactional nvdh update");
      s = stats(t);
      assertEquals(11, t.get(1, -1));
      assertCost(t, s, 0, 0, "transactional nvdh reads");
      s = stats(t);
      assertTrue(t.remove(1));
      assertCost(t, s, 3, -1, "transactional nvdh delete");
      assertEquals(0, t.size());
    }
  }
}
