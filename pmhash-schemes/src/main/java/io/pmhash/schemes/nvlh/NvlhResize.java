package io.pmhash.schemes.nvlh;

import static io.pmhash.schemes.nvlh.NvlhLayout.ALL_SLOTS;
import static io.pmhash.schemes.nvlh.NvlhLayout.BUCKET_BYTES;
import static io.pmhash.schemes.nvlh.NvlhLayout.BUCKET_LINES;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_DIR;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_PENDING;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_PENDING_TO;
import static io.pmhash.schemes.nvlh.NvlhLayout.HDR_STATE;
import static io.pmhash.schemes.nvlh.NvlhLayout.IN_PROCESS;
import static io.pmhash.schemes.nvlh.NvlhLayout.LONG;
import static io.pmhash.schemes.nvlh.NvlhLayout.META;
import static io.pmhash.schemes.nvlh.NvlhLayout.PENDING_KIND;
import static io.pmhash.schemes.nvlh.NvlhLayout.PENDING_MERGE;
import static io.pmhash.schemes.nvlh.NvlhLayout.PENDING_SPLIT;
import static io.pmhash.schemes.nvlh.NvlhLayout.dirIndex;
import static io.pmhash.schemes.nvlh.NvlhLayout.dirLevel;
import static io.pmhash.schemes.nvlh.NvlhLayout.level;
import static io.pmhash.schemes.nvlh.NvlhLayout.splitPointer;
import static io.pmhash.schemes.nvlh.NvlhLayout.state;

