package io.pmhash.core.alloc;

/**
 * Where blocks go between their persistent free and their reuse: a concurrent reader that
 * loaded a pointer before the free may still be reading the block, so it is handed out again
 * only after a grace period. The allocator calls {@link #retire} once the free is durable; the
 * implementation calls {@link BlockReuse#reuse} when no reader can still hold a reference. The
 * default is a {@link GraceQueue}; an epoch reclaimer plugs in with {@link
 * Allocator#useDeferredFree}.
 */
public interface DeferredFree {
  /**
   * Takes a block that is free persistently.
   *
   * @param block the block's offset
   * @param reuse to call, once, after the grace period
   */
  void retire(long block, BlockReuse reuse);

  /** Makes a retired block available for allocation again. */
  @FunctionalInterface
  interface BlockReuse {
    /**
     * @param block a block given to {@link #retire}
     */
    void reuse(long block);
  }
}
