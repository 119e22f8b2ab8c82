package io.pmhash.core.internal;

import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.sequenceLayout;
import static java.lang.foreign.MemoryLayout.structLayout;

import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * Byte layout of the pool header: the first 4096 bytes of every pool file. All fields are
 * little-endian. The immutable part (bytes 0..255) is written once at create and protected by a
 * CRC32C; the mutable part (from byte 256) is a set of aligned 8-byte words, each updated by one
 * atomic store and persisted on its own, so no crash can leave it half-written. See {@code
 * docs/format/pool.md}.
 *
 * <pre>
 *  byte 0         8       12      16      20      24              32
 *       +---------+-------+-------+-------+-------+---------------+
 *       | magic   |format |header |page   |backend| pool id       |
 *       | u64     |version|size   |size   | u32   | u64           |
 *       +---------+-------+-------+-------+-------+---------------+
 *  byte 32                    48      52      56                    120
 *       +---------------------+-------+-------+---------------------+
 *       | scheme name (ASCII) |scheme |param  | scheme params u64[8]|
 *       | 16 bytes, NUL pad   |version|count  |                     |
 *       +---------------------+-------+-------+---------------------+
 *  byte 120   124   128        136        144        152         252   256
 *       +-----+-----+----------+----------+----------+-----------+-----+
 *       |lane |lane |lanes     |heap      |chunk     | reserved  |crc32|
 *       |count|size |offset    |offset    |size      | (zero)    |c    |
 *       +-----+-----+----------+----------+----------+-----------+-----+
 *  byte 256       264       272        280      288                 352
 *       +---------+---------+----------+--------+--------------------+
 *       |file size|clean    |recovery  |reserved| allocator words    |
 *       |         |shutdown |epoch     |        | u64[8]             |
 *       +---------+---------+----------+--------+--------------------+
 *  byte 352                               480                    4096
 *       +---------------------------------+-----------------------+
 *       | scheme roots u64[16] (offsets)  | reserved (zero)       |
 *       +---------------------------------+-----------------------+
 * </pre>
 */
public final class PoolHeader {
  private PoolHeader() {}

  /** "PMHASH\r\n" read as a little-endian u64: a text-mode transfer breaks it, as PNG's does. */
  public static final long MAGIC = 0x0A0D485341484D50L;

  /** The format version this code writes and reads. */
  public static final int FORMAT_VERSION = 1;

  /** Size of the header; the lanes start right after it. */
  public static final int HEADER_SIZE = 4096;

  /** Backend id of a file mapped through the FFM API. */
  public static final int BACKEND_FFM_FILE = 1;

  /** Backend id of an anonymous (volatile) pool. */
  public static final int BACKEND_VOLATILE = 2;

  /**
   * Backend id of a pool hosted in a PMDK pool through llpl: the pmhash pool (this header first)
   * lies inside one PMDK block; see {@code docs/llpl.md}.
   */
  public static final int BACKEND_LLPL = 3;

  /**
   * The first 8 bytes of a PMDK libpmemobj pool file ({@code "PMEMOBJ\0"} read as a
   * little-endian u64): such a file is an llpl-hosted pool or not a pmhash pool at all.
   */
  public static final long PMDK_OBJ_SIGNATURE = 0x004A424F4D454D50L;

  /** Number of scheme root words. */
  public static final int ROOT_COUNT = 16;

  /** Number of allocator words. */
  public static final int ALLOCATOR_WORD_COUNT = 8;

  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  /** The header, every byte named. */
  public static final StructLayout LAYOUT =
      structLayout(
          U64.withName("magic"),
          U32.withName("formatVersion"),
          U32.withName("headerSize"),
          U32.withName("pageSize"),
          U32.withName("backend"),
          U64.withName("poolId"),
          sequenceLayout(16, ValueLayout.JAVA_BYTE).withName("schemeName"),
          U32.withName("schemeVersion"),
          U32.withName("schemeParamCount"),
          sequenceLayout(8, U64).withName("schemeParams"),
          U32.withName("laneCount"),
          U32.withName("laneSize"),
          U64.withName("lanesOffset"),
          U64.withName("heapOffset"),
          U64.withName("chunkSize"),
          paddingLayout(100).withName("reservedImmutable"),
          U32.withName("headerCrc32c"),
          U64.withName("fileSize"),
          U64.withName("cleanShutdown"),
          U64.withName("recoveryEpoch"),
          U64.withName("reservedMutable"),
          sequenceLayout(ALLOCATOR_WORD_COUNT, U64).withName("allocatorWords"),
          sequenceLayout(ROOT_COUNT, U64).withName("roots"),
          paddingLayout(HEADER_SIZE - 480).withName("reservedTail"));

