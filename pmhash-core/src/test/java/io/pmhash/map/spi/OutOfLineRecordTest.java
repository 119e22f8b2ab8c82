package io.pmhash.map.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** The out-of-line record's layout, byte by byte, and its bounds-checked readers. */
class OutOfLineRecordTest {
  @Test
  void layout() {
    assertEquals(8, OutOfLineRecord.HEADER.byteSize());
    assertEquals(0, OutOfLineRecord.KEY_LENGTH);
    assertEquals(4, OutOfLineRecord.VALUE_LENGTH);
    assertEquals(8, OutOfLineRecord.DATA);
    assertEquals(8 + 3 + 5, OutOfLineRecord.size(new byte[3], new byte[5]));
  }

  @Test
  void writeAndReadBack() {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment m = a.allocate(256);
      byte[] key = {1, 2, 3};
      byte[] value = {9, 8, 7, 6, 5};
      OutOfLineRecord.write(m, 64, key, value);
      ValueLayout.OfInt u32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
      assertEquals(3, m.get(u32, 64));
      assertEquals(5, m.get(u32, 68));
      assertEquals(1, m.get(ValueLayout.JAVA_BYTE, 72));
      assertEquals(9, m.get(ValueLayout.JAVA_BYTE, 75));
      assertArrayEquals(key, OutOfLineRecord.key(m, 64));
      assertArrayEquals(value, OutOfLineRecord.value(m, 64));
      assertTrue(OutOfLineRecord.keyEquals(m, 64, MemorySegment.ofArray(key)));
      assertFalse(OutOfLineRecord.keyEquals(m, 64, MemorySegment.ofArray(new byte[] {1, 2, 4})));
      assertFalse(OutOfLineRecord.keyEquals(m, 64, MemorySegment.ofArray(new byte[] {1, 2})));
      assertTrue(OutOfLineRecord.valueEquals(m, 64, value));
      assertFalse(OutOfLineRecord.valueEquals(m, 64, new byte[] {9, 8, 7, 6}));
    }
  }

  @Test
  void staleOffsetsReadAsNoRecordInsteadOfThrowing() {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment m = a.allocate(64);
      MemorySegment key = MemorySegment.ofArray(new byte[] {1});
      assertFalse(OutOfLineRecord.keyEquals(m, -8, key));
      assertFalse(OutOfLineRecord.keyEquals(m, 60, key));
      assertFalse(OutOfLineRecord.keyEquals(m, 1 << 20, key));
      m.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0, 1000); // a key longer than the mapping
      assertFalse(OutOfLineRecord.keyEquals(m, 0, MemorySegment.ofArray(new byte[1000])));
      assertNull(OutOfLineRecord.value(m, 0));
      assertNull(OutOfLineRecord.key(m, 60));
    }
  }
}
