package io.pmhash.schemes.dash;

/** Every case of {@link DashCrashTest} at the smallest segment of Dash Fig. 11: 4 normal buckets, 1 KB. */
class DashCrashSmallSegmentTest extends DashCrashTest {
  @Override
  int normal() {
    return 4;
  }
}
