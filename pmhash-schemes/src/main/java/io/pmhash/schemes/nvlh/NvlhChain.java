package io.pmhash.schemes.nvlh;

import static io.pmhash.schemes.nvlh.NvlhLayout.ALL_SLOTS;
import static io.pmhash.schemes.nvlh.NvlhLayout.BUCKET_BYTES;
import static io.pmhash.schemes.nvlh.NvlhLayout.LONG;
import static io.pmhash.schemes.nvlh.NvlhLayout.META;
import static io.pmhash.schemes.nvlh.NvlhLayout.NEXT;
import static io.pmhash.schemes.nvlh.NvlhLayout.PAIR_BYTES;
import static io.pmhash.schemes.nvlh.NvlhLayout.PAIR_VALUE;
import static io.pmhash.schemes.nvlh.NvlhLayout.slotOffset;

import io.pmhash.core.Pool;
import java.lang.foreign.MemorySegment;

/**
 * The changes to a chain that touch more than one word, each inside a caller's durable
 * transaction (§III): appending a record (into a free slot, or into a new overflow bucket linked
 * at the tail, Fig. 1(b)) and unlinking an overflow bucket. Every word is snapshotted before its
 * first store; the transaction's commit makes them durable together. The caller holds the
 * chain's lock.
 */
final class NvlhChain {
  private NvlhChain() {}

  /**
   * Appends a record to the chain starting at {@code head} inside {@code tx}: into the first free
   * slot (pair and meta word snapshotted), else into a new overflow bucket allocated in the
   * transaction and linked from the tail's next word (snapshotted). The allocation comes first,
   * so the snapshot's drain also makes the allocation's log entry durable.
   *
   * @return 1 if an overflow bucket was allocated, else 0
   */
  static int append(Pool pool, NvlhTxn tx, long head, long key, long value) {
    MemorySegment m = pool.memory();
    long tail = head;
    for (long b = head; b != 0; b = NvlhBucket.next(m, b)) {
      tail = b;
      long meta = NvlhBucket.meta(m, b);
      if ((meta & ALL_SLOTS) != ALL_SLOTS) {
        int s = Long.numberOfTrailingZeros(~meta & ALL_SLOTS);
        long at = slotOffset(b, s);
        tx.snapshot(at, PAIR_BYTES);
        LONG.set(m, at, key);
        LONG.set(m, at + PAIR_VALUE, value);
        tx.snapshot(b + META, 8);
        NvlhBucket.setMetaRelease(m, b, meta | (1L << s));
        return 0;
      }
    }
    long nb = tx.alloc(BUCKET_BYTES);
    m = pool.memory(); // the allocation may have grown the pool
    m.asSlice(nb, BUCKET_BYTES).fill((byte) 0);
    LONG.set(m, slotOffset(nb, 0), key);
    LONG.set(m, slotOffset(nb, 0) + PAIR_VALUE, value);
    LONG.set(m, nb + META, 1L);
    tx.snapshot(tail + NEXT, 8);
    LONG.setRelease(m, tail + NEXT, nb);
    return 1;
  }

  /**
   * Unlinks the overflow bucket {@code b} that follows {@code pred} and frees it, inside {@code
   * tx}. The bucket's own bytes are not changed: if the transaction rolls back it is linked and
   * whole again; if it commits no one reaches it. The free comes first, so the snapshot's drain
   * also makes the free's log entry durable.
   */
  static void unlink(MemorySegment m, NvlhTxn tx, long pred, long b) {
    tx.free(b);
    tx.snapshot(pred + NEXT, 8);
    LONG.setRelease(m, pred + NEXT, NvlhBucket.next(m, b));
  }
}
