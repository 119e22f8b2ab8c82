package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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

  /**
   * The readers' probe by address against a loop over the allocated slots, on buckets built to
   * provoke its short zero-byte test's false flags (fingerprint bytes from a tiny alphabet, so the
   * byte above a match is often the sought fingerprint XOR 1), overflow fingerprints (bytes 22, 23)
   * equal to the sought one, and the key also in unallocated slots. As in a table, a slot holding
   * the sought key holds its fingerprint (a falsely flagged slot is then told apart by its key).
   */
  @Test
  void findInEitherAtEqualsALoopOverTheAllocatedSlots() {
    SplittableRandom r = new SplittableRandom(0xF1A95L);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment m = arena.allocate(2 * DashLayout.BUCKET_BYTES, 64);
      long a1 = m.address();
      long a2 = a1 + DashLayout.BUCKET_BYTES;
      for (int round = 0; round < 50_000; round++) {
        int fp = r.nextInt(256);
        long key = r.nextLong();
        long expected = -1;
        for (long a : new long[] {a1, a2}) {
          long b = a - a1;
          int alloc = r.nextInt(1 << DashLayout.SLOTS);
          m.set(ValueLayout.JAVA_INT_UNALIGNED, b + DashLayout.BITMAP, alloc << DashLayout.ALLOC_SHIFT);
          for (int i = 0; i < 18; i++) {
            int choice = r.nextInt(4);
            int f = choice == 0 ? fp : choice == 1 ? fp ^ 1 : choice == 2 ? fp ^ 2 : r.nextInt(256);
            m.set(ValueLayout.JAVA_BYTE, b + DashLayout.FP + i, (byte) f);
          }
          for (int slot = 0; slot < DashLayout.SLOTS; slot++) {
            long k = r.nextInt(4) == 0 ? key : key + 1 + r.nextInt(3);
            m.set(ValueLayout.JAVA_LONG_UNALIGNED, b + DashLayout.PAIRS + 16L * slot, k);
            if (k == key) {
              m.set(ValueLayout.JAVA_BYTE, b + DashLayout.FP + slot, (byte) fp);
            }
            boolean hit = (alloc >>> slot & 1) != 0 && k == key;
            if (hit && expected < 0) {
              expected = a | slot;
            }
          }
        }
        assertEquals(expected, DashBucket.findInEitherAt(a1, a2, key, fp), "round " + round);
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
