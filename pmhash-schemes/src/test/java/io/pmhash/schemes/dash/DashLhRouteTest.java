package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link DashLhRoute} on its own: what it knows, how it grows, what a clear forgets. */
class DashLhRouteTest {
  @Test
  void anUnknownSegmentIsZeroAndAFilledOneIsItsOffset() {
    DashLhRoute r = new DashLhRoute();
    assertEquals(0, r.offset(5));
    assertEquals(0, r.offset(-1));
    assertEquals(0, r.offset(1L << 40));
    r.fill(5, 4096);
    assertEquals(4096, r.offset(5));
    assertEquals(0, r.offset(4));
  }

  @Test
  void growingKeepsWhatWasKnown() {
    DashLhRoute r = new DashLhRoute();
    int before = r.capacity();
    r.fill(1, 64);
    r.fill(before - 1, 128);
    r.fill(3L * before + 7, 192);
    assertTrue(r.capacity() > 3L * before + 7, "capacity " + r.capacity());
    assertEquals(64, r.offset(1));
    assertEquals(128, r.offset(before - 1));
    assertEquals(192, r.offset(3L * before + 7));
  }

  @Test
  void clearForgetsExactlyTheSegmentsOfTheRange() {
    DashLhRoute r = new DashLhRoute();
    for (long s = 0; s < 6; s++) {
      r.fill(s, 1000 * (s + 1));
    }
    r.clear(2, 3);
    assertEquals(1000, r.offset(0));
    assertEquals(2000, r.offset(1));
    assertEquals(0, r.offset(2));
    assertEquals(0, r.offset(3));
    assertEquals(0, r.offset(4));
    assertEquals(6000, r.offset(5));
    r.clear(r.capacity() - 1, 1L << 40); // a range past the route's end clears what it holds of it
    assertEquals(6000, r.offset(5));
  }

  @Test
  void segmentsBeyondTheCapAreNotRecorded() {
    DashLhRoute r = new DashLhRoute();
    r.fill(DashLhRoute.MAX_ENTRIES, 64);
    assertEquals(0, r.offset(DashLhRoute.MAX_ENTRIES));
    assertTrue(r.capacity() <= DashLhRoute.MAX_ENTRIES);
  }

  @Test
  void aNegativeSegmentOrAnOffsetThatIsNoOffsetIsRefused() {
    DashLhRoute r = new DashLhRoute();
    assertThrows(IllegalArgumentException.class, () -> r.fill(-1, 64));
    assertThrows(IllegalArgumentException.class, () -> r.fill(1, 0));
  }
}
