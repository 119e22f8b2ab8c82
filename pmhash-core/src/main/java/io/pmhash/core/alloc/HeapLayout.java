package io.pmhash.core.alloc;

/**
 * Byte layout of the heap: the region from {@link io.pmhash.core.Pool#heapOffset()} carved into
 * chunks of {@link io.pmhash.core.Pool#chunkSize()} bytes (C, default 256 KiB). All words are
 * little-endian u64. See {@code docs/allocator.md}.
 *
 * <pre>
 *  pool header allocator word 0: high water = chunks ever formatted (chunk i at heap + i * C)
 *
 *  chunk header word (chunk byte 0):
 *   bits  7..0   kind: 0 = never formatted, 0x52 ('R') = run, 0x53 ('S') = span
 *   bits 39..8   run: block size in bytes        span: length n in chunks
 *   bits 62..40  zero
 *   bit  63      run: zero                       span: owned (a huge block) / free
 *
 *  run chunk:
 *   byte 0        8              64                        D                      C
 *        +--------+--------------+-------------------------+----------------------+
 *        | header | reserved (0) | bitmap u64[ceil(N/64)]   | blocks[N] of size B  |
 *        |        |              | bit i: block i owned     | block i at D + i * B |
 *        +--------+--------------+-------------------------+----------------------+
 *   D = 64 + 8 * ceil(N / 64), rounded up to 64; N = the largest count with D + N * B &lt;= C
 *
 *  span (n chunks; interior chunks have no header, the scan skips them):
 *   byte 0        8              64                                           n * C
 *        +--------+--------------+----------------------------------------------+
 *        | header | reserved (0) | huge block: n * C - 64 bytes, 64-aligned     |
 *        +--------+--------------+----------------------------------------------+
 * </pre>
 */
public final class HeapLayout {
  private HeapLayout() {}

  /** Chunk kind of a run of one block size. */
  public static final long KIND_RUN = 0x52;

  /** Chunk kind of a span: a huge block when owned, free space otherwise. */
  public static final long KIND_SPAN = 0x53;

  /** The owned bit of a span header. */
  public static final long SPAN_OWNED = 1L << 63;

  /** Bytes before a run's bitmap or a huge block's data: the chunk header line. */
  public static final int CHUNK_HEADER_BYTES = 64;

  /** Allocator word (in the pool header) holding the high water. */
  public static final int HIGH_WATER_WORD = 0;

  /**
   * @param blockSize bytes per block
   * @return a run header word
   */
  public static long runHeader(long blockSize) {
    return KIND_RUN | (blockSize << 8);
  }

  /**
   * @param chunks span length
   * @param owned whether it is an owned huge block
   * @return a span header word
   */
  public static long spanHeader(long chunks, boolean owned) {
    return KIND_SPAN | (chunks << 8) | (owned ? SPAN_OWNED : 0);
  }

  /**
   * @param header a chunk header word
   * @return its kind byte
   */
  public static long kind(long header) {
    return header & 0xFF;
  }

  /**
   * @param header a chunk header word
   * @return the run's block size or the span's length
   */
  public static long field(long header) {
    return (header >>> 8) & 0xFFFF_FFFFL;
  }

  /**
   * Blocks in a run.
   *
   * @param chunkSize C
   * @param blockSize B
   * @return N
   */
  public static int runBlocks(long chunkSize, long blockSize) {
    long n = (chunkSize - CHUNK_HEADER_BYTES) / blockSize;
    while (runDataStart(n) + n * blockSize > chunkSize) {
      n--;
    }
    return (int) n;
  }

  /**
   * @param blocks N
   * @return D, the offset of block 0 in the chunk
   */
  public static long runDataStart(long blocks) {
    long bitmapEnd = CHUNK_HEADER_BYTES + 8 * ((blocks + 63) >>> 6);
    return (bitmapEnd + 63) & ~63L;
  }
}
