package io.pmhash.core.alloc;

import io.pmhash.core.concurrent.EpochReclaimer;

/**
 * The pool's default {@link DeferredFree}: a freed block is retired to the pool's {@link
 * EpochReclaimer} and handed out again only once every thread that was inside an epoch when it
 * was freed has left it. Each retire also tries to advance the epoch and reuses whatever has
 * become safe, so freed memory is recycled without a background thread. Retiring allocates a
 * record (frees happen on structural changes and deletes of out-of-line records, not on the
 * probing hot path).
 */
public final class EpochDeferredFree implements DeferredFree {
  private final EpochReclaimer epochs;

  /**
   * @param epochs the reclaimer readers of this pool enter
   */
  public EpochDeferredFree(EpochReclaimer epochs) {
    this.epochs = epochs;
  }

  @Override
  public void retire(long block, BlockReuse reuse) {
    epochs.retire(block, 0, (offset, ignoredSize) -> reuse.reuse(offset));
    epochs.reclaim();
  }
}
