package io.pmhash.schemes.nvlh;

import io.pmhash.core.Pool;
import io.pmhash.core.log.Tx;

/**
 * The seam between NVLH and the durable transactions it runs on (§III: {@code tx_begin}, {@code
 * tx_addlog}, {@code tx_commit}, {@code tx_end}). NVLH uses nothing else of a transaction. A
 * pool backend with its own transactions needs no other {@link Factory}: the llpl pool's core
 * {@link Tx} already runs in PMDK's undo log ({@code PoolBackend.Region.transactions()},
 * docs/llpl.md), under this same factory.
 *
 * <p>The contract is the core undo log's ({@link Tx}): a range is {@link #snapshot snapshotted}
 * before its first store; blocks {@link #alloc allocated} become owned and blocks {@link #free
 * freed} become free only if the transaction commits; {@link #close()} without {@link
 * #commit()} rolls everything back, and so does recovery after a crash.
 */
interface NvlhTxn extends AutoCloseable {
  /** {@code tx_addlog}: records the old bytes of a range, durably, before the caller's first store. */
  void snapshot(long offset, long length);

  /**
   * {@code tx_addlog} of several ranges, durable together (one drain on the core's undo log),
   * before the caller's first store to any of them.
   */
  void snapshot(long[] offsets, long[] lengths, int count);

  /** @return a block of {@code size} bytes owned if the transaction commits; the caller fills it */
  long alloc(long size);

  /**
   * Frees an owned block when the transaction commits, for reuse at once: NVLH's readers reach an
   * overflow bucket or a segment only under the stripe of its chain, which the freeing operation
   * holds until after the commit, so no grace period is needed ({@link Tx#freeWithoutGrace}).
   */
  void free(long block);

  /** {@code tx_commit}: every change durable, the log invalidated. */
  void commit();

  /** {@code tx_end}: rolls back if not committed, then releases the log. */
  @Override
  void close();

  /** Begins transactions ({@code tx_begin}). */
  interface Factory {
    /** @return a new transaction; use it in try-with-resources */
    NvlhTxn begin();
  }

  /** The core backend: {@link Pool#undoLog()}. */
  static Factory undoLog(Pool pool) {
    return () -> new UndoLogTxn(pool.undoLog().begin());
  }

  /** An undo-log transaction of the core. One object per transaction: the rare path only. */
  record UndoLogTxn(Tx tx) implements NvlhTxn {
    @Override
    public void snapshot(long offset, long length) {
      tx.snapshot(offset, length);
    }

    @Override
    public void snapshot(long[] offsets, long[] lengths, int count) {
      tx.snapshot(offsets, lengths, count);
    }

    @Override
    public long alloc(long size) {
      return tx.alloc(size);
    }

    @Override
    public void free(long block) {
      tx.freeWithoutGrace(block);
    }

    @Override
    public void commit() {
      tx.commit();
    }

    @Override
    public void close() {
      tx.close();
    }
  }
}
