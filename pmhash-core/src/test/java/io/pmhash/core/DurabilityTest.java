package io.pmhash.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every durability mode on a file on tmpfs and on a regular file on disk: the mode in force, the
 * persistence it uses, data surviving a reopen, and PMEM refusing a file system without
 * MAP_SYNC instead of degrading.
 */
class DurabilityTest {
  /** tmpfs on Linux; the disk case uses the build directory (override: -Dpmhash.test.diskDir). */
  static final Path TMPFS = Path.of("/dev/shm");

  static Path tmpfsDir;
  static Path diskDir;

  @BeforeAll
  static void dirs() throws Exception {
    tmpfsDir = Files.createTempDirectory(TMPFS, "pmhash-durability-");
    Path disk = Path.of(System.getProperty("pmhash.test.diskDir", "target"));
    Files.createDirectories(disk);
    diskDir = Files.createTempDirectory(disk, "pmhash-durability-");
  }

  @AfterAll
  static void clean() throws Exception {
    for (Path d : new Path[] {tmpfsDir, diskDir}) {
      try (Stream<Path> s = Files.walk(d)) {
        s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  static Stream<Arguments> places() {
    return Stream.of(Arguments.of("tmpfs"), Arguments.of("disk"));
  }

  static Path dir(String place) throws Exception {
    Path d = place.equals("tmpfs") ? tmpfsDir : diskDir;
    String type = Files.getFileStore(d).type();
    if (place.equals("tmpfs")) {
      assertEquals("tmpfs", type, TMPFS + " must be tmpfs");
    } else {
      assertNotEquals("tmpfs", type,
          "the disk case needs a disk-backed directory; " + d + " is on tmpfs: set -Dpmhash.test.diskDir");
    }
    return d;
  }

  static boolean mapSyncWorks(Path d) throws Exception {
    Path probe = d.resolve("probe.pool");
    try (Pool p = Pool.create(probe, PoolTest.OPTIONS.withDurability(Durability.PMEM))) {
      return p.durability() == Durability.PMEM;
    } catch (DurabilityUnsupportedException e) {
      return false;
    } finally {
      Files.deleteIfExists(probe);
    }
  }

  @ParameterizedTest
  @MethodSource("places")
  void pmemWithoutMapSyncIsRefusedWithAlternatives(String place) throws Exception {
    Path d = dir(place);
    if (mapSyncWorks(d)) {
      return; // a DAX mount: PMEM is available here and the refusal cannot happen
    }
    Path file = d.resolve("pmem.pool");
    DurabilityUnsupportedException e = assertThrows(DurabilityUnsupportedException.class,
        () -> Pool.create(file, PoolTest.OPTIONS.withDurability(Durability.PMEM)));
    assertTrue(e.getMessage().contains("PMEM_EMULATED") && e.getMessage().contains("MSYNC")
        && e.getMessage().contains("PROCESS"), e.getMessage());
    assertFalse(Files.exists(file), "a refused create leaves no file behind");

    Pool.create(file, PoolTest.OPTIONS).close();
    byte[] before = Files.readAllBytes(file);
    assertThrows(DurabilityUnsupportedException.class,
        () -> Pool.open(file, PoolTest.OPTIONS.withDurability(Durability.PMEM)));
    assertArrayEquals(before, Files.readAllBytes(file));
  }

  @ParameterizedTest
  @MethodSource("places")
  void autoIsPmemWhereMapSyncWorksElseProcess(String place) throws Exception {
    Path d = dir(place);
    Durability expected = mapSyncWorks(d) ? Durability.PMEM : Durability.PROCESS;
    try (Pool p = Pool.create(d.resolve("auto.pool"), PoolTest.OPTIONS)) {
      assertEquals(expected, p.durability());
    }
  }

  @ParameterizedTest
  @MethodSource("places")
  void everyFileModeKeepsDataAcrossReopen(String place) throws Exception {
    Path d = dir(place);
    for (Durability mode : new Durability[] {Durability.PMEM_EMULATED, Durability.MSYNC, Durability.PROCESS}) {
      Path file = d.resolve(mode + ".pool");
      PoolOptions o = PoolTest.OPTIONS.withDurability(mode);
      long far;
      try (Pool p = Pool.create(file, o)) {
        assertEquals(mode, p.durability());
        String how = p.persistence().describe();
        switch (mode) {
          case PMEM_EMULATED -> assertTrue(how.startsWith("native") || how.startsWith("JDK"), how);
          case MSYNC -> assertTrue(how.contains("msync"), how);
          default -> assertTrue(how.contains("PROCESS"), how);
        }
        long off = p.heapOffset() + 64;
        p.memory().set(ValueLayout.JAVA_LONG, off, 0x1234_5678_9abc_def0L);
        p.persistence().persist(off, 8);
        p.ensureSize(p.size() * 2);
        far = p.size() - 64;
        p.memory().set(ValueLayout.JAVA_LONG, far, 77L);
        p.persistence().persist(far, 8);
      }
      try (Pool p = Pool.open(file, o)) {
        assertEquals(0x1234_5678_9abc_def0L, p.memory().get(ValueLayout.JAVA_LONG, p.heapOffset() + 64));
        assertEquals(77L, p.memory().get(ValueLayout.JAVA_LONG, far)); // the size may include a step written ahead
        assertTrue(p.lastShutdownClean());
      }
    }
  }

  @org.junit.jupiter.api.Test
  void withoutTheShimThePmemModesFallBackToForce() throws Exception {
    Persistence fallback = io.pmhash.core.internal.PersistenceChoice.forMode(Durability.PMEM_EMULATED, false);
    assertTrue(fallback instanceof io.pmhash.core.internal.ForcePersistence, fallback.describe());
    Path file = tmpfsDir.resolve("fallback.pool");
    try (Pool p = Pool.create(file, PoolTest.OPTIONS.withPersistence(() -> fallback))) {
      long off = p.heapOffset();
      p.memory().set(ValueLayout.JAVA_LONG, off, 5L);
      p.persistence().persist(off, 8);
      assertTrue(p.persistence().describe().startsWith("JDK MemorySegment.force"), p.persistence().describe());
      assertEquals(1, p.persistence().stats().linesFlushed());
    }
    try (Pool p = Pool.open(file, PoolTest.OPTIONS)) {
      assertEquals(5L, p.memory().get(ValueLayout.JAVA_LONG, p.heapOffset()));
    }
  }
}
