package io.pmhash.schemes.dash;

import io.pmhash.schemes.internal.ExtendibleDirectory;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The persistent layouts of Dash-EH (Dash §4.1, Fig. 3 and Fig. 4): the 256-byte bucket, the
 * segment, the directory and the table header. A descriptor only: offsets, sizes and {@code
 * static final} VarHandles over {@code (MemorySegment, long offset)}; no logic. The normative
 * text is {@code docs/format/dash-eh.md}; {@code DashLayoutTest} checks every offset below
 * against the paper's numbers.
 *
 * <h2>Bucket (Dash §4.1, Fig. 4), 256 bytes, 64-byte aligned</h2>
 *
 * <pre>
 *  byte 0        4        8                          26 27 28 29 30  32
 *       +--------+--------+--------------------------+--+--+--+--+----+
 *       |version | bitmap | fingerprints[18]         |ob|oi|om|oc|pad |
 *       |  lock  |        | [0..13] slot [14..17] ovf|  |  |  |  |    |
 *       +--------+--------+--------------------------+--+--+--+--+----+
 *  byte 32                                                         256
 *       +------------------------------------------------------------+
 *       | pairs[14] = { key: u64 LE | value: u64 LE }   (16 B each)  |
 *       +------------------------------------------------------------+
 *  version lock (u32): [31] lock | [30..0] version        (Dash §4.4)
 *  bitmap (u32): [31..18] allocation | [17..4] membership | [3..0] count
 *  ob = overflow bitmap (u8): [3..0] overflow fingerprint valid | [4] check the stash
 *  oi = overflow index (u8): 2 bits per overflow fingerprint: which stash bucket
 *  om = overflow membership (u8): [3..0] the overflow record's target is the bucket before
 *  oc = overflow count (u8): overflow records of this bucket without an overflow fingerprint
 * </pre>
 *
 * Deviation: the authors' C++ bucket carries a 48-byte pad to undo PMDK's 16-byte object header;
 * pmhash's allocator has no header, so there is none.
 *
 * <h2>Segment (Dash §4.1, Fig. 3; §4.7, §4.8)</h2>
 *
 * <pre>
 *  byte 0     1     2     4         8            16                24              32     40   64
 *       +-----+-----+-----+---------+------------+-----------------+---------------+------+----+
 *       |depth|state| 0   | pattern | side link  | recovery version| recovery lock |victim| 0  |
 *       +-----+-----+-----+---------+------------+-----------------+---------------+------+----+
 *       |&lt;------- shape word (one u64) --------&gt;|
 *  byte 64: n normal buckets (64 by default; the table header's count), then 2..4 stash buckets, 256 B each
 * </pre>
 *
 * The shape word holds local depth (u8), SMO state (u8) and pattern (u32, the segment's hash
 * prefix of {@code depth} bits) so that a split changes all three with one 8-byte atomic store.
 *
 * <h2>Directory (Dash §4.7: indexed by the most significant bits)</h2>
 *
 * <pre>
 *  byte 0              4          64
 *       +--------------+----------+----------------------------------------+
 *       | global depth | 0        | entries[2^depth]: u64 segment offset   |
 *       +--------------+----------+----------------------------------------+
 *  entry = h &gt;&gt;&gt; (64 - depth); bucket = (h &gt;&gt;&gt; 8) &amp; (n - 1); fingerprint = h &amp; 0xFF
 * </pre>
 *
 * <h2>Table header (pool root 0), 64 bytes</h2>
 *
 * <pre>
 *  byte 0       8         12             16          24               32         36       40   64
 *       +-------+---------+--------------+-----------+----------------+----------+--------+----+
 *       | magic | version | stash buckets| directory | global version | key mode | normal | 0  |
 *       +-------+---------+--------------+-----------+----------------+----------+--------+----+
 *  key mode (u32): 0 inline (a slot holds key and value), 1 pointer mode (Dash §4.5)
 *  normal (u32): normal buckets per segment, a power of two 4..512 (0 in older pools: 64)
 * </pre>
 *
 * <h2>Pointer mode (Dash §4.5)</h2>
 *
 * A slot's pair holds {@code { key: u64 offset of an OutOfLineRecord | value: u64 the key's full
 * hash }}: probing compares the fingerprint, then the full hash in the slot, and loads the
 * record's key bytes only when both match; splits, merges and recovery rehash from the slot,
 * never from the record. The record format is {@link io.pmhash.map.spi.OutOfLineRecord}.
 */
