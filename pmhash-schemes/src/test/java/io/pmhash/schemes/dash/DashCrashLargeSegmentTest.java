package io.pmhash.schemes.dash;

/** Every case of {@link DashCrashTest} at a large segment: 256 normal buckets, 64 KB. */
class DashCrashLargeSegmentTest extends DashCrashTest {
  @Override
  int normal() {
    return 256;
  }
}
