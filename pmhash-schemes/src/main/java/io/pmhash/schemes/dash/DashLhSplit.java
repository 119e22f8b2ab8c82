package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashBucket.*;
import static io.pmhash.schemes.dash.DashLayout.BITMAP;
import static io.pmhash.schemes.dash.DashLayout.BUCKET_BYTES;
import static io.pmhash.schemes.dash.DashLayout.INT;
import static io.pmhash.schemes.dash.DashLayout.LOCK;
import static io.pmhash.schemes.dash.DashLayout.LONG;
import static io.pmhash.schemes.dash.DashLayout.SEG_BUCKETS;
import static io.pmhash.schemes.dash.DashLayout.SLOTS;
import static io.pmhash.schemes.dash.DashLayout.shape;
import static io.pmhash.schemes.dash.DashLhLayout.*;
import static io.pmhash.schemes.dash.DashSegment.bucket;

import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolFullException;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.hash.Hashing;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Expansion of Dash-LH (Dash §5.2, §5.3): advancing {@code Next}, allocating segment arrays, and
 * the split of one segment, every step citing the paper.
 *
 * <h2>Advance (§5.3, LHlf)</h2>
 *
 * Allocating a chained stash bucket triggers one advance. The new segment's index is {@code t =
 * 2^L + Next}; if its directory entry is empty, the segment array is reserved, its segments'
 * headers zeroed and flushed (every segment ABSENT), and the array published into the entry in
 * one allocator step (under the array lock). Then {@code N|Next} is CAS-ed forward (Next + 1,
 * or N + 1 and Next = 0 at the end of a round). It is not persisted here: the first split that
 * depends on it flushes it (invariant B below), and an advance lost in a crash before that
 * changed nothing durable. Advancing is the only serialised step (a CAS under the array lock,
 * which a merge's retreat of the word and its freeing of arrays hold too, {@link DashLhMerge}, so
 * that no advance moves the word onto an array a merge is freeing); no segment is split by it.
 *
 * <p>Invariant A: a segment's array (its segments' headers: every segment ABSENT) is durable and
 * published before any {@code N|Next} that addresses it is durable (the array's allocator step
 * commits before the CAS).
 *
 * <h2>Split of segment p at depth d into p and n = p + 2^d (both depth d + 1)</h2>
 *
 * Done by whichever thread next needs p or n at a depth the {@code N|Next} word says (LHlf), so
 * splits of different segments run in parallel. With every lock of p held (buckets, chain lock,
 * chained buckets), after p is recovered:
 *
 * <ol>
 *   <li>If n is not LIVE (never created, or an earlier attempt crashed before its commit): n's
 *       buckets are copied from p keeping, in the same slots, the records whose hash bit
 *       {@code 14 + d} is 1 (so they always fit); p's chained records with that bit are
 *       inserted into n by Dash-EH's placement, and what does not fit goes into new chain nodes
 *       for n (reserved, not owned). n's header gets the global version and no shape. n is
 *       flushed, and so is the {@code N|Next} word.
 *   <li>Commit, one allocator step: n's new nodes become owned and linked and n's shape word
 *       becomes (d + 1, LIVE, n). Invariant B: n's contents and an {@code N|Next} that routes
 *       n's keys to n are durable before n is LIVE (the step's drain orders the flushes of 1).
 *       From here n's keys are n's; p's copies of them are dead (no lookup reaches them).
 *   <li>p drops every record with bit {@code 14 + d} (buckets and chain), its overflow metadata
 *       is rebuilt, and this is drained. Invariant C: p holds only its half durably before its
 *       depth says d + 1.
 *   <li>p's shape becomes (d + 1, LIVE, p), not persisted: losing it in a crash leaves the
 *       state after step 2, which 3–4 repair again.
 * </ol>
 *
 * A crash before 2 leaves n ABSENT and p whole: the split runs again from 1. A crash after 2
 * leaves p at depth d with n LIVE: the next thread that needs p at depth d + 1 runs 3–4 (each
 * idempotent); lookups are right meanwhile, since n's keys route to n. Recovery itself needs no
 * split logic, and a crash during a split never blocks recovery.
 */
