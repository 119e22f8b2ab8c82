package io.pmhash.schemes.nvlh;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The persistent layouts of NVLH (Wan et al., "NVLH: Crash-consistent Linear Hashing for
 * Non-Volatile Memory", {@code nvlh-linear-hashing.txt} §II Fig. 1 and §III): the bucket, the
 * segment (an array of primary buckets), the directory and the table header. A descriptor only.
 * The normative text is {@code docs/format/nvlh.md}; {@code NvlhLayoutTest} checks every offset.
 *
 * <h2>Bucket, 128 bytes, 64-byte aligned (primary and overflow buckets alike)</h2>
 *
 * <pre>
 *  byte 0               8               16                                     64
 *       +---------------+---------------+--------------------------------------+
 *       | meta          | next          | slot 0 | slot 1 | slot 2             |
 *       +---------------+---------------+--------------------------------------+
 *  byte 64                                                                   128
 *       +----------------------------------------------------------------------+
 *       | slot 3 | slot 4 | slot 5 | slot 6                                    |
 *       +----------------------------------------------------------------------+
 *  slot = { key: u64 LE | value: u64 LE }  (16 B, never across a cache line)
 *  meta (u64 LE): bits 0..6 = slot i holds a record; bit 7 = in-process flag (§III);
 *                 byte i + 1 (bits 8 + 8i .. 15 + 8i) = slot i's fingerprint, the top byte of
 *                 its key's hash (0 while the slot is free): one 8-byte store commits a record
 *                 and its fingerprint together (layout version 2; version 1 had no fingerprints
 *                 and the flag at bit 63)
 *  next (u64 LE): pool offset of the next overflow bucket of the chain (Fig. 1(b)), or 0
 * </pre>
 *
 * The paper fixes no bucket size; 128 bytes (two cache lines, seven 16-byte pairs) is the
 * bucket of the other schemes in this module (level hashing's), so loads are comparable.
 *
 * <h2>Segments and directory: primary bucket {@code n}</h2>
 *
 * Primary buckets live in segments of {@code 2^segShift} buckets; bucket {@code n} is bucket
 * {@code n & (2^segShift - 1)} of segment {@code g = n >>> segShift}. Segment {@code g}'s
 * offset is entry {@code g + 1 - 2^L} of directory level {@code L = floor(log2(g + 1))}, an
 * array of {@code 2^L} u64 words whose offset is the header's {@code dir[L]}. Neither a
 * bucket nor a directory level ever moves: growing allocates the next segment (and, at a power
 * of two, the next directory level), so the directory grows by doubling without copying.
 *
 * <h2>Table header (pool root 0), 384 bytes</h2>
 *
 * <pre>
 *  byte 0       8         12         16     24      32        40           48           56        64
 *       +-------+---------+----------+------+-------+---------+------------+------------+---------+
 *       | magic | version | segShift | n0   | state | pending | pending to | clean size | clean ov|
 *       +-------+---------+----------+------+-------+---------+------------+------------+---------+
 *  byte 64                                                                                     384
 *       +--------------------------------------------------------------------------------------+
 *       | dir[40]: pool offset of directory level L (2^L segment offsets), or 0                |
 *       +--------------------------------------------------------------------------------------+
 *  state (u64): bits 63..56 = level i (round), bits 55..0 = split pointer p (§II)
 *  pending (u64): 0, or bits 63..62 = 1 split / 2 merge, bits 61..0 = source bucket
 * </pre>
 */
public final class NvlhLayout {
  private NvlhLayout() {}

  private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

  // ------------------------------------------------------------------ bucket

  /** Record slots per bucket. */
  public static final int SLOTS = 7;
  /** The meta bits of all slots. */
  public static final long ALL_SLOTS = (1L << SLOTS) - 1;
  /** The in-process flag (§III): the bucket is the source or target of an unfinished split or merge. */
  public static final long IN_PROCESS = 1L << 7;
  /** The bit where slot 0's fingerprint byte starts; slot {@code i}'s starts {@code 8 i} above. */
  public static final int FP_SHIFT = 8;

  /**
   * A key's fingerprint: the top byte of its hash (the low bits choose its bucket, so they are
   * the same for every key of a chain and would tell nothing apart).
   *
   * @param h the key's hash
   * @return 0..255
   */
  public static int fingerprint(long h) {
    return (int) (h >>> 56);
  }

  /**
   * @param slot 0..6
   * @param fp a fingerprint
   * @return the meta bits of a record of fingerprint {@code fp} in {@code slot}: its bit and its byte
   */
  public static long slotBits(int slot, int fp) {
    return 1L << slot | (long) fp << (FP_SHIFT + 8 * slot);
  }

  /**
   * @param meta a meta word
   * @param slot 0..6
   * @return the fingerprint byte of {@code slot}
   */
  public static int fingerprintAt(long meta, int slot) {
    return (int) (meta >>> (FP_SHIFT + 8 * slot)) & 0xFF;
  }

  /**
   * @param meta a meta word
   * @param slots a mask of slot bits
   * @return {@code meta} with those slots free: their bits and fingerprint bytes cleared
   */
  public static long withoutSlots(long meta, long slots) {
    long out = meta;
    for (long b = slots & ALL_SLOTS; b != 0; b &= b - 1) {
      out &= ~slotBits(Long.numberOfTrailingZeros(b), 0xFF);
    }
    return out;
  }

  /** One record slot: key then value, both u64 LE. */
  public static final StructLayout PAIR = MemoryLayout.structLayout(U64.withName("key"), U64.withName("value"));

  /** The 128-byte bucket. */
  public static final StructLayout BUCKET =
      MemoryLayout.structLayout(
              U64.withName("meta"),
              U64.withName("next"),
              MemoryLayout.sequenceLayout(SLOTS, PAIR).withName("slots"))
          .withByteAlignment(64);

  /** Size of a pair: 16. */
  public static final long PAIR_BYTES = PAIR.byteSize();
  /** Offset of the key in a pair: 0. */
  public static final long PAIR_KEY = off(PAIR, "key");
  /** Offset of the value in a pair: 8. */
  public static final long PAIR_VALUE = off(PAIR, "value");
  /** Size of a bucket: 128. */
  public static final long BUCKET_BYTES = BUCKET.byteSize();
  /** Cache lines per bucket: 2. */
  public static final int BUCKET_LINES = (int) BUCKET_BYTES / 64;
  /** log2 of the bucket size. */
  public static final int BUCKET_SHIFT = 7;
  /** Offset of the meta word: 0. */
  public static final long META = off(BUCKET, "meta");
  /** Offset of the next-bucket word: 8. */
  public static final long NEXT = off(BUCKET, "next");
  /** Offset of slot 0: 16. */
  public static final long SLOT0 = off(BUCKET, "slots");

  /**
   * @param bucket a bucket offset
   * @param slot 0..6
   * @return the pool offset of the slot's key
   */
  public static long slotOffset(long bucket, int slot) {
    return bucket + SLOT0 + PAIR_BYTES * slot;
  }

  // ------------------------------------------------------------------ state word

  /** Bits of the split pointer in the state word. */
  public static final int P_BITS = 56;
  /** Mask of the split pointer. */
  public static final long P_MASK = (1L << P_BITS) - 1;

  /**
   * @param level the round i
   * @param p the split pointer
   * @return the state word
   */
  public static long state(int level, long p) {
    return ((long) level << P_BITS) | p;
  }

  /**
   * @param state a state word
   * @return its level i
   */
  public static int level(long state) {
    return (int) (state >>> P_BITS);
  }

  /**
   * @param state a state word
   * @return its split pointer p
   */
  public static long splitPointer(long state) {
    return state & P_MASK;
  }

  /** Pending kind: a split. */
  public static final long PENDING_SPLIT = 1L << 62;
  /** Pending kind: a merge. */
  public static final long PENDING_MERGE = 2L << 62;
  /** Mask of the pending kind. */
  public static final long PENDING_KIND = 3L << 62;

  // ------------------------------------------------------------------ directory

  /** Directory levels in the header: up to 2^40 - 1 segments. */
  public static final int DIR_LEVELS = 40;
  /** Smallest segment: 2^MIN_SEG_SHIFT buckets. */
  public static final int MIN_SEG_SHIFT = 1;
  /** Largest segment: 2^MAX_SEG_SHIFT buckets (32 KiB: the largest run block of the default chunk). */
  public static final int MAX_SEG_SHIFT = 8;

  /**
   * @param segment a segment number
   * @return its directory level: floor(log2(segment + 1))
   */
  public static int dirLevel(long segment) {
    return 63 - Long.numberOfLeadingZeros(segment + 1);
  }

  /**
   * @param segment a segment number
   * @return its index in its directory level
   */
  public static long dirIndex(long segment) {
    return segment + 1 - (1L << dirLevel(segment));
  }

  // ------------------------------------------------------------------ table header

  /** The table header, published into pool root 0. */
  public static final StructLayout TABLE_HEADER =
      MemoryLayout.structLayout(
              U64.withName("magic"),
              U32.withName("layout_version"),
              U32.withName("seg_shift"),
              U64.withName("n0"),
              U64.withName("state"),
              U64.withName("pending"),
              U64.withName("pending_to"),
              U64.withName("clean_size"),
              U64.withName("clean_overflow"),
              MemoryLayout.sequenceLayout(DIR_LEVELS, U64).withName("dir"))
          .withByteAlignment(64);
  /** Offset of the magic. */
  public static final long HDR_MAGIC = off(TABLE_HEADER, "magic");
  /** Offset of the layout version. */
  public static final long HDR_VERSION = off(TABLE_HEADER, "layout_version");
  /** Offset of log2 of the buckets per segment. */
  public static final long HDR_SEG_SHIFT = off(TABLE_HEADER, "seg_shift");
  /** Offset of n0, the buckets of round 0 (a power of two). */
  public static final long HDR_N0 = off(TABLE_HEADER, "n0");
  /** Offset of the state word (level and split pointer). */
  public static final long HDR_STATE = off(TABLE_HEADER, "state");
  /** Offset of the pending word (the split or merge in progress). */
  public static final long HDR_PENDING = off(TABLE_HEADER, "pending");
  /** Offset of the pending operation's target bucket. */
  public static final long HDR_PENDING_TO = off(TABLE_HEADER, "pending_to");
  /** Offset of the record count written at a clean close. */
  public static final long HDR_CLEAN_SIZE = off(TABLE_HEADER, "clean_size");
  /** Offset of the overflow-bucket count written at a clean close. */
  public static final long HDR_CLEAN_OVERFLOW = off(TABLE_HEADER, "clean_overflow");
  /** Offset of dir[0]. */
  public static final long HDR_DIR = off(TABLE_HEADER, "dir");
  /** "NVLH0001" little-endian. */
  public static final long MAGIC = 0x31303030484C564EL;
  /** The layout version recorded in the pool header. */
  public static final int LAYOUT_VERSION = 2;

  // ------------------------------------------------------------------ VarHandles

  /** u32 at (segment, offset). */
  public static final VarHandle INT = U32.varHandle().withInvokeExactBehavior();
  /** u64 at (segment, offset). */
  public static final VarHandle LONG = U64.varHandle().withInvokeExactBehavior();

  private static long off(StructLayout l, String name) {
    return l.byteOffset(MemoryLayout.PathElement.groupElement(name));
  }
}
