package io.pmhash.schemes.dash;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The persistent layouts of Dash-LH (Dash §5, Fig. 6) that differ from Dash-EH's: the segment
 * header, the chained stash bucket, and the table header with its segment-array directory. The
 * bucket is Dash-EH's ({@link DashLayout#BUCKET}, §4.1 Fig. 4) and a segment's buckets start at
 * the same offset ({@link DashLayout#SEG_BUCKETS}), so the bucket and segment code is shared.
 * The normative text is {@code docs/format/dash-lh.md}; {@code DashLhLayoutTest} checks every
 * offset below. A descriptor only, plus the pure arithmetic of the hybrid expansion (§5.2).
 *
 * <h2>Segment (Dash §5.1), 64-byte header then 64 normal and 2..4 stash buckets</h2>
 *
 * <pre>
 *  byte 0     1     2     4         8            16                24              32     36   64
 *       +-----+-----+-----+---------+------------+-----------------+---------------+------+----+
 *       |depth|state| 0   | index   | chain      | recovery version| recovery lock |chain | 0  |
 *       |     |     |     |         | (1st node) |                 |               | lock |    |
 *       +-----+-----+-----+---------+------------+-----------------+---------------+------+----+
 *       |&lt;------- shape word (one u64) --------&gt;|
 *  byte 64: 64 normal buckets (Dash-LH keeps the default segment), then 2..4 stash buckets, 256 B each (as Dash-EH)
 * </pre>
 *
 * The shape word is Dash-EH's encoding ({@link DashLayout#shape}): depth = the number of low
 * segment-hash bits the segment covers, state = {@link #ABSENT} (never created: a segment
 * array's zeroed header before the split that creates it; its buckets are not read) or {@link
 * #LIVE}, pattern = the segment's index. Version and recovery lock sit at Dash-EH's offsets
 * ({@link DashLayout#SEG_VERSION}, {@link DashLayout#SEG_RECOVERY_LOCK}) so that the recovery
 * lock protocol is shared.
 *
 * <h2>Chained stash bucket (Dash §5.1: "a linked list of stash buckets"), 320 bytes</h2>
 *
 * <pre>
 *  byte 0        8                    64                                       320
 *       +--------+--------------------+------------------------------------------+
 *       | next   | 0                  | bucket (Dash §4.1 layout, 256 B)         |
 *       +--------+--------------------+------------------------------------------+
 * </pre>
 *
 * <h2>Table header (pool root 0), 64 bytes then the directory</h2>
 *
 * <pre>
 *  byte 0       8         12            16          20       24               32        40    64
 *       +-------+---------+-------------+-----------+--------+----------------+---------+-----+
 *       | magic | version | stash bkts  | 1st array | stride | global version | N | Next| 0   |
 *       +-------+---------+-------------+-----------+--------+----------------+---------+-----+
 *  byte 64: directory[128] = u64 offset of a segment array, 0 = not allocated  (§5.2)
 *  N|Next (u64, §5.3): [63..32] N (rounds completed) | [31..0] Next (next segment to split)
 * </pre>
 *
 * <h2>Addressing (§5.2, §5.3)</h2>
 *
 * Segment hash {@code x = h >>> 14} (bits 0..7 are the fingerprint, 8..13 the bucket). With
 * {@code L = log2(first array) + N}, segment {@code s = x mod 2^L}, and {@code x mod 2^(L+1)}
 * when {@code s < Next}. Segment index s lives in directory entry 0 (an array of {@code first}
 * segments) for {@code s < first}; after that, group g (g = 0, 1, ...) is {@code stride} entries
 * each holding an array of {@code first << g} segments: fixed-size arrays for {@code stride}
 * expansions, then doubling (hybrid expansion, §5.2).
 */
public final class DashLhLayout {
  private DashLhLayout() {}

  private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;

  // ------------------------------------------------------------------ segment

  /** The 64-byte Dash-LH segment header; buckets follow it. */
  public static final StructLayout SEGMENT_HEADER =
      MemoryLayout.structLayout(
          U8.withName("depth"),
          U8.withName("state"),
          MemoryLayout.paddingLayout(2),
          U32.withName("index"),
          U64.withName("chain"),
          U64.withName("recovery_version"),
          U64.withName("recovery_lock"),
          U32.withName("chain_lock"),
          MemoryLayout.paddingLayout(28));

  /** Offset of the shape word (depth, state, index: one u64). */
  public static final long SEG_SHAPE = 0;
  /** Offset of the first chained stash bucket's node (u64), 0 for none. */
  public static final long SEG_CHAIN = off(SEGMENT_HEADER, "chain");
  /** Offset of the recovery version (u64, Dash §4.8): Dash-EH's. */
  public static final long SEG_VERSION = off(SEGMENT_HEADER, "recovery_version");
  /** Offset of the recovery lock (u64): Dash-EH's. */
  public static final long SEG_RECOVERY_LOCK = off(SEGMENT_HEADER, "recovery_lock");
  /** Offset of the chain lock (u32 version lock): serialises appending to the chain. */
  public static final long SEG_CHAIN_LOCK = off(SEGMENT_HEADER, "chain_lock");

  /** Segment state: the segment was never created (a segment array's zeroed header), or merged away. */
  public static final int ABSENT = 0;
  /** Segment state: created; covers the hashes whose low {@code depth} bits equal its index. */
  public static final int LIVE = 1;

  // ------------------------------------------------------------------ chain node

  /** A chained stash bucket: a next link, then a Dash bucket. */
  public static final StructLayout CHAIN_NODE =
      MemoryLayout.structLayout(
              U64.withName("next"), MemoryLayout.paddingLayout(56), DashLayout.BUCKET.withName("bucket"))
          .withByteAlignment(64);
  /** Offset of the next link (u64), 0 at the end of the chain. */
  public static final long NODE_NEXT = off(CHAIN_NODE, "next");
  /** Offset of the node's bucket. */
  public static final long NODE_BUCKET = off(CHAIN_NODE, "bucket");
  /** Node size: 320. */
  public static final long NODE_BYTES = CHAIN_NODE.byteSize();

  // ------------------------------------------------------------------ table header

  /** Directory entries (segment arrays) in the table header. */
  public static final int DIRECTORY_ENTRIES = 128;
  /** Largest stride (so that at least 7 doubling groups fit the directory). */
  public static final int MAX_STRIDE = 16;
  /** Largest merge bound, percent of one segment's slots (a pair holding more may not fit one segment). */
  public static final int MAX_MERGE_LOAD = 50;
  /** Largest first array. */
  public static final int MAX_FIRST_ARRAY = 1024;

  /** The table header, published into pool root 0; the directory follows at 64. */
  public static final StructLayout TABLE_HEADER =
      MemoryLayout.structLayout(
          U64.withName("magic"),
          U32.withName("layout_version"),
          U32.withName("stash_buckets"),
          U32.withName("first_array"),
          U32.withName("stride"),
          U64.withName("global_version"),
          U64.withName("n_next"),
          U32.withName("merge_load_percent"),
          MemoryLayout.paddingLayout(20),
          MemoryLayout.sequenceLayout(DIRECTORY_ENTRIES, U64).withName("directory"));
  /** Offset of the magic. */
  public static final long HDR_MAGIC = off(TABLE_HEADER, "magic");
  /** Offset of the layout version (u32). */
  public static final long HDR_VERSION = off(TABLE_HEADER, "layout_version");
  /** Offset of the stash bucket count (u32). */
  public static final long HDR_STASH = off(TABLE_HEADER, "stash_buckets");
  /** Offset of the first array's segment count (u32). */
  public static final long HDR_FIRST = off(TABLE_HEADER, "first_array");
  /** Offset of the stride (u32). */
  public static final long HDR_STRIDE = off(TABLE_HEADER, "stride");
  /** Offset of the global version (u64, Dash §4.8). */
  public static final long HDR_GLOBAL_VERSION = off(TABLE_HEADER, "global_version");
  /** Offset of the N|Next word (u64, §5.3). */
  public static final long HDR_N_NEXT = off(TABLE_HEADER, "n_next");
  /** Offset of the merge bound (u32, percent of one segment's slots; 0: never merge). */
  public static final long HDR_MERGE_LOAD = off(TABLE_HEADER, "merge_load_percent");
  /** Offset of directory entry 0. */
  public static final long HDR_DIRECTORY = off(TABLE_HEADER, "directory");
  /** "DASHLH01" little-endian. */
  public static final long MAGIC = 0x3130484c48534144L;
  /** The layout version recorded in the pool header. */
  public static final int LAYOUT_VERSION = 2;

  /** @param nNext an N|Next word @return N */
  public static int roundOf(long nNext) {
    return (int) (nNext >>> 32);
  }

  /** @param nNext an N|Next word @return Next */
  public static long nextOf(long nNext) {
    return nNext & 0xFFFFFFFFL;
  }

  /**
   * @param round N, the rounds completed
   * @param next Next, below {@code 2^(log2(first array) + N)}
   * @return the N|Next word
   */
  public static long nNext(int round, long next) {
    return (long) round << 32 | next;
  }

  /**
   * @param nNext an N|Next word
   * @param firstShift log2 of the first array's segment count
   * @return the segments the word addresses, {@code 2^L + Next}
   */
  public static long segmentsOf(long nNext, int firstShift) {
    return (1L << (firstShift + roundOf(nNext))) + nextOf(nNext);
  }

  /**
   * The depth segment {@code s} must have under an N|Next word: {@code L + 1} below Next or at
   * {@code 2^L} and above, else {@code L}; -1 if the word does not address {@code s}.
   *
   * @param s a segment index
   * @param nNext an N|Next word
   * @param firstShift log2 of the first array's segment count
   * @return the due depth, or -1
   */
  public static int dueDepth(long s, long nNext, int firstShift) {
    int level = firstShift + roundOf(nNext);
    if (s >= segmentsOf(nNext, firstShift)) {
      return -1;
    }
    return s < nextOf(nNext) || s >= 1L << level ? level + 1 : level;
  }

  // ------------------------------------------------------------------ hybrid expansion

  /** Bits of the hash below the segment hash: 8 fingerprint + 6 bucket. */
  public static final int SEGMENT_HASH_SHIFT = 14;

  /**
   * The directory entry of segment {@code s} (§5.2): 0 for {@code s < first}; then group g holds
   * {@code stride} entries of {@code first << g} segments each.
   *
   * @param s a segment index
   * @param firstShift log2 of the first array's segment count
   * @param stride fixed-size expansions before each doubling
   * @return the directory entry
   */
  public static int entryOf(long s, int firstShift, int stride) {
    long t = s - (1L << firstShift);
    if (t < 0) {
      return 0;
    }
    int g = groupOf(t, firstShift, stride);
    long within = t - ((stride * ((1L << g) - 1)) << firstShift);
    return 1 + g * stride + (int) (within >>> (firstShift + g));
  }

  /**
   * @param s a segment index
   * @param firstShift log2 of the first array's segment count
   * @param stride fixed-size expansions before each doubling
   * @return the index of segment {@code s} in its array
   */
  public static long indexInArray(long s, int firstShift, int stride) {
    long t = s - (1L << firstShift);
    if (t < 0) {
      return s;
    }
    int g = groupOf(t, firstShift, stride);
    long within = t - ((stride * ((1L << g) - 1)) << firstShift);
    return within & ((1L << (firstShift + g)) - 1);
  }

  /**
   * @param e a directory entry
   * @param firstShift log2 of the first array's segment count
   * @param stride fixed-size expansions before each doubling
   * @return the segments in the array of directory entry {@code e}
   */
  public static long arraySegments(int e, int firstShift, int stride) {
    return e == 0 ? 1L << firstShift : 1L << (firstShift + (e - 1) / stride);
  }

  /**
   * The inverse of {@link #entryOf}: the segment at index 0 of directory entry {@code e}'s array.
   *
   * @param e a directory entry
   * @param firstShift log2 of the first array's segment count
   * @param stride fixed-size expansions before each doubling
   * @return the first segment number of that array
   */
  public static long firstSegmentOf(int e, int firstShift, int stride) {
    if (e == 0) {
      return 0;
    }
    int g = (e - 1) / stride;
    long j = (e - 1) % stride;
    return (1L << firstShift) + ((stride * ((1L << g) - 1)) << firstShift) + (j << (firstShift + g));
  }

  private static int groupOf(long t, int firstShift, int stride) {
    long u = t >>> firstShift;
    // every lookup's route to its segment passes here: a power-of-two stride (the default 8)
    // shifts instead of a 64-bit division, which costs tens of cycles before the segment's miss
    long q = (stride & (stride - 1)) == 0 ? u >>> Integer.numberOfTrailingZeros(stride) : u / stride;
    return 63 - Long.numberOfLeadingZeros(q + 1);
  }

  private static long off(StructLayout l, String name) {
    return l.byteOffset(MemoryLayout.PathElement.groupElement(name));
  }
}