public final class DashLayout {
  private DashLayout() {}

  private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;

  // ------------------------------------------------------------------ bucket

  /** Record slots per bucket. */
  public static final int SLOTS = 14;
  /** Overflow fingerprints per bucket. */
  public static final int OVERFLOW_SLOTS = 4;
  /** Fingerprints per bucket: 14 for slots, 4 for overflow records. */
  public static final int FINGERPRINTS = SLOTS + OVERFLOW_SLOTS;

  /** One record slot: key then value, both u64 LE. */
  public static final StructLayout PAIR =
      MemoryLayout.structLayout(U64.withName("key"), U64.withName("value"));

  /** The 256-byte bucket of Dash §4.1, Fig. 4. */
  public static final StructLayout BUCKET =
      MemoryLayout.structLayout(
              U32.withName("version_lock"),
              U32.withName("bitmap"),
              MemoryLayout.sequenceLayout(FINGERPRINTS, U8).withName("fingerprints"),
              U8.withName("overflow_bitmap"),
              U8.withName("overflow_index"),
              U8.withName("overflow_membership"),
              U8.withName("overflow_count"),
              MemoryLayout.paddingLayout(2),
              MemoryLayout.sequenceLayout(SLOTS, PAIR).withName("pairs"))
          .withByteAlignment(64);

  /** Bucket size: 256. */
  public static final long BUCKET_BYTES = BUCKET.byteSize();
  /** Cache lines per bucket: 4. */
  public static final int BUCKET_LINES = (int) BUCKET_BYTES / 64;
  /** Offset of the version lock (u32). */
  public static final long LOCK = off(BUCKET, "version_lock");
  /** Offset of the bitmap (u32): count, membership, allocation. */
  public static final long BITMAP = off(BUCKET, "bitmap");
  /** Offset of fingerprint 0. */
  public static final long FP = off(BUCKET, "fingerprints");
  /** Offset of overflow fingerprint 0 (fingerprint 14). */
  public static final long OVF_FP = FP + SLOTS;
  /** Offset of the overflow bitmap (u8). */
  public static final long OVF_BITMAP = off(BUCKET, "overflow_bitmap");
  /** Offset of the overflow index (u8). */
  public static final long OVF_INDEX = off(BUCKET, "overflow_index");
  /** Offset of the overflow membership (u8). */
  public static final long OVF_MEMBER = off(BUCKET, "overflow_membership");
  /** Offset of the overflow count (u8). */
  public static final long OVF_COUNT = off(BUCKET, "overflow_count");
  /** Offset of pair 0. */
  public static final long PAIRS = off(BUCKET, "pairs");
  /** Size of a pair. */
  public static final long PAIR_BYTES = PAIR.byteSize();

  /** Bitmap bits 0..3: the record count. */
  public static final int COUNT_MASK = 0xF;
  /** Bitmap: the membership bit of slot 0 (slot i is {@code << i}). */
  public static final int MEMBER_SHIFT = 4;
  /** Bitmap: the allocation bit of slot 0 (slot i is {@code << i}). */
  public static final int ALLOC_SHIFT = 18;
  /** All 14 slots. */
  public static final int SLOT_MASK = (1 << SLOTS) - 1;
  /** Overflow bitmap bit 4: the overflow count is positive, probe every stash bucket. */
  public static final int STASH_FLAG = 1 << 4;
  /** Overflow bitmap bits 0..3: overflow fingerprint j is valid. */
  public static final int OVF_VALID_MASK = 0xF;

  // ------------------------------------------------------------------ segment

