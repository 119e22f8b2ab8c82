package io.pmhash.core.alloc;

import java.util.List;

/**
 * What the heap holds persistently, from a walk of every chunk header and run bitmap ({@link
 * Allocator#stats()}): not a snapshot atomic with concurrent publishes.
 *
 * @param chunksFormatted the high water: chunks ever formatted
 * @param runChunks chunks that are runs
 * @param hugeChunks chunks in owned huge blocks
 * @param freeChunks chunks in free spans
 * @param blocksOwned owned blocks, runs and huge
 * @param bytesOwned their usable bytes
 * @param hugeBlocksOwned owned huge blocks
 * @param classes per block size that has runs
 */
public record AllocatorStats(
    long chunksFormatted,
    long runChunks,
    long hugeChunks,
    long freeChunks,
    long blocksOwned,
    long bytesOwned,
    long hugeBlocksOwned,
    List<ClassStats> classes) {

  /**
   * One size class.
   *
   * @param blockSize bytes per block
   * @param runs runs of this size
   * @param blocksOwned owned blocks
   * @param bytesOwned {@code blocksOwned * blockSize}
   */
  public record ClassStats(long blockSize, int runs, long blocksOwned, long bytesOwned) {}

  /** @return chunks in use: runs plus owned huge blocks */
  public long chunksInUse() {
    return runChunks + hugeChunks;
  }
}
