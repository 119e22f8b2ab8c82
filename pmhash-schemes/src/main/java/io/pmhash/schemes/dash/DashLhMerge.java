package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashBucket.*;
import static io.pmhash.schemes.dash.DashLayout.LONG;
import static io.pmhash.schemes.dash.DashLayout.NORMAL_BUCKETS;
import static io.pmhash.schemes.dash.DashLayout.SLOTS;
import static io.pmhash.schemes.dash.DashLayout.shape;
import static io.pmhash.schemes.dash.DashLhLayout.*;
import static io.pmhash.schemes.dash.DashSegment.bucket;
import static io.pmhash.schemes.dash.DashSegment.shapeAcquire;

import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import java.lang.foreign.MemorySegment;

/**
 * Contraction of Dash-LH: {@code Next} retreats one segment (or, at 0, {@code N} one round) and
 * the segment split last is merged back into its buddy. Dash §5 describes expansion only; this
 * protocol is ours, built from the split's ({@link DashLhSplit}) in reverse and Dash-EH's merge
 * decision ({@link DashMerge}): after a delete empties its bucket, the last split pair is merged
 * when together its two segments hold at most {@code mergeLoadPercent} of one segment's slots
 * (default 25: Dash-EH's quarter; 0 never merges).
 *
 * <p>Let the word be {@code (N, Next)}, {@code T = 2^L + Next} segments. The pair split last is
 * p = Next − 1 and n = p + 2^L at depth d + 1 = L + 1 (or, when Next = 0 and N > 0, p = 2^(L−1)
 * − 1 and n = 2^L − 1 at depth L, and the word goes back to (N − 1, p)). The first array is never
 * contracted. Under every lock of p (buckets, chain lock, chained buckets) — the locks a split of
 * p holds, so a merge and a split of the same pair never interleave — the merge finds one of:
 *
 * <ul>
 *   <li>p at depth d and n not LIVE: the split was due but never done (LHlf splits lazily); only
 *       the word retreats (steps 4–5).
 *   <li>p at depth d and n LIVE: a split committed n but p has not dropped its half yet (a crash,
 *       or a thread between the split's steps); the merge first lets the split finish (it does
 *       not wait for it: it runs it, {@link DashLhTable#materialize}), then merges.
 *   <li>p and n at depth d + 1: the merge, with n's locks held too (every bucket, chain lock,
 *       chained buckets, after p's: the order of indexes):
 * </ul>
 *
 * <ol>
 *   <li>n's records (buckets, fixed stash and chain) are copied into free slots of p ({@link
 *       DashSegment#bulkInsert}: every pair, drain; every bitmap, drain). p's shape (depth d + 1)
 *       does not cover them: no lookup sees them (n's keys route to n), and recovery drops them
 *       ({@link DashLhSegment#dropUncovered}) — invariant: a record not covered by its segment's
 *       shape is garbage, so a crash here rolls the merge back. If one does not fit, no bitmap
 *       changed: no merge.
 *   <li>p's overflow metadata is rebuilt with its chain, its shape becomes (d, LIVE, p), all
 *       flushed (ordered by the drain of step 3's redo entries). Invariant (a record is always findable through {@code N|Next}'s
 *       view): the word still routes n's keys to n, which holds them; after a crash here p at
 *       depth d with n LIVE is the state "split committed, p not finished", and the split's
 *       steps 3–4 (p drops n's half, which n still holds unchanged) make it consistent again.
 *   <li>One allocator step: n's shape = ABSENT, its chain word = 0, its chained buckets freed
 *       (reused after the epoch grace period: optimistic readers may still be in them).
 *       Invariant (nothing leaked, no duplicate): n's nodes are freed exactly when nothing names
 *       them; after a crash p at depth d with n ABSENT is the state "split due, not done": p
 *       holds every record of both halves and the split runs again from its step 1.
 *   <li>Under the array lock (which every advance holds too), the word is CAS-ed back (it is
 *       still the word read under p's locks, or the merge leaves it: p at depth d with n ABSENT
 *       is a due split under any larger word) and flushed: invariant A of the split (an array
 *       is durable before any word that addresses it) needs it durable before step 5, which
 *       the drain of step 5's redo entries ensures; without step 5 nothing depends on it.
 *   <li>Every directory entry past the one of the last segment the word addresses that still
 *       names an array is cleared and the array freed, one allocator step each (epoch-deferred
 *       reuse). A crash between 4 and 5 leaves an array that nothing addresses; the next advance
 *       into it reuses it and the next merge frees it (it stays owned and named: not leaked).
 * </ol>
 *
 * Recovery needs nothing more than the split's: the lazy recovery of a segment drops what its
 * shape does not cover (step 1's copies), the split's steps 3–4 or 1–2 redo what a crash after
 * step 2 or 3 left due, and every loop is bounded by a segment's buckets and chain.
 *
 * <p>Not merged: a pair whose n has more than {@value #MAX_FREED_NODES} chained buckets (their
 * frees must fit one allocator step), or whose records do not fit p's buckets and fixed stash.
 */
