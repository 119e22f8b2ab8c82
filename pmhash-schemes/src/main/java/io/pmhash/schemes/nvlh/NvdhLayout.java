package io.pmhash.schemes.nvlh;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The persistent layouts of NVDH, the baseline NVLH is compared with (§IV: "a double hashing
 * scheme for NVM which periodically rehashes records into a larger table"): one open-addressing
 * table of {@code 2^k} slots probed by double hashing, and the table header. A descriptor only;
 * {@code docs/format/nvlh.md} (section NVDH) is normative; {@code NvlhLayoutTest} checks every
 * offset.
 *
 * <h2>Table block: state words, then pairs</h2>
 *
 * <pre>
 *  byte 0                         S = max(64, 2^k / 4), rounded up to 64        S + 16 * 2^k
 *       +------------------------------+--------------------------------------------+
 *       | states: u64[S / 8]           | pairs[2^k] = { key u64 LE | value u64 LE } |
 *       +------------------------------+--------------------------------------------+
 *  state of slot j: bits 2(j mod 32) .. 2(j mod 32)+1 of state word j / 32:
 *                   0 empty, 1 full, 2 deleted (a tombstone); 3 is invalid
 * </pre>
 *
 * <h2>Table header (pool root 0), 64 bytes</h2>
 *
 * <pre>
 *  byte 0       8         12       16      24      32           40                48       64
 *       +-------+---------+--------+-------+-------+------------+-----------------+--------+
 *       | magic | version | 0      | table | k     | clean size | clean tombstones| 0      |
 *       +-------+---------+--------+-------+-------+------------+-----------------+--------+
 * </pre>
 *
 * {@code table} and {@code k} change together, in one allocator publication, when a rehash
 * replaces the table.
 */
public final class NvdhLayout {
  private NvdhLayout() {}

  private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

  /** Slot state: never used. */
  public static final int EMPTY = 0;
  /** Slot state: holds a record. */
  public static final int FULL = 1;
  /** Slot state: held a record that was deleted (probing continues past it). */
  public static final int DELETED = 2;
  /** Slot states per state word. */
  public static final int STATES_PER_WORD = 32;
  /** Size of a pair: 16. */
  public static final long PAIR_BYTES = 16;
  /** Offset of the value in a pair: 8. */
  public static final long PAIR_VALUE = 8;
  /** Smallest table: 2^MIN_K slots. */
  public static final int MIN_K = 6;
  /** Largest table: 2^MAX_K slots. */
  public static final int MAX_K = 40;

  /**
   * @param k log2 of the slots
   * @return bytes of the state words: one bit pair per slot, at least one cache line
   */
  public static long statesBytes(int k) {
    return Math.max(64, ((1L << k) / 4 + 63) & ~63L);
  }

  /**
   * @param k log2 of the slots
   * @return bytes of a table block
   */
  public static long tableBytes(int k) {
    return statesBytes(k) + (PAIR_BYTES << k);
  }

  /** The table header, published into pool root 0. */
  public static final StructLayout TABLE_HEADER =
      MemoryLayout.structLayout(
              U64.withName("magic"),
              U32.withName("layout_version"),
              MemoryLayout.paddingLayout(4),
              U64.withName("table"),
              U64.withName("k"),
              U64.withName("clean_size"),
              U64.withName("clean_tombstones"),
              MemoryLayout.paddingLayout(16))
          .withByteAlignment(64);
  /** Offset of the magic. */
  public static final long HDR_MAGIC = off("magic");
  /** Offset of the layout version. */
  public static final long HDR_VERSION = off("layout_version");
  /** Offset of the table block's offset. */
  public static final long HDR_TABLE = off("table");
  /** Offset of k. */
  public static final long HDR_K = off("k");
  /** Offset of the record count written at a clean close. */
  public static final long HDR_CLEAN_SIZE = off("clean_size");
  /** Offset of the tombstone count written at a clean close. */
  public static final long HDR_CLEAN_TOMBSTONES = off("clean_tombstones");
  /** "NVDH0001" little-endian. */
  public static final long MAGIC = 0x313030304844564EL;
  /** The layout version recorded in the pool header. */
  public static final int LAYOUT_VERSION = 1;

  /** u32 at (segment, offset). */
  public static final VarHandle INT = U32.varHandle().withInvokeExactBehavior();
  /** u64 at (segment, offset). */
  public static final VarHandle LONG = U64.varHandle().withInvokeExactBehavior();

  private static long off(String name) {
    return TABLE_HEADER.byteOffset(MemoryLayout.PathElement.groupElement(name));
  }
}
