package io.pmhash.core.alloc;

/**
 * In-memory state of a run chunk: which blocks are taken (owned, reserved, or waiting for their
 * grace period). Built from the persistent bitmap when the chunk is first scanned.
 */
final class Run {
  final int chunk;
  final int cls;
  final long base;
  final long blockSize;
  final int blocks;
  final long dataStart;
  private final long[] taken;
  private int free;
  private int hint;
  /** Not current in a stripe and not in its class's available queue (it was full). */
  private boolean detached;

  Run(int chunk, int cls, long base, long blockSize, int blocks, long[] owned) {
    this.chunk = chunk;
    this.cls = cls;
    this.base = base;
    this.blockSize = blockSize;
    this.blocks = blocks;
    this.dataStart = base + HeapLayout.runDataStart(blocks);
    int words = (blocks + 63) >>> 6;
    this.taken = new long[words];
    int owned0 = 0;
    for (int i = 0; i < words; i++) {
      taken[i] = owned == null ? 0 : owned[i];
      owned0 += Long.bitCount(taken[i]);
    }
    if ((blocks & 63) != 0) {
      taken[words - 1] |= -1L << (blocks & 63); // bits past the last block: never free
    }
    this.free = blocks - owned0;
  }

  long blockOffset(int index) {
    return dataStart + index * blockSize;
  }

  /** Pool offset of the bitmap word of block {@code index}. */
  long bitmapWord(int index) {
    return base + HeapLayout.CHUNK_HEADER_BYTES + 8L * (index >>> 6);
  }

  /** @return a free block's index, now taken, or -1 (and the run detached) when full */
  synchronized int take() {
    if (free == 0) {
      detached = true;
      return -1;
    }
    long[] t = taken;
    int n = t.length;
    for (int i = 0, w = hint; i < n; i++, w = w + 1 == n ? 0 : w + 1) {
      long word = t[w];
      if (word != -1L) {
        int bit = Long.numberOfTrailingZeros(~word);
        t[w] = word | (1L << bit);
        free--;
        hint = w;
        return (w << 6) | bit;
      }
    }
    throw new IllegalStateException("run at " + base + " counts " + free + " free blocks but has none");
  }

  /** @return true if the run was detached and must go back to its class's queue */
  synchronized boolean release(int index) {
    long bit = 1L << index;
    int w = index >>> 6;
    if ((taken[w] & bit) == 0) {
      throw new IllegalStateException("block " + index + " of the run at " + base + " is released twice");
    }
    taken[w] &= ~bit;
    free++;
    if (detached) {
      detached = false;
      return true;
    }
    return false;
  }

  synchronized void markDetached() {
    detached = true;
  }

  synchronized boolean isTaken(int index) {
    return (taken[index >>> 6] & (1L << index)) != 0;
  }

  synchronized int freeBlocks() {
    return free;
  }
}