final class DashLhSplit {
  private final DashLhTable table;
  private final Pool pool;
  private final Persistence p;
  private final DashSegment segs;
  private final DashLhSegment lh;

  DashLhSplit(DashLhTable table) {
    this.table = table;
    this.pool = table.pool;
    this.p = table.persistence;
    this.segs = table.segments;
    this.lh = table.lh;
  }

  // ---------------------------------------------------------------- advance

  /** Advances Next by one (§5.3); a table at its largest size, or a full pool, stays as it is. */
  void advance() {
    table.arrayLock.lock(); // a merge's retreat and array free hold it too (DashLhMerge steps 4-5)
    try {
      advanceLocked();
    } finally {
      table.arrayLock.unlock();
    }
  }

  private void advanceLocked() {
    for (;;) {
      MemorySegment m = pool.memory();
      long w = (long) LONG.getAcquire(m, table.header + HDR_N_NEXT);
      int level = table.firstShift + roundOf(w);
      long next = nextOf(w);
      if (level >= 31) {
        table.expansionsRefused.incrementAndGet();
        return;
      }
      long t = (1L << level) + next;
      int e = entryOf(t, table.firstShift, table.stride);
      if (e >= DIRECTORY_ENTRIES) {
        table.expansionsRefused.incrementAndGet();
        return;
      }
      if (table.arrayOffset(m, e) == 0) {
        try {
          allocateArray(e);
        } catch (PoolFullException full) {
          // the insert that asked for this is complete; the table grows at a later chain
          // allocation, when the pool may have room
          table.expansionsRefused.incrementAndGet();
          return;
        }
        continue;
      }
      long nw = next + 1 == (1L << level) ? nNext(roundOf(w) + 1, 0) : nNext(roundOf(w), next + 1);
      if (LONG.compareAndSet(m, table.header + HDR_N_NEXT, w, nw)) {
        // no persist here: nothing durable depends on this advance until a split commits a
        // segment it addresses, and that split flushes N|Next first (invariant B); a crash
        // before then loses only the advance, which the next chained bucket repeats
        table.advances.incrementAndGet();
        return;
      }
    }
  }

