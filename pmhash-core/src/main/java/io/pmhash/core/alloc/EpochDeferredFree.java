package io.pmhash.core.alloc;

import io.pmhash.core.concurrent.EpochReclaimer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The pool's default {@link DeferredFree}: a freed block is retired to the pool's {@link
 * EpochReclaimer} and handed out again only once every thread that was inside an epoch when it
 * was freed has left it. A retire also tries to advance the epoch and reuses whatever has become
 * safe, so freed memory is recycled without a background thread. Retiring allocates a record
 * (frees happen on structural changes and deletes of out-of-line records, not on the probing hot
 * path).
 *
 * <p>Retires less than {@link #ADVANCE_INTERVAL_NANOS} after the last advance attempt share it:
 * an advance costs a {@code membarrier} system call (the epochs' asymmetric fence), which
 * interrupts every CPU running a thread of the process. One per retire made a pointer-mode delete
 * pay one each: with two threads deleting, each interrupted the other, and Dash-EH's deletes of
 * 16-byte keys ran at 0.06 Mops/s against 0.62 with symmetric fences (docs/persistence.md,
 * "Cheaper undo-log transactions"). A block so retired waits at most that long more for the
 * next advance, if another retire comes; {@link EpochReclaimer#reclaim()} still advances at once.
 */
public final class EpochDeferredFree implements DeferredFree {
  /** Retires within this many nanoseconds of the last advance attempt do not attempt another. */
  static final long ADVANCE_INTERVAL_NANOS = 50_000;

  private final EpochReclaimer epochs;
  /** {@link System#nanoTime()} of the last advance attempt. */
  private final AtomicLong lastAdvance = new AtomicLong(System.nanoTime() - ADVANCE_INTERVAL_NANOS);

  /**
   * @param epochs the reclaimer readers of this pool enter
   */
  public EpochDeferredFree(EpochReclaimer epochs) {
    this.epochs = epochs;
  }

  @Override
  public void retire(long block, BlockReuse reuse) {
    epochs.retire(block, 0, (offset, ignoredSize) -> reuse.reuse(offset));
    long now = System.nanoTime();
    long last = lastAdvance.get();
    if (now - last >= ADVANCE_INTERVAL_NANOS && lastAdvance.compareAndSet(last, now)) {
      epochs.reclaim();
    }
  }
}
