package io.pmhash.core.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pmhash.core.internal.Libc;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/**
 * {@link DramArrays#zeroed}: the size asked, zero-filled, 64-byte aligned, writable to its last
 * byte; on Linux an array of 2 MiB or more starts on a 2 MiB boundary (where the huge-page advice
 * can take effect). Whether the kernel then backs it with huge pages depends on its settings and
 * is not asserted.
 */
class DramArraysTest {
  private static void assertZeroedAndWritable(MemorySegment a, long bytes) {
    assertEquals(bytes, a.byteSize());
    assertEquals(0, a.address() % 64, "64-byte aligned");
    for (long i = 0; i < bytes; i += 4093) {
      assertEquals(0, a.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
    }
    assertEquals(0, a.get(ValueLayout.JAVA_BYTE, bytes - 1));
    a.set(ValueLayout.JAVA_BYTE, bytes - 1, (byte) 7);
    a.set(ValueLayout.JAVA_BYTE, 0, (byte) 9);
    assertEquals(7, a.get(ValueLayout.JAVA_BYTE, bytes - 1));
    assertEquals(9, a.get(ValueLayout.JAVA_BYTE, 0));
  }

  @Test
  void smallArraysAreZeroedAndAligned() {
    assertZeroedAndWritable(DramArrays.zeroed(5 * 64), 5 * 64);
    assertZeroedAndWritable(DramArrays.zeroed(100), 100);
  }

  @Test
  void largeArraysStartOnAHugePageBoundaryOnLinux() {
    long bytes = (5L << 20) + 3;
    MemorySegment a = DramArrays.zeroed(bytes);
    assertZeroedAndWritable(a, bytes);
    if (Libc.available()) {
      assertEquals(0, a.address() % (2L << 20), "2 MiB aligned: " + Long.toHexString(a.address()));
    }
  }
}