  /**
   * A segment array for directory entry {@code e}, every segment ABSENT, published into it
   * (§5.2). Only the segments' 64-byte headers are zeroed and flushed: an ABSENT segment's
   * buckets are never read (the split that creates it overwrites all of them, {@link #build}, and
   * a merge leaves the buckets of the segment it makes ABSENT as they were, {@link DashLhMerge}),
   * so zeroing them too would write the array twice, and flushing it (a {@code clwb} takes the
   * line out of the cache here, docs/persistence.md) would make the build miss on every line
   * again; for a large array it was also one long pause inside one insert.
   */
  private void allocateArray(int e) {
    table.arrayLock.lock();
    try {
      if (table.arrayOffset(pool.memory(), e) != 0) {
        return;
      }
      long count = arraySegments(e, table.firstShift, table.stride);
      SchemeAllocator.Reserved r = pool.schemeAllocator().reserve(count * segs.bytes);
      MemorySegment m = pool.memory();
      for (long seg = r.offset(), end = r.offset() + count * segs.bytes; seg < end; seg += segs.bytes) {
        m.asSlice(seg, SEG_BUCKETS).fill((byte) 0);
        p.flush(seg, SEG_BUCKETS);
      }
      try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
        pub.publish(r, table.header + HDR_DIRECTORY + 8L * e);
        // PERSIST(§5.2 hybrid expansion, invariant A): every segment header of the array is zero (ABSENT, no chain, version 0) durably before the step that owns the array and names it in the directory commits
        pub.commit();
      }
      // the DRAM route learns the array's segments now, under the lock that named it (DashLhRoute)
      long first = firstSegmentOf(e, table.firstShift, table.stride);
      for (long i = 0; i < count; i++) {
        table.route.fill(first + i, r.offset() + i * segs.bytes);
      }
      table.arrays.incrementAndGet();
    } finally {
      table.arrayLock.unlock();
    }
  }

  // ---------------------------------------------------------------- split

  /** Splits segment {@code pi} (at {@code pseg}) from depth {@code d}, unless it is no longer at d. */
  void split(long pseg, long pi, int d) {
    MemorySegment m = pool.memory();
    table.recoverIfNeeded(m, pseg);
    segs.lockAll(m, pseg);
    DashLhSegment.lockChain(m, pseg);
    try {
      if (DashSegment.shapeAcquire(m, pseg) != shape(d, LIVE, pi)) {
        return; // another thread split it
      }
      if (dueDepth(pi, table.nNextWord(), table.firstShift) <= d) {
        return; // a merge took the word back since the caller read it (it holds these locks to do so)
      }
      long ni = pi + (1L << d);
      long nseg = table.segmentOffset(pool.memory(), ni);
      if (nseg == 0) {
        throw new IllegalStateException("dash-lh: segment " + ni + " has no segment array although Next addresses it");
      }
      m = pool.memory();
      long nshape = DashSegment.shapeAcquire(m, nseg);
      int[] moved = null; // n committed before a crash that left p unfinished: p drops by hash
      if (DashLayout.stateOf(nshape) != LIVE || DashLayout.patternOf(nshape) != ni) {
        moved = build(pseg, nseg, ni, d);
        m = pool.memory();
      }
      finish(m, pseg, pi, d, moved);
      table.splits.incrementAndGet();
    } finally {
      DashLhSegment.unlockChain(m, pseg);
      segs.unlockAll(m, pseg);
    }
  }

  /**
   * Steps 1–2: n built from p's records with hash bit 14 + d, then committed LIVE.
   *
   * @return per bucket of p (its chain aside), the slots whose records n took
   */
  private int[] build(long pseg, long nseg, long ni, int d) {
    MemorySegment m = pool.memory();
    long hashBit = 1L << (SEGMENT_HASH_SHIFT + d);
    int buckets = segs.normal + segs.stash;
    // n's bucket locks: a segment that was LIVE in this run (its recovery version is the global
    // one) and merged away since may have its bucket locks held by a writer that routed by an
    // older word (it waits, finds n not covering its key and lets go): never overwrite them, so
    // copy around them; a reader's snapshot stays valid only if nothing changed, as ever. Any
    // other n was not touched in this run: its lock words are zero or crash garbage, zeroed.
    boolean touched = (long) LONG.get(m, nseg + DashLhLayout.SEG_VERSION) == table.globalVersion;
    if (touched) {
      for (int i = 0; i < buckets; i++) {
        MemorySegment.copy(m, bucket(pseg, i), m, bucket(nseg, i), LOCK);
        MemorySegment.copy(m, bucket(pseg, i) + LOCK + 4, m, bucket(nseg, i) + LOCK + 4, BUCKET_BYTES - LOCK - 4);
      }
    } else {
      MemorySegment.copy(m, pseg + SEG_BUCKETS, m, nseg + SEG_BUCKETS, buckets * BUCKET_BYTES);
    }
    m.asSlice(nseg, SEG_BUCKETS).fill((byte) 0);
    LONG.set(m, nseg + DashLhLayout.SEG_VERSION, table.globalVersion);
    int[] moved = new int[buckets];
    for (int i = 0; i < buckets; i++) {
      long sb = bucket(pseg, i);
      long nb = bucket(nseg, i);
      int bm = bitmap(m, sb);
      if (!touched) {
        INT.set(m, nb + LOCK, 0);
      }
      moved[i] = DashSplit.slotsWithHashBit(segs, m, sb, bm, hashBit);
      INT.set(m, nb + BITMAP, restrictTo(bm, moved[i]));
    }
    segs.rebuildOverflow(m, nseg);
    // p's chained records of n's half: Dash-EH's placement in n (n is invisible: its drains
    // order nothing anyone reads), the rest into new nodes
    List<SchemeAllocator.Reserved> nodes = new ArrayList<>();
    long head = 0;
    for (long node = DashLhSegment.chainHead(m, pseg); node != 0; node = DashLhSegment.nextNode(m, node)) {
      long b = node + NODE_BUCKET;
      int bm = bitmap(m, b);
      for (int a = DashSplit.slotsWithHashBit(segs, m, b, bm, hashBit); a != 0; a &= a - 1) {
        int slot = Integer.numberOfTrailingZeros(a);
        long k = key(m, b, slot);
        long v = value(m, b, slot);
        if (segs.insertSegmentLocked(m, nseg, k, v) == DashSegment.INSERTED) {
          continue;
        }
        if (head == 0 || count(bitmap(m, head + NODE_BUCKET)) == SLOTS) {
          SchemeAllocator.Reserved r = pool.schemeAllocator().reserve(NODE_BYTES);
          m = pool.memory();
          DashLhSegment.initNode(m, r.offset(), head);
          nodes.add(r);
          head = r.offset();
        }
        long nb = head + NODE_BUCKET;
        int nbm = bitmap(m, nb);
        int s = freeSlot(nbm);
        long h = Hashing.hash(k);
        writeRecord(m, nb, s, k, v, DashSegment.fingerprintOf(h));
        INT.set(m, nb + BITMAP, withSlot(nbm, s, false));
        lh.countChainedRecord(m, nseg, h);
      }
    }
    for (SchemeAllocator.Reserved r : nodes) {
      p.flush(r.offset(), NODE_BYTES);
    }
    p.flush(nseg, segs.bytes);
    p.flush(table.header + HDR_N_NEXT, 8);
    try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
      if (head != 0) {
        pub.publish(nodes.get(nodes.size() - 1), nseg + SEG_CHAIN);
        for (int i = 0; i < nodes.size() - 1; i++) {
          pub.publish(nodes.get(i)); // linked from the node after it
        }
      }
      pub.set(nseg + SEG_SHAPE, shape(d + 1, LIVE, ni));
      // PERSIST(§5.3 split step 2, invariant B): n's buckets and nodes and the N|Next word are durable (flushed above, ordered by the redo entries' drain) before the step that makes n LIVE commits
      pub.commit();
    }
    return moved;
  }

  /**
   * Steps 3–4: p keeps its half; its depth becomes d + 1. Idempotent.
   *
   * @param moved the slots of p's buckets that {@link #build} gave n, or null (n was built
   *     before): every record of a LIVE segment is covered by its shape, so the records of p's
   *     buckets that n took are exactly those (d + 1, pi) does not cover, and are dropped without
   *     hashing their keys again; the chain's, and all of them when null, by their hash
   */
  private void finish(MemorySegment m, long pseg, long pi, int d, int[] moved) {
    long kept = shape(d + 1, LIVE, pi); // p's records without hash bit 14 + d
    if (moved != null) {
      segs.dropSlots(m, pseg, moved);
      lh.dropUncoveredInChain(m, pseg, kept);
    } else {
      lh.dropUncovered(m, pseg, kept);
    }
    lh.rebuildOverflow(m, pseg);
    segs.flushAllMeta(pseg);
    lh.flushChainMeta(m, pseg);
    // PERSIST(§5.3 split step 3, invariant C): p holds only its half, durably, before its depth says d + 1
    p.drain();
    // step 4 needs no persist of its own: a crash that loses the new depth leaves p at depth d
    // with n LIVE, and the next thread that needs p runs steps 3-4 again (idempotent); the
    // shape's line becomes durable with a later flush of it (a chain append's link, recovery's
    // version, or the next split of p)
    LONG.setRelease(m, pseg + SEG_SHAPE, shape(d + 1, LIVE, pi));
  }
}
