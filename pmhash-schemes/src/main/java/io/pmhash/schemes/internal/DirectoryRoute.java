package io.pmhash.schemes.internal;

import io.pmhash.core.concurrent.UncheckedMemory;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

/**
 * An extendible table's route to its directory, kept in DRAM: the published directory's offset
 * and global depth in one word ({@code dir | depth}: a directory block is 64-byte aligned and a
 * depth is at most {@link ExtendibleDirectory#MAX_DEPTH}), or 0 while a doubling or halving is in
 * flight. It stands for the directory word in the table header, so that the first directory
 * entry a read loads waits for neither that word nor the directory's depth: two dependent loads,
 * with their bounds checks, at the head of every operation. docs/persistence.md, "Routing
 * through a cached directory", gives what it saves.
 *
 * <p>Why a reader may trust it as it trusts the header's word. The step that publishes a new
 * directory also frees the current one (to the epoch reclaimer: reused only after every reader
 * that might still hold it has left its epoch section). The table calls {@link #changing()}
 * before that step and {@link #published} after it, both under its directory lock. A reader that
 * reads a non-zero route inside its epoch section therefore read it before the step retired the
 * directory it names, exactly like a reader that read the header's word before the step, and that
 * directory is not freed before it leaves; its entries may be stale, as the header's old
 * directory's may be, and the scheme's shape checks route around them as before. A reader that
 * reads 0 uses the header's word ({@link #directory}).
 */
public final class DirectoryRoute {
  private static final VarHandle LONG = ExtendibleDirectory.LONG;

  private final long directoryWord;
  private volatile long route;

  /**
   * @param m the mapping
   * @param directoryWord pool offset of the table header's word naming the directory, already
   *     checked by the scheme's open (the word and the directory's depth are read here)
   */
  public DirectoryRoute(MemorySegment m, long directoryWord) {
    this.directoryWord = directoryWord;
    published(m);
  }

  /** Before a step that publishes a new directory and frees the current one: readers use the header. */
  public void changing() {
    route = 0;
  }

  /**
   * After such a step, also one that failed (the header then still names the old directory); and
   * at open.
   *
   * @param m a mapping covering the published directory
   */
  public void published(MemorySegment m) {
    long dir = directory(m);
    route = dir | ExtendibleDirectory.depth(m, dir);
  }

  /**
   * @return the route, read inside the caller's epoch section; 0 while a directory change is in
   *     flight
   */
  public long get() {
    return route;
  }

  /** @return pool offset of the table header's word naming the directory */
  public long directoryWord() {
    return directoryWord;
  }

  /**
   * @param m the mapping
   * @return the directory the table header names now (read with acquire)
   */
  public long directory(MemorySegment m) {
    return (long) LONG.getAcquire(m, directoryWord);
  }

  /**
   * @param route a non-zero route
   * @return its directory's offset
   */
  public static long directoryOf(long route) {
    return route & ~63L;
  }

  /**
   * @param route a non-zero route
   * @return its directory's global depth
   */
  public static int depthOf(long route) {
    return (int) route & 63;
  }

  /**
   * {@link #segmentFor} for a reader by address ({@link UncheckedMemory}): the entry read with a
   * plain load and an acquire fence, at {@code base}, the address of the live mapping {@code m};
   * the same checks of the entry's and the segment's offsets against {@code m}.
   *
   * @param m the mapping, alive ({@code base} came from {@link UncheckedMemory#base})
   * @param base its address
   * @param h the hash
   * @param segmentBytes the size of a segment
   * @return the segment's offset, or -1
   */
  public long segmentAt(MemorySegment m, long base, long h, long segmentBytes) {
    long r = route; // read inside the caller's epoch section
    if (r == 0) {
      return ExtendibleDirectory.segmentFor(m, directory(m), h, segmentBytes);
    }
    long limit = m.byteSize();
    long e = ExtendibleDirectory.entry(m, directoryOf(r), ExtendibleDirectory.prefix(h, depthOf(r)));
    if (e < 0 || e > limit - 8) {
      return -1;
    }
    long seg = UncheckedMemory.getLong(base + e);
    VarHandle.acquireFence(); // the entry before the segment it names
    return seg < 0 || seg > limit - segmentBytes ? -1 : seg;
  }

  /**
   * {@link ExtendibleDirectory#segmentFor} through this route: the entry of {@code h} in the
   * route's directory, read with acquire, when the entry and a segment of {@code segmentBytes} at
   * the offset read lie in {@code m}; -1 otherwise (the pool grew after the caller read its
   * mapping, or a damaged offset). While the route is 0, the same through the header's word.
   * Small enough to inline into a read.
   *
   * @param m the mapping
   * @param h the hash
   * @param segmentBytes the size of a segment
   * @return the segment's offset, or -1
   */
  public long segmentFor(MemorySegment m, long h, long segmentBytes) {
    long r = route; // read inside the caller's epoch section
    if (r == 0) {
      return ExtendibleDirectory.segmentFor(m, directory(m), h, segmentBytes);
    }
    long limit = m.byteSize();
    long e = ExtendibleDirectory.entry(m, directoryOf(r), ExtendibleDirectory.prefix(h, depthOf(r)));
    if (e + 8 > limit) {
      return -1;
    }
    long seg = (long) LONG.getAcquire(m, e);
    return seg < 0 || seg > limit - segmentBytes ? -1 : seg; // no overflow: readers go on by address
  }
}
