package io.pmhash.llpl;

/**
 * Block → its PMDK object (where the object starts, and the block's usable size), in three
 * primitive arrays with open addressing: the index {@link PmdkAllocation} builds at open from
 * PMDK's heap walk. Pointer mode keeps one PMDK object per record, so at a million records a map
 * of boxed keys and value records cost more than PMDK's own walk (and gave the open a
 * garbage-collection spread of seconds); this one allocates nothing per block.
 *
 * <p>Linear probing over a power-of-two table kept at most half full, Fibonacci hashing of the
 * block's line number, deletion by backward shift (no tombstones). Block 0 is never a PMDK
 * object's block and marks an empty slot. Not thread-safe: the allocation's lock guards it.
 */
final class BlockIndex {
  /** What {@link #forEach} visits. */
  @FunctionalInterface
  interface Visitor {
    /**
     * @param block the block's region offset
     * @param start its object's start ({@code PMEMoid.off})
     * @param size the block's usable size
     */
    void visit(long block, long start, long size);
  }

  private long[] blocks;
  private long[] starts;
  private long[] sizes;
  private int shift;
  private int count;

  BlockIndex() {
    allocate(16);
  }

  /** @return blocks indexed */
  int size() {
    return count;
  }

  boolean contains(long block) {
    return blocks[slotOf(block)] != 0;
  }

  /** @return the object start of {@code block}, or -1 if it is not indexed */
  long start(long block) {
    int i = slotOf(block);
    return blocks[i] != 0 ? starts[i] : -1;
  }

  /** @return the usable size of {@code block}, or -1 if it is not indexed */
  long size(long block) {
    int i = slotOf(block);
    return blocks[i] != 0 ? sizes[i] : -1;
  }

  /** Adds or replaces {@code block}. */
  void put(long block, long start, long size) {
    if (block == 0) {
      throw new IllegalArgumentException("block 0 is not a PMDK object's block");
    }
    int i = slotOf(block);
    if (blocks[i] == 0) {
      if (2 * (count + 1) > blocks.length) {
        grow();
        i = slotOf(block);
      }
      count++;
    }
    blocks[i] = block;
    starts[i] = start;
    sizes[i] = size;
  }

  /** @return whether {@code block} was indexed (and is not any more) */
  boolean remove(long block) {
    int i = slotOf(block);
    if (blocks[i] == 0) {
      return false;
    }
    int mask = blocks.length - 1;
    // backward shift: move each later entry of the run into the gap if its home allows it
    for (int j = (i + 1) & mask; blocks[j] != 0; j = (j + 1) & mask) {
      int home = home(blocks[j]);
      if (((j - home) & mask) >= ((j - i) & mask)) {
        blocks[i] = blocks[j];
        starts[i] = starts[j];
        sizes[i] = sizes[j];
        i = j;
      }
    }
    blocks[i] = 0;
    count--;
    return true;
  }

  /** Visits every block, in no particular order; the visitor must not change the index. */
  void forEach(Visitor v) {
    for (int i = 0; i < blocks.length; i++) {
      if (blocks[i] != 0) {
        v.visit(blocks[i], starts[i], sizes[i]);
      }
    }
  }

  /** @return the sum of the usable sizes */
  long totalSize() {
    long total = 0;
    for (int i = 0; i < blocks.length; i++) {
      if (blocks[i] != 0) {
        total += sizes[i];
      }
    }
    return total;
  }

  /** @return the slot holding {@code block}, or the empty slot where it would go */
  private int slotOf(long block) {
    int mask = blocks.length - 1;
    int i = home(block);
    while (blocks[i] != 0 && blocks[i] != block) {
      i = (i + 1) & mask;
    }
    return i;
  }

  private int home(long block) {
    return (int) (((block >>> 6) * 0x9E3779B97F4A7C15L) >>> shift);
  }

  private void grow() {
    long[] oldBlocks = blocks;
    long[] oldStarts = starts;
    long[] oldSizes = sizes;
    allocate(oldBlocks.length * 2);
    for (int i = 0; i < oldBlocks.length; i++) {
      if (oldBlocks[i] != 0) {
        int j = slotOf(oldBlocks[i]);
        blocks[j] = oldBlocks[i];
        starts[j] = oldStarts[i];
        sizes[j] = oldSizes[i];
      }
    }
  }

  private void allocate(int capacity) {
    blocks = new long[capacity];
    starts = new long[capacity];
    sizes = new long[capacity];
    shift = Long.numberOfLeadingZeros(capacity - 1L);
  }
}
