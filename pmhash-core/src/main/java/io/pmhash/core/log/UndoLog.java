package io.pmhash.core.log;

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
 */
public final class UndoLog {
  private final Lanes lanes;

  /**
   * Binds transactions to the lanes; the pool does this when it opens ({@link
   * io.pmhash.core.Pool#undoLog()}).
   *
   * @param lanes the pool's lanes
   * @param allocator the pool's allocator, for {@link Tx#alloc} and {@link Tx#free}; null for
   *     none
   */
  public UndoLog(Lanes lanes, TxAllocator allocator) {
    this.lanes = lanes;
    for (int i = 0; i < lanes.count(); i++) {
      Lane lane = lanes.lane(i);
      lane.tx = new Tx(lanes, lane, allocator);
    }
  }

  /**
   * Takes a lane and starts a transaction in it. Use it in try-with-resources.
   *
   * @return the transaction (the lane's own object, reused after {@link Tx#close()})
   */
  public Tx begin() {
    Lane lane = lanes.acquire();
    lane.tx.start();
    return lane.tx;
  }

  /** @return the undo section's size in bytes: a transaction's snapshots must fit in it */
  public int capacityBytes() {
    return lanes.undoBytes;
  }
}
