package io.pmhash.map.spi;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The out-of-line record of pointer mode (Dash §4.5), shared by every scheme that stores
 * variable-length keys and values: one allocator block per key/value pair, written once and never
 * changed (an update writes a new record), so a reader holding an epoch never sees it torn.
 *
 * <pre>
 *  byte 0            4              8                 8 + k
 *       +------------+--------------+-----------------+-------------------+
 *       | key length | value length | key bytes (k)   | value bytes (v)   |
 *       |  u32 LE    |  u32 LE      |                 |                   |
 *       +------------+--------------+-----------------+-------------------+
 * </pre>
 *
 * The block may be larger than {@code 8 + k + v} (the allocator's size class); the rest is
 * unused. Normative text: {@code docs/format/dash-eh.md}, "Pointer mode".
 *
 * <p>Readers that follow a slot optimistically (before validating the bucket version) may hold a
 * stale offset: {@link #keyEquals} and the copying methods check bounds against the mapping and
 * answer "no" / null instead of throwing, so the caller's validation decides.
 */
public final class OutOfLineRecord {
  private OutOfLineRecord() {}

  private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  /** The record header. */
  public static final StructLayout HEADER =
      MemoryLayout.structLayout(U32.withName("key_length"), U32.withName("value_length"));
  /** Offset of the key length (u32). */
  public static final long KEY_LENGTH = HEADER.byteOffset(MemoryLayout.PathElement.groupElement("key_length"));
  /** Offset of the value length (u32). */
  public static final long VALUE_LENGTH = HEADER.byteOffset(MemoryLayout.PathElement.groupElement("value_length"));
  /** Offset of the key's first byte. */
  public static final long DATA = HEADER.byteSize();
  /** Longest key or value: lengths are u32, and a Java array holds at most this many bytes. */
  public static final int MAX_LENGTH = Integer.MAX_VALUE - 16;

  private static final VarHandle INT = U32.varHandle().withInvokeExactBehavior();

  /**
   * @param key the key bytes
   * @param value the value bytes
   * @return the block size the record needs
   * @throws IllegalArgumentException if a length exceeds {@link #MAX_LENGTH}
   */
  public static long size(byte[] key, byte[] value) {
    if (key.length > MAX_LENGTH || value.length > MAX_LENGTH) {
      throw new IllegalArgumentException("a key or value holds at most " + MAX_LENGTH + " bytes");
    }
    return DATA + key.length + value.length;
  }

  /**
   * Writes a record with plain stores; the caller flushes {@link #size} bytes and publishes it.
   *
   * @param m the pool's memory
   * @param at the block's offset
   * @param key the key bytes
   * @param value the value bytes
   */
  public static void write(MemorySegment m, long at, byte[] key, byte[] value) {
    INT.set(m, at + KEY_LENGTH, key.length);
    INT.set(m, at + VALUE_LENGTH, value.length);
    MemorySegment.copy(key, 0, m, ValueLayout.JAVA_BYTE, at + DATA, key.length);
    MemorySegment.copy(value, 0, m, ValueLayout.JAVA_BYTE, at + DATA + key.length, value.length);
  }

  /**
   * Whether the record at {@code rec} has this key; false also when {@code rec} does not lie
   * within {@code m} (a stale offset read by an optimistic reader).
   *
   * @param m the pool's memory
   * @param rec the record's offset
   * @param key the key, as a segment over its bytes
   * @return whether the keys are equal
   */
  public static boolean keyEquals(MemorySegment m, long rec, MemorySegment key) {
    long limit = m.byteSize();
    if (rec < 0 || rec > limit - DATA) {
      return false;
    }
    long k = keyLength(m, rec);
    long len = key.byteSize();
    if (k != len || rec + DATA + len > limit) {
      return false;
    }
    return MemorySegment.mismatch(m, rec + DATA, rec + DATA + len, key, 0, len) < 0;
  }

  /**
   * Whether the record's value equals {@code expected}; the record must be valid.
   *
   * @param m the pool's memory
   * @param rec the record's offset
   * @param expected the value bytes
   * @return whether they are equal
   */
  public static boolean valueEquals(MemorySegment m, long rec, byte[] expected) {
    long k = keyLength(m, rec);
    long v = valueLength(m, rec);
    if (v != expected.length) {
      return false;
    }
    long at = rec + DATA + k;
    return MemorySegment.mismatch(m, at, at + v, MemorySegment.ofArray(expected), 0, v) < 0;
  }

  /**
   * @param m the pool's memory
   * @param rec the record's offset
   * @return a copy of the key, or null if the record does not lie within {@code m}
   */
  public static byte[] key(MemorySegment m, long rec) {
    if (!fits(m, rec)) {
      return null;
    }
    return copy(m, rec + DATA, keyLength(m, rec));
  }

  /**
   * @param m the pool's memory
   * @param rec the record's offset
   * @return a copy of the value, or null if the record does not lie within {@code m}
   */
  public static byte[] value(MemorySegment m, long rec) {
    if (!fits(m, rec)) {
      return null;
    }
    return copy(m, rec + DATA + keyLength(m, rec), valueLength(m, rec));
  }

  /**
   * @param m the pool's memory
   * @param rec an offset
   * @return whether a record there (header, key and value) lies within {@code m}
   */
  public static boolean fits(MemorySegment m, long rec) {
    long limit = m.byteSize();
    return rec >= 0 && rec <= limit - DATA && rec + DATA + keyLength(m, rec) + valueLength(m, rec) <= limit;
  }

  private static long keyLength(MemorySegment m, long rec) {
    return (int) INT.get(m, rec + KEY_LENGTH) & 0xFFFF_FFFFL;
  }

  private static long valueLength(MemorySegment m, long rec) {
    return (int) INT.get(m, rec + VALUE_LENGTH) & 0xFFFF_FFFFL;
  }

  private static byte[] copy(MemorySegment m, long at, long n) {
    byte[] out = new byte[(int) n];
    MemorySegment.copy(m, ValueLayout.JAVA_BYTE, at, out, 0, (int) n);
    return out;
  }
}
