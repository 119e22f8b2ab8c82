package io.pmhash.schemes.group;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The persistent layout of group hashing (Zhang, Feng, Hua, Chen, Fu — "A Write-efficient and
 * Consistent Hashing Scheme for Non-Volatile Memory", ICPP 2018, §3.2 Fig. 3 and §3.3 Fig. 4): one
 * allocator block per table, holding the global info, the per-cell bitmaps packed per group, and
 * the two levels of 16-byte cells. A descriptor only: offsets, sizes and {@code static final}
 * VarHandles over {@code (MemorySegment, long offset)}; no logic. The normative text is {@code
 * docs/format/group.md}; {@code GroupLayoutTest} checks every offset below.
 *
 * <h2>Table block (pool root 0 names it), G cells per group, N cells per level</h2>
 *
 * <pre>
 *  byte 0        8        12       16            24            32        40               64
 *       +--------+--------+--------+-------------+-------------+---------+----------------+
 *       | magic  |version | 0      | group_size  | table_size  | count   | 0 (reserved)   |
 *       |        |  u32   |        | G, u64      | N, u64      | u64     |                |
 *       +--------+--------+--------+-------------+-------------+---------+----------------+
 *       global info (Fig. 4): count, group size, table size
 *  byte 64
 *       +----------------------------------+----------------------------------+-- ... --+
 *       | group 0: L1 bits | L2 bits       | group 1: L1 bits | L2 bits       |         |
 *       | G/64 u64 words   | G/64 u64 words|                  |               |         |
 *       +----------------------------------+----------------------------------+-- ... --+
 *       N/G groups x G/4 bytes; cell j of a group is bit (j mod 64) of word (j / 64)
 *  byte L1 = 64 + N/4 rounded up to 64
 *       +-------------------------------------------------------------------------------+
 *       | level 1: cells 0 .. N-1 = { key: u64 LE | value: u64 LE }  (16 B each)        |
 *       |   addressed by the hash; cells gG .. gG+G-1 are group g                        |
 *       +-------------------------------------------------------------------------------+
 *  byte L2 = L1 + 16 N
 *       +-------------------------------------------------------------------------------+
 *       | level 2: cells N .. 2N-1, not addressable: cells N+gG .. N+gG+G-1 are group g, |
 *       |   shared by the level-1 group g (§3.2)                                         |
 *       +-------------------------------------------------------------------------------+
 *  byte L2 + 16 N = the block's size
 * </pre>
 *
 * <p>Cells are numbered 0 .. 2N-1 across both levels ("cell number" {@code c}); the pair of cell
 * {@code c} is at {@code L1 + 16 c} because level 2 follows level 1 directly. G and N are powers of
 * two, {@code 64 <= G <= N}.
 *
 * <p><b>Where the bit lives.</b> The paper adds "a 1-bit bitmap in each hashing cell" (§3.3) and
 * leaves its place open. Here the bits of a group are packed into u64 words, the level-1 bits of
 * group {@code g} followed by its level-2 bits, in a bitmap area before the cells: (1) a cell of an
 * 8-byte key and an 8-byte value has no spare bit when every key and value is allowed; (2) a
 * bitmap word beside every cell would make cells 24 bytes, straddling cache lines, 50 % larger;
 * (3) a packed word tells a lookup which 64 cells of a level-2 group are occupied with one load, so
 * it compares only occupied cells and an empty cell needs no reserved key. The commit is still one
 * aligned 8-byte store: the word holding the bit, the other 63 bits unchanged (the group's writers
 * are serialised by the group lock).
 *
 * <p><b>{@code table_size}</b> is the number of cells per level, N (Algorithm 4 loops {@code
 * i < table_size} over both {@code tab1[i]} and {@code tab2[i]}); the table holds 2N records. §3.3
 * calls it "the total number of hash cells"; Algorithm 4's reading is taken because it is the one
 * the code needs. <b>{@code count}</b> is the record count at the last clean close; it is trusted
 * only after a clean shutdown (see {@link io.pmhash.schemes.group}).
 */
public final class GroupLayout {
  private GroupLayout() {}

  private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

  // ------------------------------------------------------------------ cell

  /** One cell: key then value, both u64 LE (the paper's 16-byte items, §4.1). */
  public static final StructLayout CELL = MemoryLayout.structLayout(U64.withName("key"), U64.withName("value"));
  /** Size of a cell: 16. */
  public static final long CELL_BYTES = CELL.byteSize();
  /** Offset of the key in a cell: 0. */
  public static final long CELL_KEY = off(CELL, "key");
  /** Offset of the value in a cell: 8. */
  public static final long CELL_VALUE = off(CELL, "value");

  // ------------------------------------------------------------------ global info

  /** The global info at byte 0 of a table block (Fig. 4). */
  public static final StructLayout GLOBAL_INFO =
      MemoryLayout.structLayout(
              U64.withName("magic"),
              U32.withName("layout_version"),
              MemoryLayout.paddingLayout(4),
              U64.withName("group_size"),
              U64.withName("table_size"),
              U64.withName("count"),
              MemoryLayout.paddingLayout(24))
          .withByteAlignment(64);
  /** Size of the global info: 64. */
  public static final long INFO_BYTES = GLOBAL_INFO.byteSize();
  /** Offset of the magic: 0. */
  public static final long INFO_MAGIC = off(GLOBAL_INFO, "magic");
  /** Offset of the layout version: 8. */
  public static final long INFO_VERSION = off(GLOBAL_INFO, "layout_version");
  /** Offset of the group size G: 16. */
  public static final long INFO_GROUP_SIZE = off(GLOBAL_INFO, "group_size");
  /** Offset of the table size N (cells per level): 24. */
  public static final long INFO_TABLE_SIZE = off(GLOBAL_INFO, "table_size");
  /** Offset of the record count at the last clean close: 32. */
  public static final long INFO_COUNT = off(GLOBAL_INFO, "count");
  /** "GROUP001" little-endian. */
  public static final long MAGIC = 0x31303050554F5247L;
  /** The layout version recorded in the pool header and the global info. */
  public static final int LAYOUT_VERSION = 1;

  // ------------------------------------------------------------------ geometry

  /** Offset of the bitmap area in a table block: 64. */
  public static final long BITMAPS = INFO_BYTES;
  /** Smallest group size: one bitmap word per level. */
  public static final int MIN_GROUP_SIZE = 64;
  /** Largest group size. */
  public static final int MAX_GROUP_SIZE = 4096;
  /** The paper's default group size (§4.5). */
  public static final int DEFAULT_GROUP_SIZE = 256;
  /** Largest table size (cells per level): 2^36, 1 TiB of level-1 cells. */
  public static final long MAX_TABLE_SIZE = 1L << 36;

  /**
   * Bytes of one group's bitmaps: G/64 words of level-1 bits, then G/64 of level-2 bits.
   *
   * @param groupSize G
   * @return G / 4
   */
  public static long groupBitmapBytes(long groupSize) {
    return groupSize / 4;
  }

  /**
   * The offset of level 1 in a table block.
   *
   * @param tableSize N, cells per level
   * @return 64 + N/4, rounded up to a cache line
   */
  public static long level1(long tableSize) {
    return (BITMAPS + tableSize / 4 + 63) & ~63L;
  }

  /**
   * The size of a table block.
   *
   * @param tableSize N, cells per level
   * @return bytes
   */
  public static long tableBytes(long tableSize) {
    return level1(tableSize) + 2 * CELL_BYTES * tableSize;
  }

  // ------------------------------------------------------------------ VarHandles

  /** u32 at (segment, offset). */
  public static final VarHandle INT = U32.varHandle().withInvokeExactBehavior();
  /** u64 at (segment, offset). */
  public static final VarHandle LONG = U64.varHandle().withInvokeExactBehavior();

  private static long off(StructLayout l, String name) {
    return l.byteOffset(MemoryLayout.PathElement.groupElement(name));
  }
}