  /**
   * Normal buckets per segment by default, and always in Dash-LH (bucket = {@code (h >>> 8) &
   * 63}): the 16 KB segment of Dash §6.2. A Dash-EH table records its own count, a power of two
   * from {@link #MIN_NORMAL_BUCKETS} to {@link #MAX_NORMAL_BUCKETS}, in its header (bucket =
   * {@code (h >>> 8) & (n - 1)}).
   */
  public static final int NORMAL_BUCKETS = 64;
  /**
   * Fewest normal buckets (1 KB, the smallest segment of Dash Fig. 11): a target, its probing
   * bucket and the two displacement neighbours {@code y - 1}, {@code y + 2} stay four distinct
   * buckets.
   */
  public static final int MIN_NORMAL_BUCKETS = 4;
  /** Most normal buckets (128 KB, the largest segment of Dash Fig. 11). */
  public static final int MAX_NORMAL_BUCKETS = 512;
  /** Fewest stash buckets. */
  public static final int MIN_STASH = 2;
  /** Most stash buckets (the 2-bit overflow index). */
  public static final int MAX_STASH = 4;

  /** The 64-byte segment header; buckets follow it. */
  public static final StructLayout SEGMENT_HEADER =
      MemoryLayout.structLayout(
          U8.withName("local_depth"),
          U8.withName("smo_state"),
          MemoryLayout.paddingLayout(2),
          U32.withName("pattern"),
          U64.withName("side_link"),
          U64.withName("recovery_version"),
          U64.withName("recovery_lock"),
          U64.withName("merge_victim"),
          MemoryLayout.paddingLayout(24));

  /** Offset of the shape word (depth, state, pattern: one u64). */
  public static final long SEG_SHAPE = 0;
  /** Offset of the local depth (u8, within the shape word). */
  public static final long SEG_DEPTH = off(SEGMENT_HEADER, "local_depth");
  /** Offset of the SMO state (u8, within the shape word). */
  public static final long SEG_STATE = off(SEGMENT_HEADER, "smo_state");
  /** Offset of the pattern (u32, within the shape word). */
  public static final long SEG_PATTERN = off(SEGMENT_HEADER, "pattern");
  /** Offset of the side link (u64): the right neighbour's offset, 0 for the last segment. */
  public static final long SEG_SIDE = off(SEGMENT_HEADER, "side_link");
  /** Offset of the recovery version (u64, Dash §4.8). */
  public static final long SEG_VERSION = off(SEGMENT_HEADER, "recovery_version");
  /** Offset of the recovery lock (u64): {@code 2 * version + 1} while held in that version. */
  public static final long SEG_RECOVERY_LOCK = off(SEGMENT_HEADER, "recovery_lock");
  /** Offset of the merge victim (u64): the right buddy a MERGING segment absorbed, until freed. */
  public static final long SEG_VICTIM = off(SEGMENT_HEADER, "merge_victim");
  /** Offset of bucket 0. */
  public static final long SEG_BUCKETS = SEGMENT_HEADER.byteSize();

  /** SMO state: not in a structural change. */
  public static final int NORMAL = 0;
  /** SMO state: being split; records of the right half may still be here (Dash §4.7). */
  public static final int SPLITTING = 1;
  /** SMO state: the new right half of a split not yet finished (Dash §4.7). */
  public static final int NEW = 2;
  /** SMO state: the left buddy of a merge in progress (Dash §4.7). */
  public static final int MERGING = 3;
  /** SMO state: the right buddy of a merge, absorbed by its left buddy; covers nothing. */
  public static final int MERGED = 4;

  /**
   * @param stashBuckets 2..4
   * @return the size in bytes of a segment of {@link #NORMAL_BUCKETS} normal buckets
   */
  public static long segmentBytes(int stashBuckets) {
    return segmentBytes(NORMAL_BUCKETS, stashBuckets);
  }