import io.pmhash.core.PoolFullException;
import io.pmhash.core.concurrent.Prefetch;
import io.pmhash.core.log.LaneOverflowException;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Splitting bucket p and merging the last bucket back (§II Fig. 1, §III), each under the
 * structure lock and the stripes of its two buckets. When the source chain is short (at most
 * {@link NvlhTable#singleTxChain} buckets, 4 by default) the whole change is one durable
 * transaction, as in the paper ({@link #inOneTransaction}). A longer chain, whose single
 * transaction could overflow a lane's undo log, is split or merged as a short sequence of
 * transactions tied together by the in-process flags of §III:
 *
 * <h2>Split of bucket p into q = p + N</h2>
 *
 * <ol>
 *   <li><b>Start</b> (one transaction): if q is the first bucket of a segment, the segment (and,
 *       at a power of two, the next directory level) is allocated zeroed and entered in the
 *       directory; the header's {@code pending} words name the split (p, q); both buckets get the
 *       in-process flag. Commit: from here the split is finished, not undone, after a crash.
 *   <li><b>Move</b> (one transaction per bucket of p's chain that holds a record to move): the
 *       records whose {@code h_{i+1}} is q are appended to q's chain ({@link NvlhChain#append})
 *       and their meta bits cleared in the source bucket; an overflow bucket left empty is
 *       unlinked and freed in the same transaction. Each record is in exactly one chain at every
 *       commit.
 *   <li><b>Finish</b> (one transaction): the state word advances (p + 1, or the next round with p
 *       = 0 when p reaches N), the flags are cleared, {@code pending} is zeroed.
 * </ol>
 *
 * <h2>Merge of the last bucket into its partner</h2>
 *
 * The inverse: the state that the merge will leave ({@code p - 1}, or the previous round with p
 * = N/2 - 1 when p = 0) names target p' and last = p' + N'. Start flags both and records the
 * merge in {@code pending}; Move appends every record of last's chain to p' and frees last's
 * overflow buckets; Finish sets the state and, if last was the first bucket of its segment,
 * frees the segment and clears its directory entry.
 *
 * <h2>Why several transactions, and the flags</h2>
 *
 * One transaction per source bucket bounds the undo log a split needs (at most seven records:
 * a few hundred bytes) whatever the chain's length, where one transaction for the whole split would
 * overflow a lane for a long chain. Between the transactions the state word still describes
 * the table before the split; what says "a split is under way" durably is the pair of flags
 * (and the header's {@code pending} words, which let recovery find the flagged buckets without
 * a scan). Recovery ({@link NvlhRecovery}) first lets the pool roll back the one transaction a
 * crash interrupted, then, if {@code pending} is set, checks that both buckets carry the flag
 * and runs Move and Finish again: Move is idempotent (it moves only what is still in the
 * source), so a crash during recovery is recovered the same way.
 */
final class NvlhResize {
  private NvlhResize() {}

  /** The largest round: N = n0 * 2^i must stay below 2^55 so that q = p + N fits the state word. */
  static final int MAX_LEVEL = 50;

  /** Splits bucket p (§II): one split per call. */
  static void split(NvlhTable t) {
    t.structure.lock();
    try {
      long s = t.state;
      long n = t.n0 << level(s);
      if (level(s) >= MAX_LEVEL || Long.numberOfLeadingZeros(n) <= 9) {
        return; // the table is as large as the state word can describe
      }
      long p = splitPointer(s);
      long q = p + n;
      long next = p + 1 == n ? state(level(s) + 1, 0) : state(level(s), p + 1);
      prefetch(t, p, q);
      lockTwo(t, p, q);
      try {
        if (!inOneTransaction(t, p, q, 2 * n - 1, next, false)) {
          start(t, PENDING_SPLIT | p, q);
          move(t, p, q, 2 * n - 1);
          finish(t, p, q, next, false);
        }
        t.splits.incrementAndGet();
      } finally {
        unlockTwo(t, p, q);
      }
    } finally {
      t.structure.unlock();
    }
  }

  /**
   * An insert into a full chain and the split it triggers (split on collision, §II), in one
   * transaction: the new overflow bucket holding the record is allocated and filled, and the
   * tail's next word joins the split's one snapshot call ({@link #inOneTransaction}), so the two
   * cost one snapshot drain and one commit where they cost two of each (6 drains → 3 or 4).
   *
   * <p>Called by the inserting thread, which holds the stripe of the key's bucket {@code b} (the
   * record's bucket stays {@code b}: the split moves only p's keys). It takes {@link
   * NvlhTable#structure} only if it is free ({@code tryLock}); holding it, it waits for the
   * stripes of p and q that it does not hold already (no other thread waits for a stripe while
   * holding one, so no cycle: see {@link NvlhTable}).
   *
   * @return false if nothing changed: the structure lock was busy, the table is as large as it
   *     gets, b is p, p's chain is too long for one transaction, the lane's log was too small or
   *     the pool had no room (a split may be skipped, the insert may not fail for it); the caller
   *     then inserts alone and splits afterwards
   */
  static boolean insertAndSplit(NvlhTable t, long b, long tail, long key, long value, int fp) {
    if (!t.structure.tryLock()) {
      return false;
    }
    try {
      long s = t.state;
      long n = t.n0 << level(s);
      long p = splitPointer(s);
      if (level(s) >= MAX_LEVEL || Long.numberOfLeadingZeros(n) <= 9 || p == b) {
        return false;
      }
      long q = p + n;
      prefetch(t, p, q);
      int held = NvlhTable.stripe(b);
      lockTwo(t, p, q, held);
      try {
        if (!inOneTransaction(t, p, q, 2 * n - 1, stateAfterSplit(t, s), false, tail, key, value, fp)) {
          return false;
        }
        t.splits.incrementAndGet();
        t.splitsWithInsert.incrementAndGet();
        return true;
      } catch (PoolFullException e) {
        return false; // rolled back: the insert alone may still fit
      } finally {
        unlockTwo(t, p, q, held);
      }
    } finally {
      t.structure.unlock();
    }
  }

  /** Merges the last bucket back into its partner (contraction); nothing below n0 buckets. */
  static void merge(NvlhTable t) {
    t.structure.lock();
    try {
      long s = t.state;
      if (t.bucketCount(s) <= t.n0) {
        return;
      }
      long next = stateBeforeLastSplit(t, s);
      long target = splitPointer(next);
      long last = target + (t.n0 << level(next));
      lockTwo(t, target, last);
      try {
        if (!inOneTransaction(t, last, target, -1, next, true)) {
          start(t, PENDING_MERGE | last, target);
          move(t, last, target, -1);
          finish(t, last, target, next, true);
        }
        t.merges.incrementAndGet();
      } finally {
        unlockTwo(t, target, last);
      }
    } finally {
      t.structure.unlock();
    }
  }

  /** @return the state with one bucket fewer: p - 1, or the previous round's last split */
  static long stateBeforeLastSplit(NvlhTable t, long s) {
    int lvl = level(s);
    long p = splitPointer(s);
    if (p == 0) {
      lvl--;
      p = t.n0 << lvl;
    }
    return state(lvl, p - 1);
  }

  /** @return the state after splitting p: p + 1, or the next round at p = 0 */
  static long stateAfterSplit(NvlhTable t, long s) {
    long n = t.n0 << level(s);
    long p = splitPointer(s);
    return p + 1 == n ? state(level(s) + 1, 0) : state(level(s), p + 1);
  }

  /**
   * Loads the lines of the source bucket p and, if its segment exists, of q before the stripe
   * locks, so that their misses overlap instead of following each other in the split ({@link
   * Prefetch}; docs/design.md, "Loads before a lock"). The structure lock keeps both segments.
   */
  private static void prefetch(NvlhTable t, long p, long q) {
    MemorySegment m = t.pool.memory();
    long loaded = Prefetch.lines(m, t.bucketOffset(p), BUCKET_LINES);
    long[] segs = t.segs;
    long qSeg = q >>> t.segShift;
    if (qSeg < segs.length && segs[(int) qSeg] != 0) {
      loaded ^= Prefetch.lines(m, t.bucketOffset(q), BUCKET_LINES);
    }
    Prefetch.keep(loaded);
  }

  private static void lockTwo(NvlhTable t, long a, long b) {
    lockTwo(t, a, b, -1);
  }

  private static void unlockTwo(NvlhTable t, long a, long b) {
    unlockTwo(t, a, b, -1);
  }

  /** Locks the stripes of buckets {@code a} and {@code b} in ascending order, except stripe {@code held} (-1: none). */
  private static void lockTwo(NvlhTable t, long a, long b, int held) {
    int lo = Math.min(NvlhTable.stripe(a), NvlhTable.stripe(b));
    int hi = Math.max(NvlhTable.stripe(a), NvlhTable.stripe(b));
    if (lo != held) {
      t.lockStripe(lo);
    }
    if (hi != lo && hi != held) {
      t.lockStripe(hi);
    }
  }

  private static void unlockTwo(NvlhTable t, long a, long b, int held) {
    int sa = NvlhTable.stripe(a);
    int sb = NvlhTable.stripe(b);
    if (sa != held) {
      t.unlockStripe(sa);
    }
    if (sb != sa && sb != held) {
      t.unlockStripe(sb);
    }
  }

  // ------------------------------------------------------------------ the three steps

  /** Start: segment if needed, {@code pending}, in-process flags on both buckets; one transaction. */
  static void start(NvlhTable t, long pending, long to) {
    long from = pending & ~PENDING_KIND;
    long seg = to >>> t.segShift;
    long newSeg = 0;
    try (NvlhTxn tx = t.txns.begin()) {
      if (seg >= t.segs.length || t.segs[(int) seg] == 0) {
        newSeg = allocSegment(t, tx, seg);
      }
      MemorySegment m = t.pool.memory();
      long fromOff = t.bucketOffset(from);
      long toOff = newSeg != 0 ? newSeg + ((to & t.segMask) << NvlhLayout.BUCKET_SHIFT) : t.bucketOffset(to);
      tx.snapshot(t.header + HDR_PENDING, 16);
      LONG.set(m, t.header + HDR_PENDING_TO, to);
      LONG.setRelease(m, t.header + HDR_PENDING, pending);
      flag(m, tx, fromOff, true);
      if ((pending & PENDING_KIND) == PENDING_SPLIT) {
        // q may hold the garbage of a rolled-back single-transaction split: emptied, then flagged
        tx.snapshot(toOff + META, 2 * Long.BYTES);
        emptyBucket(m, toOff);
        NvlhBucket.setMetaRelease(m, toOff, IN_PROCESS);
      } else {
        flag(m, tx, toOff, true);
      }
      tx.commit();
    }
    if (newSeg != 0) {
      setSegmentMirror(t, seg, newSeg);
    }
  }

  /**
   * Empties a split's receiving bucket q, which a rolled-back split may have left as garbage:
   * meta and next zero. The caller has q's stripe and, if q must survive a rollback, a snapshot.
   */
  private static void emptyBucket(MemorySegment m, long bucket) {
    LONG.set(m, bucket + NvlhLayout.NEXT, 0L);
    NvlhBucket.setMetaRelease(m, bucket, 0L);
  }

  private static void flag(MemorySegment m, NvlhTxn tx, long bucket, boolean on) {
    tx.snapshot(bucket + META, 8);
    long meta = NvlhBucket.meta(m, bucket);
    NvlhBucket.setMetaRelease(m, bucket, on ? meta | IN_PROCESS : meta & ~IN_PROCESS);
  }

  /**
   * Allocates segment {@code seg} zeroed, and its directory level if it is the first of one, and
   * enters it in the directory, inside {@code tx}.
   *
   * @return the segment's offset
   */
  private static long allocSegment(NvlhTable t, NvlhTxn tx, long seg) {
    int lvl = dirLevel(seg);
    MemorySegment m = t.pool.memory();
    long dir = (long) LONG.get(m, t.header + HDR_DIR + 8L * lvl);
    if (dir == 0) {
      long bytes = 8L << lvl;
      dir = tx.alloc(bytes);
      m = t.pool.memory();
      m.asSlice(dir, bytes).fill((byte) 0);
      tx.snapshot(t.header + HDR_DIR + 8L * lvl, 8);
      LONG.setRelease(m, t.header + HDR_DIR + 8L * lvl, dir);
    }
    long bytes = BUCKET_BYTES << t.segShift;
    long block = tx.alloc(bytes);
    m = t.pool.memory();
    m.asSlice(block, bytes).fill((byte) 0);
    long entry = dir + 8 * dirIndex(seg);
    tx.snapshot(entry, 8);
    LONG.setRelease(m, entry, block);
    return block;
  }

  private static void setSegmentMirror(NvlhTable t, long seg, long offset) {
    long[] s = t.segs;
    if (seg >= s.length) {
      s = Arrays.copyOf(s, Math.max((int) seg + 1, 2 * s.length));
    } else {
      s = s.clone();
    }
    s[(int) seg] = offset;
    t.segs = s;
  }

  /** @return the slots of bucket {@code x} whose records go to {@code to} ({@code mask} -1: all) */
  private static long movingBits(MemorySegment m, long x, long to, long mask) {
    long moving = 0;
    for (long b = NvlhBucket.meta(m, x) & ALL_SLOTS; b != 0; b &= b - 1) {
      int s = Long.numberOfTrailingZeros(b);
      if (mask == -1 || (NvlhTable.hash(NvlhBucket.key(m, x, s)) & mask) == to) {
        moving |= 1L << s;
      }
    }
    return moving;
  }

  /**
   * Inside {@code tx}: appends the {@code moving} records of bucket {@code x} (in the chain at
   * {@code src}, after {@code pred}) to the chain at {@code dst}, then clears their bits in
   * {@code x}'s meta word or, if {@code unlink}, unlinks and frees {@code x}.
   *
   * @param sourceLogged whether the source chain's bucket headers are already snapshotted (else
   *     {@code x}'s meta word or {@code pred}'s next word is snapshotted here)
   * @param destinationLogged {@link NvlhChain#appendAll}'s {@code logged}
   * @return the change in the number of overflow buckets, to apply once the transaction commits
   */
  private static int moveOne(NvlhTable t, NvlhTxn tx, long x, long pred, long dst, long moving, boolean unlink,
      boolean sourceLogged, boolean destinationLogged) {
    long meta = NvlhBucket.meta(t.pool.memory(), x);
    int added = NvlhChain.appendAll(t.pool, t.persistence, tx, dst, x, moving, destinationLogged);
    MemorySegment m = t.pool.memory();
    if (unlink) {
      NvlhChain.unlink(m, tx, pred, x, !sourceLogged);
      return added - 1;
    }
    if (!sourceLogged) {
      tx.snapshot(x + META, 8);
    }
    NvlhBucket.setMetaRelease(m, x, NvlhLayout.withoutSlots(meta, moving));
    return added;
  }

  /**
   * Move: appends the records of {@code from}'s chain that belong to {@code to} ({@code mask} -1:
   * all of them; else those whose hash masked is {@code to}) to {@code to}'s chain, one
   * transaction per source bucket, unlinking overflow buckets left empty. Idempotent.
   */
  static void move(NvlhTable t, long from, long to, long mask) {
    long src = t.bucketOffset(from);
    long dst = t.bucketOffset(to);
    long pred = 0;
    for (long x = src; x != 0; ) {
      MemorySegment m = t.pool.memory();
      long bits = NvlhBucket.meta(m, x) & ALL_SLOTS;
      long moving = movingBits(m, x, to, mask);
      long nx = NvlhBucket.next(m, x);
      boolean unlink = x != src && bits == moving;
      if (moving != 0 || unlink) {
        int delta;
        try (NvlhTxn tx = t.txns.begin()) {
          delta = moveOne(t, tx, x, pred, dst, moving, unlink, false, true);
          tx.commit();
        }
        t.overflowBuckets.addAndGet(delta);
      }
      if (!unlink) {
        pred = x;
      }
      x = nx;
    }
  }

  /**
   * A split or merge whose source chain has at most {@link NvlhTable#singleTxChain} buckets, as
   * the paper does it: one transaction for the segment (split) or its release (merge), every
   * move and the new state. No flag or pending word is needed: the transaction is all or
   * nothing.
   *
   * <p>PERSIST(one 1): the ranges the transaction changes in reachable memory are known before
   * its first store: the state word and the header (meta and next words) of every bucket of the
   * source chain (an unlinked bucket's predecessor is one of them). They are snapshotted
   * together, one drain. PERSIST(one 2), a split only: the receiving bucket q is beyond the
   * table's buckets until the new state commits, so no reader, no scan and no recovery reaches
   * it; it is emptied (meta and next zero) and filled without a snapshot ({@link
   * NvlhChain#appendAll} unlogged), and flushed whole (its two lines) before the commit's drain.
   * A rollback leaves q as garbage, which the next split of q (this one again, or {@link #start})
   * empties first. A merge's receiving chain is reachable: each of its buckets is snapshotted
   * before its first store. The undo log is bounded by the chain length: for four source
   * buckets, five ranges of at most 16 bytes (and, for a merge, at most seven receiving meta
   * words).
   *
   * @return false if the chain is longer, or the log did not fit the lane after all (rolled back,
   *     nothing changed): the caller runs the flagged protocol
   */
  static boolean inOneTransaction(NvlhTable t, long from, long to, long mask, long next, boolean merge) {
    return inOneTransaction(t, from, to, mask, next, merge, 0, 0, 0, 0);
  }

  /**
   * {@link #inOneTransaction(NvlhTable, long, long, long, long, boolean)}, first chaining after
   * {@code tail} (unless 0; a bucket of another chain than the source's) a new overflow bucket
   * holding {@code key} and {@code value} ({@link #insertAndSplit}): the bucket is allocated
   * before the snapshot call, whose drain also makes the allocation's log entry durable, and the
   * tail's next word is one more range of that call.
   */
  private static boolean inOneTransaction(NvlhTable t, long from, long to, long mask, long next, boolean merge,
      long tail, long key, long value, int fp) {
    MemorySegment m = t.pool.memory();
    long src = t.bucketOffset(from);
    int chain = 0;
    for (long x = src; x != 0 && chain <= t.singleTxChain; x = NvlhBucket.next(m, x)) {
      chain++;
    }
    if (chain > t.singleTxChain) {
      return false;
    }
    long seg = (merge ? from : to) >>> t.segShift;
    boolean newSeg = !merge && (seg >= t.segs.length || t.segs[(int) seg] == 0);
    boolean freeSeg = merge && (from & t.segMask) == 0;
    long segOffset = 0;
    int delta = 0;
    try (NvlhTxn tx = t.txns.begin()) {
      if (newSeg) {
        segOffset = allocSegment(t, tx, seg);
      } else if (freeSeg) {
        freeSegment(t, tx, seg);
      }
      long inserted = tail != 0 ? NvlhChain.newBucketWith(t.pool, tx, key, value, fp) : 0;
      m = t.pool.memory();
      long dst = newSeg ? segOffset + ((to & t.segMask) << NvlhLayout.BUCKET_SHIFT) : t.bucketOffset(to);
      long[] offsets = new long[chain + 2];
      long[] lengths = new long[chain + 2];
      offsets[0] = t.header + HDR_STATE;
      lengths[0] = 8;
      int n = 1;
      for (long x = src; x != 0; x = NvlhBucket.next(m, x)) {
        offsets[n] = x + META;
        lengths[n++] = 2 * Long.BYTES; // meta, next
      }
      if (tail != 0) {
        offsets[n] = tail + NvlhLayout.NEXT;
        lengths[n++] = Long.BYTES;
      }
      // PERSIST(one 1): every range this transaction changes in reachable memory, logged with one
      // drain before the first store to any of them
      tx.snapshot(offsets, lengths, n);
      if (tail != 0) {
        NvlhChain.link(m, tx, tail, inserted, false);
        delta++;
      }
      LONG.setRelease(m, t.header + HDR_STATE, next);
      if (!merge) {
        emptyBucket(m, dst);
      }
      long pred = 0;
      for (long x = src; x != 0; ) {
        m = t.pool.memory();
        long bits = NvlhBucket.meta(m, x) & ALL_SLOTS;
        long moving = movingBits(m, x, to, mask);
        long nx = NvlhBucket.next(m, x);
        boolean unlink = x != src && bits == moving;
        if (moving != 0 || unlink) {
          delta += moveOne(t, tx, x, pred, dst, moving, unlink, true, merge);
        }
        if (!unlink) {
          pred = x;
        }
        x = nx;
      }
      if (!merge) {
        t.persistence.flush(dst, BUCKET_BYTES); // PERSIST(one 2): q whole, drained by the commit
      }
      tx.commit();
    } catch (LaneOverflowException e) {
      return false; // rolled back by close: the flagged protocol splits the log
    }
    t.overflowBuckets.addAndGet(delta);
    t.state = next;
    if (newSeg) {
      setSegmentMirror(t, seg, segOffset);
    } else if (freeSeg) {
      setSegmentMirror(t, seg, 0);
    }
    return true;
  }

  /** Inside {@code tx}: frees segment {@code seg} and zeroes its directory word. */
  private static void freeSegment(NvlhTable t, NvlhTxn tx, long seg) {
    MemorySegment m = t.pool.memory();
    tx.free(t.segs[(int) seg]);
    long dir = (long) LONG.get(m, t.header + HDR_DIR + 8L * dirLevel(seg));
    long entry = dir + 8 * dirIndex(seg);
    tx.snapshot(entry, 8);
    LONG.setRelease(m, entry, 0L);
  }

  /**
   * Finish: the new state, the flags cleared, {@code pending} zeroed and, for a merge that
   * empties the segment of {@code from}, the segment freed; one transaction.
   */
  static void finish(NvlhTable t, long from, long to, long next, boolean merge) {
    long seg = from >>> t.segShift;
    boolean freeSeg = merge && (from & t.segMask) == 0;
    try (NvlhTxn tx = t.txns.begin()) {
      MemorySegment m = t.pool.memory();
      if (freeSeg) {
        freeSegment(t, tx, seg);
      }
      tx.snapshot(t.header + HDR_STATE, 24); // state, pending, pending to
      LONG.set(m, t.header + HDR_PENDING_TO, 0L);
      LONG.set(m, t.header + HDR_PENDING, 0L);
      LONG.setRelease(m, t.header + HDR_STATE, next);
      flag(m, tx, t.bucketOffset(from), false);
      flag(m, tx, t.bucketOffset(to), false);
      tx.commit();
    }
    t.state = next;
    if (freeSeg) {
      setSegmentMirror(t, seg, 0);
    }
  }

  /**
   * Recovery: finishes the split or merge the header's {@code pending} names, if any (the pool
   * has already rolled back the transaction a crash interrupted).
   *
   * @return whether there was one
   */
  static boolean finishPending(NvlhTable t) {
    MemorySegment m = t.pool.memory();
    long pending = (long) LONG.get(m, t.header + HDR_PENDING);
    if (pending == 0) {
      return false;
    }
    long kind = pending & PENDING_KIND;
    long from = pending & ~PENDING_KIND;
    long to = (long) LONG.get(m, t.header + HDR_PENDING_TO);
    long s = t.state;
    boolean split = kind == PENDING_SPLIT;
    long next = split ? stateAfterSplit(t, s) : stateBeforeLastSplit(t, s);
    long n = t.n0 << level(s);
    boolean consistent = split
        ? from == splitPointer(s) && to == from + n
        : kind == PENDING_MERGE && t.bucketCount(s) > t.n0 && to == splitPointer(next) && from == to + (t.n0 << level(next));
    if (!consistent) {
      throw NvlhRecovery.corrupt("nvlh: pending word " + Long.toHexString(pending) + " (to " + to + ") does not match state i = " + level(s) + ", p = " + splitPointer(s));
    }
    if (from >>> t.segShift >= t.segs.length || to >>> t.segShift >= t.segs.length) {
      throw NvlhRecovery.corrupt("nvlh: the buckets of the pending " + (split ? "split" : "merge") + " (" + from + ", " + to + ") have no segment");
    }
    if ((NvlhBucket.meta(m, t.bucketOffset(from)) & IN_PROCESS) == 0 || (NvlhBucket.meta(m, t.bucketOffset(to)) & IN_PROCESS) == 0) {
      throw NvlhRecovery.corrupt("nvlh: a " + (split ? "split" : "merge") + " of buckets " + from + " and " + to + " is pending but they do not both carry the in-process flag");
    }
    move(t, from, to, split ? 2 * n - 1 : -1);
    finish(t, from, to, next, !split);
    return true;
  }
}
