package io.pmhash.schemes.esh;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The persistent layouts of ESH (Regassa, "Efficient and Scalable Hashing Scheme for Persistent
 * Memory", SNU dissertation 2023, chapter 4: §4.3.2, Fig. 4.1, §4.4.1) and of its predecessor
 * ACCEH (chapter 3) as a configuration of the same layout: the bucket, the segment and the table
 * header. The directory is {@link io.pmhash.schemes.internal.ExtendibleDirectory}'s. A descriptor
 * only: offsets, sizes and {@code static final} VarHandles over {@code (MemorySegment, long
 * offset)}; no logic. The normative text is {@code docs/format/esh.md}; {@code EshLayoutTest}
 * checks every offset below.
 *
 * <h2>Bucket (§4.3.2, Fig. 4.1): 32 bytes of metadata, then the records; 64-byte aligned</h2>
 *
 * <pre>
 *  byte 0        4        8                 16                24                32
 *       +--------+--------+-----------------+-----------------+-----------------+
 *       |version | state  | commit word     | OFRB            | fingerprints    |
 *       |  lock  |        | (bits below)    | neighbour bitmap| 14 x 4 bits     |
 *       +--------+--------+-----------------+-----------------+-----------------+
 *  byte 32                                                   32 + 16 * pairs
 *       +------------------------------------------------------------+
 *       | pairs[14] (ESH, 256 B) or pairs[2] (ACCEH, 64 B)            |
 *       |   = { key: u64 LE | value: u64 LE }   (16 B each)          |
 *       +------------------------------------------------------------+
 *  version lock (u32): [31] lock bit (§4.3.2 "Locking") | [30..0] version for optimistic readers
 *  state (u32): low 32 bits of the recovery epoch in which the bucket was last made consistent;
 *               any other value is the paper's state = 1, "not correctly closed"
 *  commit word (u64): [13..0] allocated slots | [29..16] foreign slots (the record's home is
 *               another bucket) | [35..32] MC member count | [36] OB overflow bit (MC = pairs)
 *               | [63..48] OC overflow count: this bucket's records stored in other buckets
 *  OFRB (u64): bit j = bucket j of the segment may hold records of this bucket (§4.3.2 "OFRB")
 *  fingerprints (u64): nibble i = low 4 bits of the hash of slot i's key
 * </pre>
 *
 * Deviations from Fig. 4.1: the paper's 8-byte member count is 4 bits of the commit word, so that
 * membership, MC, OB and OC change together in one 8-byte failure-atomic store; the lock and the
 * state are 4-byte words rather than bits (the lock is Dash's version lock, so readers are
 * optimistic); OFRB is a bitmap over the segment's buckets (the paper: "variable size and
 * configurable according to the maximum number of the neighbouring bucket"), hence at most 64
 * buckets per segment; the fingerprints are ours (the paper's "header information" a search checks
 * before the records).
 *
 * <h2>Segment (§4.3.1, Fig. 4.2)</h2>
 *
 * <pre>
 *  byte 0          8             16              24             32                     64
 *       +----------+-------------+---------------+--------------+----------------------+
 *       | shape    | split child | split parent  | recovery lock| 0                    |
 *       +----------+-------------+---------------+--------------+----------------------+
 *  byte 64: buckets[bucketsPerSegment], bucketBytes each
 *  shape (u64): [7..0] local depth | [63..32] pattern (the top depth bits of its hashes)
 * </pre>
 *
 * <h2>Table header (pool root 0), 64 bytes</h2>
 *
 * <pre>
 *  byte 0       8         12            16                  20    24          32               40  64
 *       +-------+---------+-------------+-------------------+-----+-----------+----------------+---+
 *       | magic | version | bucket bytes| buckets / segment | 0   | directory | global version | 0 |
 *       +-------+---------+-------------+-------------------+-----+-----------+----------------+---+
 * </pre>
 *
 * Hash bits: directory entry = the top {@code g} bits; bucket = {@code (h >>> 8) & (buckets - 1)};
 * fingerprint = {@code h & 15}.
 */
public final class EshLayout {
  private EshLayout() {}

  private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

  // ------------------------------------------------------------------ bucket

  /** Pairs of an ESH bucket (§4.3.2: 224 bytes of records). */
  public static final int ESH_PAIRS = 14;
  /** Pairs of an ACCEH bucket in this layout (64 bytes = 32 B metadata + 2 pairs). */
  public static final int ACCEH_PAIRS = 2;

  /** One record slot: key then value, both u64 LE. */
  public static final StructLayout PAIR =
      MemoryLayout.structLayout(U64.withName("key"), U64.withName("value"));

  /** The 32 bytes of bucket metadata (§4.3.2). */
  public static final StructLayout META =
      MemoryLayout.structLayout(
          U32.withName("version_lock"),
          U32.withName("state"),
          U64.withName("commit"),
          U64.withName("ofrb"),
          U64.withName("fingerprints"));

  /**
   * @param pairs records per bucket, 1..14
   * @return the bucket of that many pairs
   */
  public static StructLayout bucket(int pairs) {
    return MemoryLayout.structLayout(META.withName("meta"), MemoryLayout.sequenceLayout(pairs, PAIR).withName("pairs"))
        .withByteAlignment(64);
  }

  /** The 256-byte ESH bucket of Fig. 4.1. */
  public static final StructLayout ESH_BUCKET = bucket(ESH_PAIRS);
  /** The 64-byte ACCEH bucket (one cache line, §3.4.1). */
  public static final StructLayout ACCEH_BUCKET = bucket(ACCEH_PAIRS);

  /** Offset of the version lock (u32). */
  public static final long LOCK = off(META, "version_lock");
  /** Offset of the state (u32). */
  public static final long STATE = off(META, "state");
  /** Offset of the commit word (u64). */
  public static final long COMMIT = off(META, "commit");
  /** Offset of the OFRB neighbour bitmap (u64). */
  public static final long OFRB = off(META, "ofrb");
  /** Offset of the fingerprint word (u64). */
  public static final long FPS = off(META, "fingerprints");
  /** Offset of pair 0. */
  public static final long PAIRS = META.byteSize();
  /** Size of a pair: 16. */
  public static final long PAIR_BYTES = PAIR.byteSize();
  /** Offset of the key in a pair. */
  public static final long PAIR_KEY = off(PAIR, "key");
  /** Offset of the value in a pair. */
  public static final long PAIR_VALUE = off(PAIR, "value");

  /** Commit word: shift of the foreign-slot bits. */
  public static final int FOREIGN_SHIFT = 16;
  /** Commit word: shift of the member count (4 bits). */
  public static final int MC_SHIFT = 32;
  /** Commit word: the overflow bit. */
  public static final long OB = 1L << 36;
  /** Commit word: shift of the overflow count (16 bits). */
  public static final int OC_SHIFT = 48;
  /** Mask of 14 slot bits. */
  public static final int SLOT_MASK = 0x3FFF;

  /**
   * @param alloc allocated slots
   * @param foreign foreign slots (a subset of {@code alloc})
   * @param oc overflow count, 0..65535
   * @param pairs slots per bucket
   * @return the commit word: MC and OB derived from {@code alloc}
   */
  public static long commit(int alloc, int foreign, int oc, int pairs) {
    int mc = Integer.bitCount(alloc);
    return (alloc & SLOT_MASK) | (long) (foreign & SLOT_MASK) << FOREIGN_SHIFT | (long) mc << MC_SHIFT
        | (mc == pairs ? OB : 0) | (long) oc << OC_SHIFT;
  }

  /** @param c a commit word @return its allocated slots */
  public static int alloc(long c) {
    return (int) c & SLOT_MASK;
  }

  /** @param c a commit word @return its foreign slots */
  public static int foreign(long c) {
    return (int) (c >>> FOREIGN_SHIFT) & SLOT_MASK;
  }

  /** @param c a commit word @return its home slots: allocated and not foreign */
  public static int home(long c) {
    return (int) (c & ~(c >>> FOREIGN_SHIFT)) & SLOT_MASK;
  }

  /** @param c a commit word @return its member count */
  public static int memberCount(long c) {
    return (int) (c >>> MC_SHIFT) & 0xF;
  }

  /** @param c a commit word @return its overflow bit: the bucket is full */
  public static boolean full(long c) {
    return (c & OB) != 0;
  }

  /** @param c a commit word @return its overflow count */
  public static int overflowCount(long c) {
    return (int) (c >>> OC_SHIFT);
  }

  /** @param c a commit word @param oc a new overflow count @return the word with it */
  public static long withOverflowCount(long c, int oc) {
    return (c & ~(0xFFFFL << OC_SHIFT)) | (long) oc << OC_SHIFT;
  }

  /** @param h a hash @return its 4-bit fingerprint */
  public static int fingerprint(long h) {
    return (int) h & 15;
  }

  /** @param fps a fingerprint word @param slot a slot @return the slot's fingerprint */
  public static int fingerprintAt(long fps, int slot) {
    return (int) (fps >>> (4 * slot)) & 15;
  }

  /** @param fps a fingerprint word @param slot a slot @param fp a fingerprint @return the word with it */
  public static long withFingerprint(long fps, int slot, int fp) {
    return (fps & ~(15L << (4 * slot))) | (long) fp << (4 * slot);
  }

  // ------------------------------------------------------------------ segment

  /** The 64-byte segment header. */
  public static final StructLayout SEGMENT_HEADER =
      MemoryLayout.structLayout(
          U64.withName("shape"),
          U64.withName("split_child"),
          U64.withName("split_parent"),
          U64.withName("recovery_lock"),
          MemoryLayout.paddingLayout(32));
  /** Offset of the shape word (u64). */
  public static final long SEG_SHAPE = off(SEGMENT_HEADER, "shape");
  /** Offset of the split child (u64): the new segment of a split in progress, else 0. */
  public static final long SEG_CHILD = off(SEGMENT_HEADER, "split_child");
  /** Offset of the split parent (u64): in a split's new segment, the old one until the split is done. */
  public static final long SEG_PARENT = off(SEGMENT_HEADER, "split_parent");
  /** Offset of the recovery lock (u64): {@code 2 * version + 1} while held in that version. */
  public static final long SEG_RECOVERY_LOCK = off(SEGMENT_HEADER, "recovery_lock");
  /** Offset of bucket 0. */
  public static final long SEG_BUCKETS = SEGMENT_HEADER.byteSize();

  /** Default buckets per segment: 64, the 16 KB segment of §4.4.1 (see docs/format/esh.md). */
  public static final int DEFAULT_BUCKETS = 64;
  /** Most buckets per segment: the OFRB bitmap has 64 bits. */
  public static final int MAX_BUCKETS = 64;

  /**
   * @param bucketBytes bytes per bucket
   * @param buckets buckets per segment
   * @return the segment's size
   */
  public static long segmentBytes(long bucketBytes, int buckets) {
    return SEG_BUCKETS + bucketBytes * buckets;
  }

  /**
   * @param depth local depth, 0..31
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

  // ------------------------------------------------------------------ table header

  /** The table header, published into pool root 0. */
  public static final StructLayout TABLE_HEADER =
      MemoryLayout.structLayout(
          U64.withName("magic"),
          U32.withName("layout_version"),
          U32.withName("bucket_bytes"),
          U32.withName("buckets_per_segment"),
          MemoryLayout.paddingLayout(4),
          U64.withName("directory"),
          U64.withName("global_version"),
          MemoryLayout.paddingLayout(24));
  /** Offset of the magic. */
  public static final long HDR_MAGIC = off(TABLE_HEADER, "magic");
  /** Offset of the layout version. */
  public static final long HDR_VERSION = off(TABLE_HEADER, "layout_version");
  /** Offset of the bucket size. */
  public static final long HDR_BUCKET_BYTES = off(TABLE_HEADER, "bucket_bytes");
  /** Offset of the buckets per segment. */
  public static final long HDR_BUCKETS = off(TABLE_HEADER, "buckets_per_segment");
  /** Offset of the directory offset. */
  public static final long HDR_DIRECTORY = off(TABLE_HEADER, "directory");
  /** Offset of the global version (the recovery epoch the buckets' states are compared with). */
  public static final long HDR_GLOBAL_VERSION = off(TABLE_HEADER, "global_version");
  /** "ESH00001" little-endian. */
  public static final long MAGIC = 0x3130303030485345L;
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
