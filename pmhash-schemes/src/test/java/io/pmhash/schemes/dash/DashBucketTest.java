package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The bucket flyweight: SWAR fingerprint probing (the byte match itself: {@code ByteMatchTest} in core) and bitmap bookkeeping. */
class DashBucketTest {
  @Test
  void swarMatchesEqualsAByteLoop() {
    long seed = 0x5EEDL;
    SplittableRandom r = new SplittableRandom(seed);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment m = a.allocate(256, 64);
      for (int round = 0; round < 20_000; round++) {
        for (int i = 0; i < 18; i++) {
          m.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 8 + i, (byte) r.nextInt(r.nextBoolean() ? 4 : 256));
        }
        int fp = r.nextInt(256);
        int expected = 0;
        for (int i = 0; i < 14; i++) {
          if ((m.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 8 + i) & 0xFF) == fp) {
            expected |= 1 << i;
          }
        }
        assertEquals(expected, DashBucket.matches(m, 0, fp), "round " + round);
      }
    }
  }

  @Test
  void bitmapBookkeeping() {
    int b = 0;
    b = DashBucket.withSlot(b, 3, false);
    b = DashBucket.withSlot(b, 13, true);
    assertEquals(2, DashBucket.count(b));
    assertEquals((1 << 3) | (1 << 13), DashBucket.allocated(b));
    assertEquals(1 << 13, DashBucket.members(b));
    assertEquals(0, DashBucket.freeSlot(b));
    b = DashBucket.withoutSlot(b, 13);
    assertEquals(1, DashBucket.count(b));
    assertEquals(0, DashBucket.members(b));
    assertEquals(DashBucket.restrictTo(b, -1), b);
  }
}
