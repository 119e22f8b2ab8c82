package io.pmhash.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 9, "a failed open never modifies the file", for a refusal that comes after the pool
 * opened: a scheme that finds its table damaged refuses once {@link Pool#open} has marked the pool
 * open (clean-shutdown marker cleared, recovery epoch raised). {@link Pool#closeRefused()} gives
 * those words back and records no shutdown, so the file is byte for byte what it was, whether it
 * was closed cleanly or left by a crash; {@link Pool#close()} would have rewritten them.
 */
class RefusedOpenLeavesTheFileUnchangedTest {
  @TempDir Path dir;

  @Test
  void aCleanPoolRefusedAfterOpenIsLeftByteForByte() throws Exception {
    Path file = dir.resolve("clean.pool");
    try (Pool p = Pool.create(file, PoolTest.OPTIONS)) {
      p.setRoot(0, p.heapOffset());
    }
    byte[] before = Files.readAllBytes(file);
    Pool p = Pool.open(file, PoolTest.OPTIONS);
    assertTrue(p.lastShutdownClean());
    p.closeRefused();
    assertFalse(p.isOpen());
    assertArrayEquals(before, Files.readAllBytes(file), "closeRefused restores what the open wrote");
    try (Pool again = Pool.open(file, PoolTest.OPTIONS)) {
      assertTrue(again.lastShutdownClean(), "still a clean pool");
    }
    assertFalse(java.util.Arrays.equals(before, Files.readAllBytes(file)), "a plain close records the open (the control)");
  }

  @Test
  void aCrashedPoolRefusedAfterOpenIsLeftByteForByteAndStillNeedsRecovery() throws Exception {
    Path file = dir.resolve("live.pool");
    Path crashed = dir.resolve("crashed.pool");
    try (Pool p = Pool.create(file, PoolTest.OPTIONS)) {
      p.setRoot(0, p.heapOffset());
      Files.copy(file, crashed); // as kill -9 leaves it: marked open
    }
    byte[] before = Files.readAllBytes(crashed);
    long epoch;
    Pool p = Pool.open(crashed, PoolTest.OPTIONS);
    assertFalse(p.lastShutdownClean());
    epoch = p.recoveryEpoch();
    p.closeRefused();
    assertArrayEquals(before, Files.readAllBytes(crashed), "closeRefused restores what the open wrote");
    try (Pool again = Pool.open(crashed, PoolTest.OPTIONS)) {
      assertFalse(again.lastShutdownClean(), "the refused open recorded no clean shutdown");
      assertEquals(epoch, again.recoveryEpoch(), "the refused open's epoch was given back, so the next open gets the same one");
    }
  }
}