  /**
   * @param normalBuckets normal buckets, {@link #MIN_NORMAL_BUCKETS}..{@link #MAX_NORMAL_BUCKETS}
   * @param stashBuckets 2..4
   * @return the segment size in bytes
   */
  public static long segmentBytes(int normalBuckets, int stashBuckets) {
    return SEG_BUCKETS + (long) (normalBuckets + stashBuckets) * BUCKET_BYTES;
  }

  /**
   * @param depth local depth
   * @param state SMO state
   * @param pattern hash prefix of {@code depth} bits
   * @return the shape word
   */
  public static long shape(int depth, int state, long pattern) {
    return (depth & 0xFFL) | (long) (state & 0xFF) << 8 | pattern << 32;
  }

  /** @param shape a shape word @return its local depth */
  public static int depthOf(long shape) {
    return (int) (shape & 0xFF);
  }

  /** @param shape a shape word @return its SMO state */
  public static int stateOf(long shape) {
    return (int) (shape >>> 8) & 0xFF;
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

  // ------------------------------------------------------------------ directory

  /** Directory header; entries follow at {@link #DIR_ENTRIES}. */
  public static final StructLayout DIRECTORY_HEADER =
      ExtendibleDirectory.HEADER;
  /** Offset of the global depth (u32). */
  public static final long DIR_DEPTH = ExtendibleDirectory.DEPTH;
  /** Offset of entry 0. */
  public static final long DIR_ENTRIES = ExtendibleDirectory.ENTRIES;
  /** Largest global depth (so that pattern 0xFFFFFFFF, a MERGED segment's, matches no hash). */
  public static final int MAX_GLOBAL_DEPTH = ExtendibleDirectory.MAX_DEPTH;

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
          U32.withName("stash_buckets"),
          U64.withName("directory"),
          U64.withName("global_version"),
          U32.withName("key_mode"),
          U32.withName("normal_buckets"),
          MemoryLayout.paddingLayout(24));
  /** Offset of the magic. */
  public static final long HDR_MAGIC = off(TABLE_HEADER, "magic");
  /** Offset of the layout version. */
  public static final long HDR_VERSION = off(TABLE_HEADER, "layout_version");
  /** Offset of the stash bucket count. */
  public static final long HDR_STASH = off(TABLE_HEADER, "stash_buckets");
  /** Offset of the directory offset. */
  public static final long HDR_DIRECTORY = off(TABLE_HEADER, "directory");
  /** Offset of the global version (Dash §4.8). */
  public static final long HDR_GLOBAL_VERSION = off(TABLE_HEADER, "global_version");
  /** Offset of the key mode (u32): {@link #KEY_MODE_INLINE} or {@link #KEY_MODE_POINTER}. */
  public static final long HDR_KEY_MODE = off(TABLE_HEADER, "key_mode");
  /**
   * Offset of the normal bucket count (u32): a power of two 4..512; 0 in a pool made before the
   * field existed, which means {@link #NORMAL_BUCKETS}.
   */
  public static final long HDR_NORMAL = off(TABLE_HEADER, "normal_buckets");
  /** Key mode: 8-byte keys and values in the slots. */
  public static final int KEY_MODE_INLINE = 0;
  /** Key mode: the slot holds a record offset and the key's hash (Dash §4.5). */
  public static final int KEY_MODE_POINTER = 1;
  /** "DASHEH01" little-endian. */
  public static final long MAGIC = 0x3130484548534144L;
  /** The layout version recorded in the pool header. */
  public static final int LAYOUT_VERSION = 1;

  // ------------------------------------------------------------------ VarHandles

  /** u32 at (segment, offset). */
  public static final VarHandle INT = U32.varHandle().withInvokeExactBehavior();
  /** u64 at (segment, offset). */
  public static final VarHandle LONG = U64.varHandle().withInvokeExactBehavior();
  /** u16 at (segment, offset). */
  public static final VarHandle SHORT = U16.varHandle().withInvokeExactBehavior();
  /** u8 at (segment, offset). */
  public static final VarHandle BYTE = U8.varHandle().withInvokeExactBehavior();

  private static long off(StructLayout l, String name) {
    return l.byteOffset(MemoryLayout.PathElement.groupElement(name));
  }
}
