package io.pmhash.core.log;

/**
 * How a transaction allocates and frees: the allocator implements it ({@link
 * io.pmhash.core.alloc.Allocator}); users do not. A block's ownership is one bit in a persistent
 * word, which the transaction sets or clears under the protection of an undo entry.
 */
public interface TxAllocator {
  /**
   * Reserves a block in memory only (nothing persistent changes).
   *
   * @param size bytes needed
   * @return the block's pool offset
   * @throws io.pmhash.core.PoolFullException if the pool cannot grow; nothing changed
   */
  long reserveForTx(long size);

  /**
   * @param block a block's offset
   * @return the pool offset of the word holding the block's owned bit
   */
  long ownedWord(long block);

  /**
   * @param block a block's offset
   * @return the mask of the block's owned bit in {@link #ownedWord}
   */
  long ownedMask(long block);

  /**
   * @param block a block's offset
   * @return its usable size in bytes
   */
  long blockSize(long block);

  /**
   * Checks that a block is owned and may be freed, and makes its in-memory state current, before
   * a transaction logs its free.
   *
   * @param block the block
   * @throws IllegalArgumentException if it is not an owned block
   */
  void checkFreeable(long block);

  /**
   * A committed transaction freed the block (durably); it may be reused after a grace period.
   *
   * @param block the block
   */
  void retire(long block);

  /**
   * A committed transaction freed the block (durably), and no thread can still read it: it may
   * be handed out again at once ({@link Tx#freeWithoutGrace}).
   *
   * @param block the block
   */
  void reuseNow(long block);

  /**
   * A transaction that reserved the block rolled back; the block is not owned and may be reused
   * after a grace period (a concurrent optimistic reader may have seen it).
   *
   * @param block the block
   */
  void abandon(long block);
}
