package io.pmhash.core.alloc;

import java.util.Arrays;

/**
 * The default {@link DeferredFree}: retired blocks wait here until {@link #releaseRetired()} is
 * called by whoever knows that no reader can still hold a reference to them (an epoch reclaimer
 * at the end of a grace period, or the application at a quiescent point). Blocks retired and not
 * yet released stay out of circulation but are free persistently: a crash frees them for good.
 */
public final class GraceQueue implements DeferredFree {
  private long[] blocks = new long[16];
  private DeferredFree.BlockReuse[] reuses = new DeferredFree.BlockReuse[16];
  private int size;

  /** An empty queue. */
  public GraceQueue() {}

  @Override
  public synchronized void retire(long block, BlockReuse reuse) {
    if (size == blocks.length) {
      blocks = Arrays.copyOf(blocks, size * 2);
      reuses = Arrays.copyOf(reuses, size * 2);
    }
    blocks[size] = block;
    reuses[size] = reuse;
    size++;
  }

  /** @return blocks retired and not yet released */
  public synchronized int pending() {
    return size;
  }

  /**
   * Makes every block retired before this call reusable. Call it only when no thread can still
   * hold a reference to any of them.
   *
   * @return the number of blocks released
   */
  public int releaseRetired() {
    long[] b;
    DeferredFree.BlockReuse[] r;
    int n;
    synchronized (this) {
      b = blocks;
      r = reuses;
      n = size;
      blocks = new long[16];
      reuses = new DeferredFree.BlockReuse[16];
      size = 0;
    }
    for (int i = 0; i < n; i++) {
      r[i].reuse(b[i]);
    }
    return n;
  }
}
