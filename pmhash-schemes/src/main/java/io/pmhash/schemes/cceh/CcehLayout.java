package io.pmhash.schemes.cceh;

import io.pmhash.schemes.internal.ExtendibleDirectory;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The persistent layouts of CCEH (Nam, Choi, Seo, Noh, Noh — "Write-Optimized Dynamic Hashing
 * for Persistent Memory", FAST'19, §3, Fig. 3 and 4) in the configuration Dash evaluated (Dash
 * §6.2: 16 KB segments, 64-byte buckets, probing four cache lines): the segment, the directory
 * and the table header. A descriptor only: offsets, sizes and {@code static final} VarHandles
 * over {@code (MemorySegment, long offset)}; no logic. The normative text is {@code
 * docs/format/cceh.md}; {@code CcehLayoutTest} checks every offset below.
 *
 * <h2>Segment (CCEH §3.2, Fig. 4), 16,576 bytes, 64-byte aligned</h2>
 *
 * <pre>
 *  byte 0          8                     16            24                  64
 *       +----------+---------------------+-------------+-------------------+
 *       | rw lock  | shape: depth|pattern| split child | 0                 |
 *       +----------+---------------------+-------------+-------------------+
 *  byte 64                                                                192
 *       +------------------------------------------------------------------+
 *       | valid bitmap[16] (u64 LE): bit (s &amp; 63) of word (s &gt;&gt;&gt; 6) = slot s |
 *       +------------------------------------------------------------------+
 *  byte 192                                                       192 + 16384
 *       +------------------------------------------------------------------+
 *       | buckets[256] = 64 B = pairs[4] = { key: u64 LE | value: u64 LE }  |
 *       +------------------------------------------------------------------+
 *  shape (u64): [7..0] local depth | [31..8] 0 | [63..32] pattern (the top depth bits)
 *  rw lock (u64): [63] writer | [62] writer waiting | [31..0] readers
 * </pre>
 *
 * <h2>Directory (CCEH §3.2: indexed by the most significant bits)</h2>
 *
 * <pre>
 *  byte 0              4          64
 *       +--------------+----------+----------------------------------------+
 *       | global depth | 0        | entries[2^depth]: u64 segment offset   |
 *       +--------------+----------+----------------------------------------+
 *  entry = h &gt;&gt;&gt; (64 - depth); bucket = h &amp; 255; probe slots 4 * bucket + 0..15 (mod 1024)
 * </pre>
 *
 * <h2>Table header (pool root 0), 64 bytes</h2>
 *
 * <pre>
 *  byte 0       8         12       16          24                              64
 *       +-------+---------+--------+-----------+-------------------------------+
 *       | magic | version | 0      | directory | 0                             |
 *       +-------+---------+--------+-----------+-------------------------------+
 * </pre>
 *
 * <p>Deviations from the published layout: a valid bitmap replaces the reserved empty key (so
 * every key can be stored, and one 8-byte word commits an insert or delete), the segment carries
 * a split-child word for crash recovery, and the reader-writer lock lives in the segment header
 * (PMDK's lock Dash used also lives in persistent memory; it is reset by recovery).
 */
public final class CcehLayout {
  private CcehLayout() {}

  private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

  // ------------------------------------------------------------------ bucket

  /** Pairs per 64-byte bucket (one cache line). */
  public static final int PAIRS_PER_BUCKET = 4;
  /** Buckets per segment (16 KB of pairs). */
  public static final int BUCKETS = 256;
  /** Slots per segment. */
  public static final int SLOTS = BUCKETS * PAIRS_PER_BUCKET;
  /** Cache lines (buckets) probed from the start bucket (CCEH §3.3; Dash §6.2). */
  public static final int PROBE_BUCKETS = 4;
  /** Slots probed from the start slot. */
  public static final int PROBE_SLOTS = PROBE_BUCKETS * PAIRS_PER_BUCKET;

  /** One record slot: key then value, both u64 LE. */
  public static final StructLayout PAIR =
      MemoryLayout.structLayout(U64.withName("key"), U64.withName("value"));
  /** The 64-byte bucket: four pairs, one cache line. */
  public static final StructLayout BUCKET =
      MemoryLayout.structLayout(MemoryLayout.sequenceLayout(PAIRS_PER_BUCKET, PAIR).withName("pairs"))
          .withByteAlignment(64);
  /** Size of a pair: 16. */
  public static final long PAIR_BYTES = PAIR.byteSize();
  /** Offset of the key in a pair. */
  public static final long PAIR_KEY = off(PAIR, "key");
  /** Offset of the value in a pair. */
  public static final long PAIR_VALUE = off(PAIR, "value");
  /** Size of a bucket: 64. */
  public static final long BUCKET_BYTES = BUCKET.byteSize();

  // ------------------------------------------------------------------ segment

  /** Words of the valid bitmap (one bit per slot). */
  public static final int BITMAP_WORDS = SLOTS / 64;

  /** The segment: a 64-byte header, the valid bitmap, the buckets. */
  public static final StructLayout SEGMENT =
      MemoryLayout.structLayout(
              U64.withName("rw_lock"),
              U64.withName("shape"),
              U64.withName("split_child"),
              MemoryLayout.paddingLayout(40),
              MemoryLayout.sequenceLayout(BITMAP_WORDS, U64).withName("bitmap"),
              MemoryLayout.sequenceLayout(BUCKETS, BUCKET).withName("buckets"))
          .withByteAlignment(64);

  /** Segment size: 16,576 bytes. */
  public static final long SEGMENT_BYTES = SEGMENT.byteSize();
  /** Offset of the reader-writer lock (u64). */
  public static final long SEG_LOCK = off(SEGMENT, "rw_lock");
  /** Offset of the shape word (local depth and pattern, u64). */
  public static final long SEG_SHAPE = off(SEGMENT, "shape");
  /** Offset of the split child (u64): the new segment of a split in progress, else 0. */
  public static final long SEG_CHILD = off(SEGMENT, "split_child");
  /** Offset of bitmap word 0. */
  public static final long SEG_BITMAP = off(SEGMENT, "bitmap");
  /** Offset of bucket 0 (slot 0). */
  public static final long SEG_PAIRS = off(SEGMENT, "buckets");

  /** Lock word: the writer bit. */
  public static final long WRITER = 1L << 63;
  /** Lock word: a writer waits (new readers hold back). */
  public static final long WRITER_WAITING = 1L << 62;

  /**
   * @param depth local depth, 0..32
   * @param pattern the segment's hash prefix of {@code depth} bits
   * @return the shape word
   */
  public static long shape(int depth, long pattern) {
    return (depth & 0xFFL) | pattern << 32;
  }

  /** @param shape a shape word @return its local depth */
  public static int depthOf(long shape) {
    return (int) (shape & 0xFF);
  }

  /** @param shape a shape word @return its pattern */
  public static long patternOf(long shape) {
    return shape >>> 32;
  }

  /**
   * @param h a hash
   * @param depth 0..32
   * @return the top {@code depth} bits of {@code h} (0 for depth 0)
   */
  public static long prefix(long h, int depth) {
    return ExtendibleDirectory.prefix(h, depth);
  }

  /**
   * @param shape a shape word
   * @param h a hash
   * @return whether a segment of that shape covers the hash
   */
  public static boolean covers(long shape, long h) {
    return prefix(h, depthOf(shape)) == patternOf(shape);
  }

  /** @param h a hash @return its start slot: the first slot of bucket {@code h & 255} */
  public static int startSlot(long h) {
    return ((int) h & (BUCKETS - 1)) * PAIRS_PER_BUCKET;
  }

  /** @param seg a segment offset @param slot 0..1023 @return the pool offset of the slot's key */
  public static long slotOffset(long seg, int slot) {
    return seg + SEG_PAIRS + PAIR_BYTES * slot;
  }

  // ------------------------------------------------------------------ directory

  /** Directory header; entries follow at {@link #DIR_ENTRIES}. */
  public static final StructLayout DIRECTORY_HEADER =
      ExtendibleDirectory.HEADER;
  /** Offset of the global depth (u32). */
  public static final long DIR_DEPTH = ExtendibleDirectory.DEPTH;
  /** Offset of entry 0. */
  public static final long DIR_ENTRIES = ExtendibleDirectory.ENTRIES;
  /** Largest global (and local) depth. */
  public static final int MAX_DEPTH = ExtendibleDirectory.MAX_DEPTH;

  /** @param depth global depth @return the directory's size in bytes */
  public static long directoryBytes(int depth) {
    return ExtendibleDirectory.bytes(depth);
  }

  // ------------------------------------------------------------------ table header

  /** The table header, published into pool root 0. */
  public static final StructLayout TABLE_HEADER =
      MemoryLayout.structLayout(
          U64.withName("magic"),
          U32.withName("layout_version"),
          MemoryLayout.paddingLayout(4),
          U64.withName("directory"),
          MemoryLayout.paddingLayout(40));
  /** Offset of the magic. */
  public static final long HDR_MAGIC = off(TABLE_HEADER, "magic");
  /** Offset of the layout version. */
  public static final long HDR_VERSION = off(TABLE_HEADER, "layout_version");
  /** Offset of the directory offset. */
  public static final long HDR_DIRECTORY = off(TABLE_HEADER, "directory");
  /** "CCEH0001" little-endian. */
  public static final long MAGIC = 0x3130303048454343L;
  /** The layout version recorded in the pool header. */
  public static final int LAYOUT_VERSION = 1;

  // ------------------------------------------------------------------ VarHandles

  /** u32 at (segment, offset). */
  public static final VarHandle INT = U32.varHandle().withInvokeExactBehavior();
  /** u64 at (segment, offset). */
  public static final VarHandle LONG = U64.varHandle().withInvokeExactBehavior();

  private static long off(StructLayout l, String name) {
    return l.byteOffset(MemoryLayout.PathElement.groupElement(name));
  }
}
