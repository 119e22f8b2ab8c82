package io.pmhash.schemes.nvlh;

import static io.pmhash.schemes.nvlh.NvlhLayout.ALL_SLOTS;
import static io.pmhash.schemes.nvlh.NvlhLayout.BUCKET_BYTES;
import static io.pmhash.schemes.nvlh.NvlhLayout.LONG;
import static io.pmhash.schemes.nvlh.NvlhLayout.META;
import static io.pmhash.schemes.nvlh.NvlhLayout.NEXT;
import static io.pmhash.schemes.nvlh.NvlhLayout.PAIR_BYTES;
import static io.pmhash.schemes.nvlh.NvlhLayout.PAIR_VALUE;
import static io.pmhash.schemes.nvlh.NvlhLayout.slotOffset;

import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import java.lang.foreign.MemorySegment;

/**
 * The changes to a chain that touch more than one word, each inside a caller's durable
 * transaction (§III): chaining a new overflow bucket at the tail (Fig. 1(b)), appending the
 * records a split or merge moves, and unlinking an overflow bucket. Every word a reader or a
 * rollback interprets is snapshotted before its first store; the transaction's commit makes the
 * changes durable together. The caller holds the chain's lock.
 */
final class NvlhChain {
  private NvlhChain() {}

  /**
   * Chains a new overflow bucket after {@code tail} inside {@code tx} (Fig. 1(b)): allocated in the
   * transaction and zeroed (commit flushes it whole), then the tail's next word snapshotted and
   * set. The allocation comes first, so the snapshot's drain also makes the allocation's log
   * entry durable. With {@code logged} false the tail's next word needs no snapshot: the tail is
   * a bucket of a chain no one reaches until the transaction commits, which the caller flushes
   * (see {@link #appendAll}).
   *
   * @return the new bucket, for the caller to fill before commit
   */
  private static long linkNew(Pool pool, NvlhTxn tx, long tail, boolean logged) {
    long nb = newBucket(pool, tx);
    link(pool.memory(), tx, tail, nb, logged);
    return nb;
  }

  /**
   * @return a bucket allocated in {@code tx} and zeroed (the commit flushes it whole; a rollback
   *     frees it)
   */
  private static long newBucket(Pool pool, NvlhTxn tx) {
    long nb = tx.alloc(BUCKET_BYTES);
    pool.memory().asSlice(nb, BUCKET_BYTES).fill((byte) 0); // the allocation may have grown the pool
    return nb;
  }

  /**
   * A new bucket holding one record, in slot 0, for an insert into a full chain (Fig. 1(b)).
   *
   * @return the bucket, allocated in {@code tx}, not linked yet
   */
  static long newBucketWith(Pool pool, NvlhTxn tx, long key, long value, int fp) {
    long nb = newBucket(pool, tx);
    MemorySegment m = pool.memory();
    LONG.set(m, slotOffset(nb, 0), key);
    LONG.set(m, slotOffset(nb, 0) + PAIR_VALUE, value);
    NvlhBucket.setMetaRelease(m, nb, NvlhLayout.slotBits(0, fp));
    return nb;
  }

  /**
   * Chains {@code nb} after {@code tail} inside {@code tx}: the tail's next word snapshotted (if
   * {@code logged}; else the caller has snapshotted it, or no one reaches the tail before the
   * commit) and set.
   */
  static void link(MemorySegment m, NvlhTxn tx, long tail, long nb, boolean logged) {
    if (logged) {
      tx.snapshot(tail + NEXT, 8);
    }
    LONG.setRelease(m, tail + NEXT, nb);
  }

  /**
   * Appends the records in the {@code moving} slots of bucket {@code src} to the chain starting
   * at {@code head}, inside {@code tx} (a step of a split or merge): into free slots in chain
   * order, then into new overflow buckets ({@link #linkNew}). Each receiving bucket's meta word is
   * snapshotted once, before its first store. The pairs go into free slots, whose bytes neither a
   * reader nor a rollback interprets (the meta word says they are free), so they are flushed here
   * rather than snapshotted: PERSIST(move 1) the commit's drain makes them durable together with
   * the meta bits that publish them, and a rollback restores the meta word, freeing the slots
   * again. The source is not changed here.
   *
   * <p>With {@code logged} false the receiving chain is one no reader and no recovery reaches
   * until the transaction commits (a split's new bucket q, which the caller emptied in this
   * transaction): nothing of it is snapshotted, a rollback leaves it as garbage beyond the
   * table's buckets (the next split of q empties it again), and the caller flushes the head
   * bucket whole before commit (its pairs are not flushed one by one here); overflow buckets
   * chained to it are allocated in the transaction and flushed whole by the commit.
   *
   * @return overflow buckets allocated
   */
  static int appendAll(Pool pool, Persistence p, NvlhTxn tx, long head, long src, long moving, boolean logged) {
    MemorySegment m = pool.memory();
    int added = 0;
    long b = head;
    long tail = head;
    long snapshotted = 0;
    long allocated = 0;
    long srcMeta = NvlhBucket.meta(m, src);
    for (long bits = moving; bits != 0; bits &= bits - 1) {
      while (b != 0 && (NvlhBucket.meta(m, b) & ALL_SLOTS) == ALL_SLOTS) {
        tail = b;
        b = NvlhBucket.next(m, b);
      }
      if (b == 0) {
        b = linkNew(pool, tx, tail, logged);
        m = pool.memory();
        allocated = b;
        snapshotted = b; // allocated in the transaction: commit flushes it, rollback frees it
        added++;
      } else if (logged && snapshotted != b) {
        tx.snapshot(b + META, 8);
        snapshotted = b;
      }
      int from = Long.numberOfTrailingZeros(bits);
      long meta = NvlhBucket.meta(m, b);
      int s = Long.numberOfTrailingZeros(~meta & ALL_SLOTS);
      long at = slotOffset(b, s);
      LONG.set(m, at, NvlhBucket.key(m, src, from));
      LONG.set(m, at + PAIR_VALUE, NvlhBucket.value(m, src, from));
      if (logged && b != allocated) {
        p.flush(at, PAIR_BYTES);
      }
      NvlhBucket.setMetaRelease(m, b, meta | NvlhLayout.slotBits(s, NvlhLayout.fingerprintAt(srcMeta, from)));
    }
    return added;
  }

  /**
   * Unlinks the overflow bucket {@code b} that follows {@code pred} and frees it, inside {@code
   * tx}. The bucket's own bytes are not changed: if the transaction rolls back it is linked and
   * whole again; if it commits no one reaches it. The free comes first, so the snapshot's drain
   * also makes the free's log entry durable. With {@code logged} false the caller has already
   * snapshotted {@code pred}'s next word (the commit drains the free's entry).
   */
  static void unlink(MemorySegment m, NvlhTxn tx, long pred, long b, boolean logged) {
    tx.free(b);
    if (logged) {
      tx.snapshot(pred + NEXT, 8);
    }
    LONG.setRelease(m, pred + NEXT, NvlhBucket.next(m, b));
  }
}