  public static final long MAGIC_OFFSET = offset("magic");
  public static final long FORMAT_VERSION_OFFSET = offset("formatVersion");
  public static final long HEADER_SIZE_OFFSET = offset("headerSize");
  public static final long PAGE_SIZE_OFFSET = offset("pageSize");
  public static final long BACKEND_OFFSET = offset("backend");
  public static final long POOL_ID_OFFSET = offset("poolId");
  public static final long SCHEME_NAME_OFFSET = offset("schemeName");
  public static final long SCHEME_VERSION_OFFSET = offset("schemeVersion");
  public static final long SCHEME_PARAM_COUNT_OFFSET = offset("schemeParamCount");
  public static final long SCHEME_PARAMS_OFFSET = offset("schemeParams");
  public static final long LANE_COUNT_OFFSET = offset("laneCount");
  public static final long LANE_SIZE_OFFSET = offset("laneSize");
  public static final long LANES_OFFSET_OFFSET = offset("lanesOffset");
  public static final long HEAP_OFFSET_OFFSET = offset("heapOffset");
  public static final long CHUNK_SIZE_OFFSET = offset("chunkSize");
  public static final long RESERVED_IMMUTABLE_OFFSET = offset("reservedImmutable");
  public static final long CRC_OFFSET = offset("headerCrc32c");
  /** Bytes covered by the CRC: everything before it. */
  public static final int CHECKED_BYTES = (int) CRC_OFFSET;
  public static final long FILE_SIZE_OFFSET = offset("fileSize");
  public static final long CLEAN_SHUTDOWN_OFFSET = offset("cleanShutdown");
  public static final long RECOVERY_EPOCH_OFFSET = offset("recoveryEpoch");
  public static final long RESERVED_MUTABLE_OFFSET = offset("reservedMutable");
  public static final long ALLOCATOR_WORDS_OFFSET = offset("allocatorWords");
  public static final long ROOTS_OFFSET = offset("roots");
  public static final long RESERVED_TAIL_OFFSET = offset("reservedTail");

  /** Aligned 8-byte access to the mutable words, for atomic stores on the mapped header. */
  private static final VarHandle WORD =
      ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle().withInvokeExactBehavior();

  private static long offset(String field) {
    return LAYOUT.byteOffset(PathElement.groupElement(field));
  }

  /**
   * @param index 0 .. {@value #ROOT_COUNT} - 1
   * @return the header offset of root word {@code index}
   */
  public static long rootOffset(int index) {
    return ROOTS_OFFSET + 8L * index;
  }

  /**
   * @param index 0 .. {@value #ALLOCATOR_WORD_COUNT} - 1
   * @return the header offset of allocator word {@code index}
   */
  public static long allocatorWordOffset(int index) {
    return ALLOCATOR_WORDS_OFFSET + 8L * index;
  }

  public static long u64(MemorySegment header, long offset) {
    return header.get(U64, offset);
  }

  public static int u32(MemorySegment header, long offset) {
    return header.get(U32, offset);
  }

  public static void setU64(MemorySegment header, long offset, long value) {
    header.set(U64, offset, value);
  }

  public static void setU32(MemorySegment header, long offset, int value) {
    header.set(U32, offset, value);
  }

  /** Acquire load of an aligned mutable word of the mapped header. */
  public static long wordAcquire(MemorySegment pool, long offset) {
    return (long) WORD.getAcquire(pool, offset);
  }

  /** Release store of an aligned mutable word of the mapped header (one atomic 8-byte store). */
  public static void setWordRelease(MemorySegment pool, long offset, long value) {
    WORD.setRelease(pool, offset, value);
  }

  public static String schemeName(MemorySegment header) {
    byte[] raw = header.asSlice(SCHEME_NAME_OFFSET, 16).toArray(ValueLayout.JAVA_BYTE);
    int n = 0;
    while (n < raw.length && raw[n] != 0) {
      n++;
    }
    return new String(raw, 0, n, StandardCharsets.US_ASCII);
  }

  public static void setSchemeName(MemorySegment header, String name) {
    byte[] raw = name.getBytes(StandardCharsets.US_ASCII);
    MemorySegment field = header.asSlice(SCHEME_NAME_OFFSET, 16);
    field.fill((byte) 0);
    MemorySegment.copy(MemorySegment.ofArray(raw), 0, field, 0, raw.length);
  }

  /** CRC32C of the immutable part. */
  public static int checksum(MemorySegment header) {
    CRC32C crc = new CRC32C();
    crc.update(header.asSlice(0, CHECKED_BYTES).asByteBuffer());
    return (int) crc.getValue();
  }
}
