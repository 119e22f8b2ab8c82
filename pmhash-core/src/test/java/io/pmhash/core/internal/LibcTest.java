package io.pmhash.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** {@link Libc#reserveHugePageAligned}: the alignment, the whole range usable, bad sizes refused. */
class LibcTest {
  @Test
  @SuppressWarnings("restricted") // a view of the test's own reservation
  void aHugePageAlignedReservationIsAlignedZeroedAndUsableToItsLastByte() {
    assumeTrue(Libc.available(), "anonymous reservations need Linux");
    long bytes = (3L << 20) + 4096;
    long a = Libc.reserveHugePageAligned(bytes);
    try {
      assertEquals(0, a % Libc.HUGE_PAGE, Long.toHexString(a));
      MemorySegment m = MemorySegment.ofAddress(a).reinterpret(bytes);
      assertEquals(0L, m.get(ValueLayout.JAVA_LONG, 0));
      assertEquals(0L, m.get(ValueLayout.JAVA_LONG, bytes - 8));
      m.set(ValueLayout.JAVA_LONG, 0, 1L);
      m.set(ValueLayout.JAVA_LONG, bytes - 8, 2L);
      assertEquals(2L, m.get(ValueLayout.JAVA_LONG, bytes - 8));
    } finally {
      Libc.release(a, bytes); // exactly what was asked: the slack around it is unmapped already
    }
  }

  @Test
  void sizesThatAreNotWholePagesAreRefused() {
    assumeTrue(Libc.available(), "anonymous reservations need Linux");
    assertThrows(IllegalArgumentException.class, () -> Libc.reserveHugePageAligned(4095));
    assertThrows(IllegalArgumentException.class, () -> Libc.reserveHugePageAligned(0));
  }
}
