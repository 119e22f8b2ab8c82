package io.pmhash.schemes.level;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The persistent layouts of level hashing (Zuo, Hua, Wu — "Write-Optimized and High-Performance
 * Hashing Index Scheme for Persistent Memory", OSDI'18, §3.1 Fig. 2 and §3.3; summarised in
 * {@code strata-level-hashing.txt} §3) in the configuration Dash evaluated (Dash §6.1: 128-byte
 * buckets, two cache lines): the bucket, a level (an array of buckets) and the table header. A
 * descriptor only: offsets, sizes and {@code static final} VarHandles over {@code (MemorySegment,
 * long offset)}; no logic. The normative text is {@code docs/format/level.md}; {@code
 * LevelLayoutTest} checks every offset below.
 *
 * <h2>Bucket, 128 bytes, 64-byte aligned (two cache lines)</h2>
 *
 * <pre>
 *  byte 0               8               16                                     64
 *       +---------------+---------------+--------------------------------------+
 *       | token word    | 0 (reserved)  | slot 0 | slot 1 | slot 2             |
 *       +---------------+---------------+--------------------------------------+
 *  byte 64                                                                   128
 *       +----------------------------------------------------------------------+
 *       | slot 3 | slot 4 | slot 5 | slot 6                                    |
 *       +----------------------------------------------------------------------+
 *  slot = { key: u64 LE | value: u64 LE }  (16 B, never across a cache line)
 *  token word (u64 LE): bit i (0..6) = slot i holds a record; bits 7..63 are 0
 * </pre>
 *
 * <p>The original (Zuo et al.'s code) has four one-byte tokens followed by four slots of a 16-byte
 * key and a 15-byte value: 4 + 4 x 31 = 128 bytes. With the 8-byte keys and values of Dash's
 * evaluation, a 128-byte bucket holds seven 16-byte slots after an 8-byte token word. Deviations:
 * the tokens are bits of one aligned 8-byte word, so that one atomic store commits or retracts
 * any set of slots of a bucket at once (the opportunistic update flips two tokens in one store,
 * which the published code did with two persists), and 8 reserved bytes put slot 3 at byte 64, so
 * that no slot straddles a cache line and a pair is persisted with one line flush.
 *
 * <h2>Level: an array of 2^k buckets</h2>
 *
 * The top level has {@code 2^k} buckets, the bottom level {@code 2^(k-1)}. Bucket {@code i} is at
 * {@code level + 128 i}. A key has two top buckets, {@code h1 >>> (64 - k)} and {@code h2 >>> (64
 * - k)} (the most significant bits of its two hashes), and two bottom buckets, each its top
 * bucket's index over two: top buckets {@code 2b} and {@code 2b+1} share bottom bucket {@code b}.
 * With most-significant-bit indexing, a key's top bucket at level {@code k} is its bottom bucket
 * at level {@code k + 1}, which is what lets a resize keep the old top level as the new bottom
 * level untouched (§3.3).
 *
 * <h2>Table header (pool root 0), 64 bytes</h2>
 *
 * <pre>
 *  byte 0       8         12       16      24         32      40           48              64
 *       +-------+---------+--------+-------+----------+-------+------------+---------------+
 *       | magic | version | 0      | top   | bottom   | k     | clean size | 0             |
 *       +-------+---------+--------+-------+----------+-------+------------+---------------+
 * </pre>
 *
 * {@code top}, {@code bottom} and {@code k} change together in one allocator step (a redo
 * step of pmhash's allocator, one {@code pmemobj_publish} on an llpl pool), never one at a time. {@code clean size} is the record count written at a clean close;
 * it is trusted only when the pool says the last shutdown was clean.
 */
public final class LevelLayout {
  private LevelLayout() {}

  private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

  // ------------------------------------------------------------------ bucket

  /** Record slots per bucket. */
  public static final int SLOTS = 7;
  /** Token word with every slot's bit set. */
  public static final long ALL_SLOTS = (1L << SLOTS) - 1;

  /** One record slot: key then value, both u64 LE. */
  public static final StructLayout PAIR = MemoryLayout.structLayout(U64.withName("key"), U64.withName("value"));

  /** The 128-byte bucket. */
  public static final StructLayout BUCKET =
      MemoryLayout.structLayout(
              U64.withName("token"),
              MemoryLayout.paddingLayout(8),
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
  /** Offset of the token word: 0. */
  public static final long TOKEN = off(BUCKET, "token");
  /** Offset of slot 0: 16. */
  public static final long SLOT0 = off(BUCKET, "slots");

  /** Buckets probed per lookup at most: two top, two bottom (§3.1). */
  public static final int PROBED_BUCKETS = 4;

  /**
   * The offset of a slot.
   *
   * @param bucket a bucket offset
   * @param slot 0..6
   * @return the pool offset of the slot's key
   */
  public static long slotOffset(long bucket, int slot) {
    return bucket + SLOT0 + PAIR_BYTES * slot;
  }

  /**
   * The top bucket of a hash at level {@code k}.
   *
   * @param h a hash
   * @param k log2 of the top level's bucket count, 1..62
   * @return the top bucket index: the top {@code k} bits of {@code h}
   */
  public static long topIndex(long h, int k) {
    return h >>> (64 - k);
  }

  /**
   * The size of a top level.
   *
   * @param k log2 of the top level's bucket count
   * @return bytes of the top level
   */
  public static long topBytes(int k) {
    return BUCKET_BYTES << k;
  }

  /**
   * The size of a bottom level.
   *
   * @param k log2 of the top level's bucket count
   * @return bytes of the bottom level
   */
  public static long bottomBytes(int k) {
    return BUCKET_BYTES << (k - 1);
  }

  /**
   * The record slots of a table.
   *
   * @param k log2 of the top level's bucket count
   * @return record slots of both levels
   */
  public static long slotsAt(int k) {
    return ((1L << k) + (1L << (k - 1))) * SLOTS;
  }

  /** Smallest {@code k}: 4 top buckets, 2 bottom. */
  public static final int MIN_K = 2;
  /** Largest {@code k}. */
  public static final int MAX_K = 40;

  // ------------------------------------------------------------------ table header

  /** The table header, published into pool root 0. */
  public static final StructLayout TABLE_HEADER =
      MemoryLayout.structLayout(
          U64.withName("magic"),
          U32.withName("layout_version"),
          MemoryLayout.paddingLayout(4),
          U64.withName("top"),
          U64.withName("bottom"),
          U64.withName("k"),
          U64.withName("clean_size"),
          MemoryLayout.paddingLayout(16));
  /** Offset of the magic. */
  public static final long HDR_MAGIC = off(TABLE_HEADER, "magic");
  /** Offset of the layout version. */
  public static final long HDR_VERSION = off(TABLE_HEADER, "layout_version");
  /** Offset of the top level's offset. */
  public static final long HDR_TOP = off(TABLE_HEADER, "top");
  /** Offset of the bottom level's offset. */
  public static final long HDR_BOTTOM = off(TABLE_HEADER, "bottom");
  /** Offset of k (log2 of the top level's bucket count). */
  public static final long HDR_K = off(TABLE_HEADER, "k");
  /** Offset of the record count written at a clean close. */
  public static final long HDR_CLEAN_SIZE = off(TABLE_HEADER, "clean_size");
  /** "LEVEL001" little-endian. */
  public static final long MAGIC = 0x3130304C4556454CL;
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
