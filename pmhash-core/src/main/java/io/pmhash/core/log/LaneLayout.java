package io.pmhash.core.log;

/**
 * Byte layout of one lane. The lanes region starts at {@link io.pmhash.core.Pool#lanesOffset()}
 * (right after the 4 KiB pool header) and holds {@code laneCount} lanes of {@code laneSize}
 * bytes (both recorded in the pool header; {@code laneSize} is a multiple of 64 from 512). All
 * words are little-endian u64 at 8-byte aligned offsets. See {@code docs/allocator.md}.
 *
 * <pre>
 *  lane byte 0         8          16                                   64
 *            +---------+----------+------------------------------------+
 *            | redo    | undo     | reserved (zero)                    |
 *            | commit  | generation                                    |
 *            +---------+----------+------------------------------------+
 *  lane byte 64                                       64 + R
 *            +-------------------------------------------+
 *            | redo entries[R / 16]                      |
 *            |   { u64 offset | op (low 3 bits), u64 arg }|
 *            +-------------------------------------------+
 *  lane byte 64 + R                                              laneSize
 *            +-----------------------------------------------------+
 *            | undo entries, packed, each 24 + pad8(length) bytes: |
 *            |   u64 target offset                                 |
 *            |   u64 kind (bits 63..56) | length (bits 31..0)      |
 *            |   u64 checksum(generation, lane, position, ...)     |
 *            |   old bytes / bit mask, padded to 8                 |
 *            +-----------------------------------------------------+
 *
 *  R = ((laneSize - 64) / 4) rounded down to 16: 1008 bytes (63 actions) in a 4 KiB lane
 *  redo commit word: 0 = no committed redo; else count (bits 15..0) | checksum48 (bits 63..16)
 * </pre>
 */
public final class LaneLayout {
  private LaneLayout() {}

  /** Offset of the redo commit word in a lane. */
  public static final int REDO_COMMIT = 0;

  /** Offset of the undo generation word in a lane. */
  public static final int UNDO_GENERATION = 8;

  /** Bytes of the lane header line. */
  public static final int HEADER_BYTES = 64;

  /** Offset of the first redo entry in a lane. */
  public static final int REDO_ENTRIES = HEADER_BYTES;

  /** Bytes per redo entry. */
  public static final int REDO_ENTRY_BYTES = 16;

  /** Redo op: store the argument into the word. */
  public static final int OP_SET = 1;

  /** Redo op: atomically OR the argument into the word. */
  public static final int OP_OR = 2;

  /** Redo op: atomically clear the argument's bits in the word. */
  public static final int OP_ANDNOT = 3;

  /** Bytes of an undo entry header (target, kind and length, checksum). */
  public static final int UNDO_ENTRY_HEADER = 24;

  /** Undo kind: the old bytes of a range; rollback copies them back. */
  public static final int UNDO_RANGE = 1;

  /** Undo kind: a bit set by the transaction ({@code tx.alloc}); rollback clears it. */
  public static final int UNDO_CLEAR_BITS = 2;

  /** Undo kind: a bit cleared by the transaction ({@code tx.free}); rollback sets it again. */
  public static final int UNDO_SET_BITS = 3;

  /**
   * @param laneSize bytes per lane
   * @return bytes of the redo section
   */
  public static int redoBytes(int laneSize) {
    return ((laneSize - HEADER_BYTES) / 4) & ~(REDO_ENTRY_BYTES - 1);
  }

  /**
   * @param laneSize bytes per lane
   * @return redo actions a lane holds
   */
  public static int redoCapacity(int laneSize) {
    return redoBytes(laneSize) / REDO_ENTRY_BYTES;
  }

  /**
   * @param laneSize bytes per lane
   * @return offset of the undo section in a lane
   */
  public static int undoStart(int laneSize) {
    return HEADER_BYTES + redoBytes(laneSize);
  }

  /**
   * @param laneSize bytes per lane
   * @return bytes of the undo section
   */
  public static int undoBytes(int laneSize) {
    return laneSize - undoStart(laneSize);
  }

  /**
   * @param length bytes of snapshot data
   * @return bytes an undo entry of that length takes
   */
  public static long undoEntryBytes(long length) {
    return UNDO_ENTRY_HEADER + ((length + 7) & ~7L);
  }
}