final class DashLhMerge {
  /** Most chained buckets of n freed in step 3's single allocator step. */
  static final int MAX_FREED_NODES = 8;

  private final DashLhTable table;
  private final Pool pool;
  private final Persistence p;
  private final DashSegment segs;
  private final DashLhSegment lh;
  /** Records the two segments may hold together for a merge: mergeLoadPercent of one segment's slots. */
  final long bound;

  DashLhMerge(DashLhTable table, int mergeLoadPercent) {
    this.table = table;
    this.pool = table.pool;
    this.p = table.persistence;
    this.segs = table.segments;
    this.lh = table.lh;
    this.bound = (long) (NORMAL_BUCKETS + segs.stash) * SLOTS * mergeLoadPercent / 100;
  }

  /** After a delete emptied its bucket (as Dash-EH): merges the pair split last if it is light enough. */
  void maybeMerge() {
    if (bound == 0) {
      return;
    }
    long w = table.nNextWord();
    if (w == 0) {
      return; // the first array: never contracted
    }
    long next = nextOf(w);
    int level = table.firstShift + roundOf(w);
    int d = next > 0 ? level : level - 1; // the pair's depth before the split
    long pi = next > 0 ? next - 1 : (1L << d) - 1;
    long ni = pi + (1L << d);
    long back = next > 0 ? nNext(roundOf(w), next - 1) : nNext(roundOf(w) - 1, pi);
    MemorySegment m = pool.memory();
    long pseg = table.segmentOffset(m, pi);
    long nseg = table.segmentOffset(m, ni);
    if (pseg == 0 || nseg == 0 || DashLayout.stateOf(shapeAcquire(m, pseg)) != LIVE || records(m, pseg, nseg) > bound) {
      return; // (p not LIVE yet: its own creation is a split still due; the merge waits for it)
    }
    if (DashLayout.depthOf(shapeAcquire(m, pseg)) == d && DashLayout.stateOf(shapeAcquire(m, nseg)) == LIVE) {
      table.materialize(pi, d + 1); // a split committed n but p kept its half: finish it first
    }
    table.recoverIfNeeded(pool.memory(), pseg);
    m = pool.memory();
    segs.lockAll(m, pseg);
    DashLhSegment.lockChain(m, pseg);
    try {
      if (table.nNextWord() != w) {
        return; // the table grew or shrank meanwhile: the next delete that empties a bucket retries
      }
      long ps = shapeAcquire(m, pseg);
      long ns = shapeAcquire(m, nseg);
      if (ps == shape(d, LIVE, pi) && DashLayout.stateOf(ns) != LIVE) {
        retreat(w, back); // the split was due but not done
      } else if (ps == shape(d + 1, LIVE, pi) && ns == shape(d + 1, LIVE, ni)) {
        table.recoverIfNeeded(m, nseg); // before n's locks: recovery clears them
        m = pool.memory();
        mergeLocked(m, pseg, pi, nseg, d, w, back);
      }
    } finally {
      DashLhSegment.unlockChain(m, pseg);
      segs.unlockAll(m, pseg);
    }
  }

  private long records(MemorySegment m, long pseg, long nseg) {
    return lh.records(m, pseg) + (DashLayout.stateOf(shapeAcquire(m, nseg)) == LIVE ? lh.records(m, nseg) : 0);
  }

