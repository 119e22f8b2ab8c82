package io.pmhash.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Libc#reserveHugePageAligned}: the alignment, the whole range usable, bad sizes refused;
 * {@link Libc#allocateFileSpace}: zeros, the file's bytes kept, only the file it was given.
 */
class LibcTest {
  @TempDir Path dir;

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

  @Test
  void fileSpaceIsAllocatedAsZerosOnlyInTheFileNamed() throws Exception {
    assumeTrue(Libc.available(), "fallocate needs Linux");
    Path file = dir.resolve("f");
    Files.write(file, new byte[] {1, 2, 3});
    long dev = ((Number) Files.getAttribute(file, "unix:dev")).longValue();
    long ino = ((Number) Files.getAttribute(file, "unix:ino")).longValue();
    assertTrue(Libc.allocateFileSpace(file, dev, ino, 3, 8189), "ext4, xfs and tmpfs have fallocate; the test directory is on one");
    byte[] bytes = Files.readAllBytes(file);
    assertEquals(8192, bytes.length);
    assertEquals(1, bytes[0]);
    assertEquals(3, bytes[2]);
    for (int i = 3; i < bytes.length; i++) {
      assertEquals(0, bytes[i], "byte " + i);
    }
    assertFalse(Libc.allocateFileSpace(file, dev, ino + 1, 8192, 4096), "another inode: not the file the caller holds");
    assertFalse(Libc.allocateFileSpace(dir.resolve("missing"), dev, ino, 0, 4096));
    assertFalse(Libc.allocateFileSpace(file, dev, ino, 0, 0));
    assertEquals(8192, Files.size(file), "nothing allocated by the refusals");
  }
}
