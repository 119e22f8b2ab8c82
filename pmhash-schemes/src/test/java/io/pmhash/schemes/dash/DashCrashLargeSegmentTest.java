package io.pmhash.schemes.dash;

/** Every case of {@link DashCrashTest} at a large segment: 128 normal buckets, 32 KB (256 took six minutes on a busy 2-core machine, most of it the wide merge case). */
class DashCrashLargeSegmentTest extends DashCrashTest {
  @Override
  int normal() {
    return 128;
  }
}