  /** Steps 1–5 with p's locks held: n's locks are taken here. */
  private void mergeLocked(MemorySegment m, long pseg, long pi, long nseg, int d, long w, long back) {
    segs.lockAll(m, nseg);
    DashLhSegment.lockChain(m, nseg);
    boolean chainLocked = true;
    try {
      int nodes = (int) Math.min(DashLhSegment.chainLength(m, nseg), MAX_FREED_NODES + 1L);
      long total = lh.records(m, nseg);
      if (nodes > MAX_FREED_NODES || lh.records(m, pseg) + total > bound) {
        return;
      }
      // step 1: n's records into free slots of p, invisible (p's shape does not cover them)
      long[] keys = new long[(int) total];
      long[] values = new long[(int) total];
      int n = 0;
      for (int i = 0; i < segs.normal + segs.stash; i++) {
        n = collect(m, bucket(nseg, i), keys, values, n);
      }
      for (long node = DashLhSegment.chainHead(m, nseg); node != 0; node = DashLhSegment.nextNode(m, node)) {
        n = collect(m, node + NODE_BUCKET, keys, values, n);
      }
      if (!segs.bulkInsert(m, pseg, keys, values, n)) {
        return; // no bitmap changed: the pairs written into free slots are not records
      }
      // step 2: p covers both halves
      lh.rebuildOverflow(m, pseg);
      segs.flushAllMeta(pseg);
      lh.flushChainMeta(m, pseg);
      LONG.setRelease(m, pseg + SEG_SHAPE, shape(d, LIVE, pi));
      // PERSIST(merge step 2): n's records are durable in p (bulkInsert drained them) before p's depth says it covers them; n still holds them, so a crash here is the state "split committed, p not finished". Only flushed: the redo entries' drain of step 3 orders it before n stops existing
      p.flush(pseg + SEG_SHAPE, 8);
      // step 3: n ABSENT, its chained buckets freed (n's bucket locks still exclude every writer of n)
      long[] freed = new long[nodes];
      int k = 0;
      for (long node = DashLhSegment.chainHead(m, nseg); node != 0; node = DashLhSegment.nextNode(m, node)) {
        freed[k++] = node;
      }
      DashLhSegment.unlockChain(m, nseg);
      chainLocked = false;
      try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
        pub.set(nseg + SEG_SHAPE, 0).set(nseg + SEG_CHAIN, 0);
        for (long node : freed) {
          pub.deferFree(node);
        }
        // PERSIST(merge step 3): p's new depth is durable (flushed above, ordered by the redo entries' drain) before n stops existing and its chained buckets are freed, in one step: neither leaked nor named after they are free
        pub.commit();
      }
      table.merges.incrementAndGet();
      retreat(w, back);
    } finally {
      if (chainLocked) {
        DashLhSegment.unlockChain(m, nseg);
      }
      segs.unlockAll(m, nseg);
    }
  }

  private static int collect(MemorySegment m, long b, long[] keys, long[] values, int n) {
    for (int a = allocated(bitmap(m, b)); a != 0; a &= a - 1) {
      int slot = Integer.numberOfTrailingZeros(a);
      keys[n] = key(m, b, slot);
      values[n++] = value(m, b, slot);
    }
    return n;
  }

  /** Steps 4–5: the word back from {@code w} to {@code back}, then arrays it no longer addresses freed. */
  private void retreat(long w, long back) {
    table.arrayLock.lock();
    try {
      MemorySegment m = pool.memory();
      if (!LONG.compareAndSet(m, table.header + HDR_N_NEXT, w, back)) {
        return; // an advance came first (impossible under the array lock, kept as a guard)
      }
      // PERSIST(merge step 4, invariant A): the smaller word is durable before an array it no longer addresses is freed: flushed here, ordered by the redo entries' drain of step 5; with no array to free nothing durable depends on it (a crash that loses it leaves p's split due, as after step 3)
      p.flush(table.header + HDR_N_NEXT, 8);
      table.retreats.incrementAndGet();
      int needed = entryOf(segmentsOf(back, table.firstShift) - 1, table.firstShift, table.stride);
      for (int e = DIRECTORY_ENTRIES - 1; e > needed; e--) {
        long a = table.arrayOffset(m, e);
        if (a == 0) {
          continue;
        }
        // the DRAM route forgets the array's segments before the step that frees it (DashLhRoute)
        table.route.clear(firstSegmentOf(e, table.firstShift, table.stride), arraySegments(e, table.firstShift, table.stride));
        try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
          pub.set(table.header + HDR_DIRECTORY + 8L * e, 0).deferFree(a);
          // PERSIST(merge step 5): the directory entry is cleared and the array freed in one step (optimistic readers of a stale word may still read it: reuse waits for the epoch)
          pub.commit();
        }
        table.arraysFreed.incrementAndGet();
      }
    } finally {
      table.arrayLock.unlock();
    }
  }
}
