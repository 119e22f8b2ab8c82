package io.pmhash.core.alloc;

/**
 * The allocator seam: exactly what every scheme takes from an allocator, and nothing more. A pool
 * hands it out through {@link io.pmhash.core.Pool#schemeAllocator()}: on an FFM pool it is
 * pmhash's own {@link Allocator} ({@link Allocator#schemeAllocator()}, no behaviour of its own);
 * on a backend that allocates ({@link io.pmhash.core.spi.PoolBackend.Region#allocation()}, the
 * llpl pool: PMDK) it is the backend's allocator. A transaction's {@code alloc} and {@code free}
 * ({@link io.pmhash.core.log.Tx}) go to the same allocator.
 *
 * <p>A block freed by a {@link Step#deferFree} is persistently free (or, on PMDK, persistently
 * recorded as retired) when the step commits and reused only after a grace period of the pool's
 * epochs ({@link io.pmhash.core.Pool#epochs()}), on either allocator, so an optimistic reader
 * may still read it meanwhile. A transaction's free through a backend's allocator ({@link
 * io.pmhash.core.log.Tx#free} on an llpl pool) is immediate: only schemes whose readers hold the
 * table's lock free in transactions (NVLH). Blocks of 64 bytes and more are 64-byte aligned on
 * both allocators, smaller ones 16 (pmhash's) or 64 (PMDK's).
 *
 * <p>Persist contract: a reserved block is not owned persistently until a publish of it commits;
 * a crash before leaks nothing. The caller flushes a block's contents before publishing it, on
 * the publishing thread; the publish orders those flushes before its commit point: pmhash's
 * {@link Publication} by the drain after its entries, PMDK's {@code pmemobj_publish} by
 * persisting its redo log (flushes and an {@code sfence}, which orders the thread's earlier
 * flushes) before it commits. The caller owns every destination word exclusively until the
 * publish returns.
 */
public interface SchemeAllocator {
  /**
   * Hands out a block that is not yet owned (persistently nothing changes).
   *
   * @param size bytes needed, at least 1
   * @return the reservation
   * @throws io.pmhash.core.PoolFullException if there is no room; nothing changed
   */
  Reserved reserve(long size);

  /**
   * Gives back a reservation that was never published: nothing persistent changes, the block is
   * reusable at once (no reader can have reached it).
   *
   * @param r a reservation of this allocator, not published and not in a step
   * @throws IllegalStateException if it was published, cancelled, or is in a step
   */
  void cancel(Reserved r);

  /**
   * Makes reservations owned without linking them, for blocks nothing reaches yet (see {@link
   * Allocator#publishUnlinked}): each step atomic, the whole possibly not.
   *
   * @param rs reservations of this allocator, none published yet
   */
  void publishUnlinked(Reserved[] rs);

  /**
   * Publishes a reservation and stores its offset into a destination word, atomically with
   * respect to a crash.
   *
   * @param r a reservation of this allocator
   * @param destination aligned offset of the word that will hold {@code r.offset()}
   */
  void publish(Reserved r, long destination);

  /**
   * Takes an atomic step of several publishes, word stores and frees.
   *
   * @return the step; use it in try-with-resources
   */
  Step begin();

  /**
   * Makes the blocks freed so far reusable now. The caller guarantees that nothing reads them any
   * more (it holds the table's write lock). On an allocator whose free is immediate it does
   * nothing.
   */
  void releaseRetired();

  /**
   * @param block an offset
   * @return true if it is the start of a block this allocator owns persistently
   */
  boolean owned(long block);

  /**
   * @param block an owned block
   * @return its usable size in bytes
   * @throws IllegalArgumentException if it is not an owned block
   */
  long blockSize(long block);

  /** @return how many blocks this allocator owns (for open-time validation; may cost a walk) */
  long blocksOwned();

  /** A block handed out by {@link #reserve} and not yet published. */
  interface Reserved {
    /** @return the block's offset in the pool's memory */
    long offset();

    /** @return its usable size: at least what was asked for */
    long size();
  }

  /**
   * One atomic step ({@link Publication} on pmhash's allocator): every publish, store and free in
   * it takes effect at {@link #commit} or not at all. Closed without commit, it changes nothing
   * and its reservations stay reserved.
   */
  interface Step extends AutoCloseable {
    /**
     * @param r a reservation, not yet published
     * @param destination aligned offset of the word that will hold {@code r.offset()}
     * @return this
     */
    Step publish(Reserved r, long destination);

    /**
     * @param r a reservation, not yet published, made reachable by a {@link #set} of this step
     * @return this
     */
    Step publish(Reserved r);

    /**
     * @param offset aligned offset of a word
     * @param value what it will hold
     * @return this
     */
    Step set(long offset, long value);

    /**
     * @param block an owned block, free when the step commits and reused after a grace period
     * @return this
     * @throws IllegalArgumentException if it is not an owned block
     */
    Step deferFree(long block);

    /** Makes the step durable and applied. */
    void commit();

    /** Ends the step; a step not committed is discarded. */
    @Override
    void close();
  }
}
