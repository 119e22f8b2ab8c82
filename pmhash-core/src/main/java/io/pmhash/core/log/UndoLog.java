package io.pmhash.core.log;

import io.pmhash.core.spi.PoolBackend;

/**
 * Failure-atomic transactions over several words and ranges, for structural changes that cannot
 * be expressed as one redo step (NVLH wraps every split and merge in one). Each transaction runs
 * in a lane's undo section ({@link LaneLayout}); see {@link Tx} for the persist order.
 *
 * <pre>{@code
 * try (Tx tx = pool.undoLog().begin()) {
 *   tx.snapshot(bucket, 256);
 *   long overflow = tx.alloc(256);
 *   // ... modify the bucket in place, fill the overflow bucket, link it ...
 *   tx.commit();
 * } // not committed (an exception): rolled back here
 * }</pre>
 *
 * <p>On a pool whose backend has its own transactions and allocator (the llpl pool: PMDK's undo
 * log and allocator), the same calls run in them: snapshots go to the backend's log, allocations
 * and frees to its allocator, and the backend's commit is the commit point ({@link Tx}, "In a
 * backend's transactions"). The callers' code does not change.
 */
public final class UndoLog {
  private final Lanes lanes;
  private final PoolBackend.Transactions backend;

  /**
   * Binds transactions to the lanes, with pmhash's own undo log in each lane.
   *
   * @param lanes the pool's lanes
   * @param allocator the pool's allocator, for {@link Tx#alloc} and {@link Tx#free}; null for
   *     none
   */
  public UndoLog(Lanes lanes, TxAllocator allocator) {
    this(lanes, allocator, null, null);
  }

  /**
   * Binds transactions to the lanes; the pool does this when it opens ({@link
   * io.pmhash.core.Pool#undoLog()}), with its backend's transactions if the backend has them.
   *
   * @param lanes the pool's lanes
   * @param allocator the pool's allocator, for {@link Tx#alloc} and {@link Tx#free}; null for
   *     none
   * @param backend the backend's transactions over the pool's region, which then hold every
   *     snapshot and make the commit point; null for the lanes' own undo log
   * @param backendAllocation the backend's allocator, which then serves every {@link Tx#alloc}
   *     and {@link Tx#free} inside {@code backend}'s transaction (no lane entries); null exactly
   *     when {@code backend} is null ({@code allocator} then serves them)
   * @throws IllegalArgumentException if only one of {@code backend} and {@code backendAllocation}
   *     is given: a backend's transactions allocate through its own allocator, and its allocator
   *     allocates inside its transactions
   */
  public UndoLog(Lanes lanes, TxAllocator allocator, PoolBackend.Transactions backend, PoolBackend.Allocation backendAllocation) {
    if ((backendAllocation == null) != (backend == null)) {
      throw new IllegalArgumentException(backend == null
          ? "the backend has an allocator but no transactions: its allocations run inside its transactions"
              + " (PoolBackend.Region.transactions()); a backend has both or neither"
          : "the backend has transactions but no allocator: a transaction allocates and frees through the"
              + " backend's allocator (PoolBackend.Region.allocation()); a backend has both or neither");
    }
    this.lanes = lanes;
    this.backend = backend;
    for (int i = 0; i < lanes.count(); i++) {
      Lane lane = lanes.lane(i);
      lane.tx = new Tx(lanes, lane, allocator, backend, backendAllocation);
    }
  }

  /**
   * Takes a lane and starts a transaction in it. Use it in try-with-resources, on one thread.
   *
   * @return the transaction (the lane's own object, reused after {@link Tx#close()})
   * @throws IllegalStateException if the backend's transactions cannot begin one on this thread
   *     (the message says why); no lane is held
   */
  public Tx begin() {
    Lane lane = lanes.acquire();
    boolean started = false;
    try {
      lane.tx.start();
      started = true;
    } finally {
      if (!started) {
        lanes.release(lane);
      }
    }
    return lane.tx;
  }

  /**
   * The undo section's size in bytes. In pmhash's own undo log a transaction's snapshots must fit
   * in it; in a backend's transactions only its allocation and free entries (32 bytes each) do.
   *
   * @return the undo section's size in bytes
   */
  public int capacityBytes() {
    return lanes.undoBytes;
  }

  /**
   * @return the backend's transactions that hold the snapshots and make the commit point, or
   *     null when the lanes' own undo log does
   */
  public PoolBackend.Transactions backendTransactions() {
    return backend;
  }

  /**
   * @return how many transactions have begun since the pool opened (exact when no transaction is
   *     running)
   */
  public long begun() {
    long n = 0;
    for (int i = 0; i < lanes.count(); i++) {
      n += lanes.lane(i).tx.begun;
    }
    return n;
  }
}
