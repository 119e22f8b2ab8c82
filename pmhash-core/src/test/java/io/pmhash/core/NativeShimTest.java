package io.pmhash.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.internal.NativeShim;
import io.pmhash.core.internal.NativeShimAccess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On this machine the native path is the one in use, with the instruction CPUID offers; and
 * when the library cannot load, the reason is named.
 */
class NativeShimTest {
  @TempDir Path dir;

  /** The flags the kernel reports for the first CPU. */
  static Set<String> cpuFlags() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
      if (line.startsWith("flags")) {
        return Set.of(line.substring(line.indexOf(':') + 1).trim().split("\\s+"));
      }
    }
    return Set.of();
  }

  @Test
  void nativePathIsInUseWithTheBestInstruction() throws Exception {
    boolean required = Boolean.parseBoolean(System.getProperty("pmhash.native.required", "false"));
    if (!required) {
      // Built without the shim on purpose (-Dpmhash.native.required=false): then the fallback
      // must say why.
      if (!NativeShim.available()) {
        assertNotNull(NativeShim.unavailableReason());
        assertEquals(NativeShim.Instruction.NONE, NativeShim.instruction());
      }
      return;
    }
    assertTrue(NativeShim.available(), "native shim not loaded: " + NativeShim.unavailableReason());
    Set<String> flags = cpuFlags();
    NativeShim.Instruction expected = flags.contains("clwb") ? NativeShim.Instruction.CLWB
        : flags.contains("clflushopt") ? NativeShim.Instruction.CLFLUSHOPT
        : NativeShim.Instruction.CLFLUSH;
    assertEquals(expected, NativeShim.instruction(), "CPU flags: clwb=" + flags.contains("clwb")
        + " clflushopt=" + flags.contains("clflushopt"));
    assertTrue(NativeShim.heavyBarrierAvailable(), "membarrier(PRIVATE_EXPEDITED) is offered by Linux 4.14 and later");
    NativeShim.heavyBarrier();
    assertTrue(io.pmhash.core.concurrent.EpochReclaimer.fences().startsWith("asymmetric"));
    try (Pool p = Pool.create(dir.resolve("n.pool"), PoolTest.OPTIONS.withDurability(Durability.PMEM_EMULATED))) {
      String how = p.persistence().describe();
      assertTrue(how.startsWith("native " + expected.mnemonic() + " + sfence"), how);
      long before = p.persistence().stats().linesFlushed();
      p.persistence().persist(p.heapOffset(), 4096);
      assertEquals(64, p.persistence().stats().linesFlushed() - before);
    }
  }

  /**
   * The packaged library is loaded from an in-memory file on Linux (nothing left in the
   * temporary folder by a killed JVM) and from a temporary file where that is refused; both
   * hold the packaged bytes and both bind.
   */
  @Test
  void packagedLibraryLoadsFromAnInMemoryFileOrATemporaryFile() throws Exception {
    byte[] packaged;
    try (var in = NativeShim.class.getResourceAsStream(NativeShimAccess.resource())) {
      if (in == null) {
        assertFalse(Boolean.parseBoolean(System.getProperty("pmhash.native.required", "false")), "the shim is required but not packaged");
        return;
      }
      packaged = in.readAllBytes();
    }
    Path memory = NativeShimAccess.inMemoryFile(packaged);
    assertNotNull(memory, "memfd_create is in every Linux since 3.17");
    assertTrue(memory.toString().startsWith("/proc/self/fd/"), memory.toString());
    assertArrayEquals(packaged, Files.readAllBytes(memory));
    assertNotNull(NativeShimAccess.bind(memory));
    assertEquals(memory.getParent(), NativeShimAccess.extract(NativeShimAccess.resource()).getParent(), "the default is the in-memory file");

    Path temporary = NativeShimAccess.temporaryFile(packaged);
    try {
      assertArrayEquals(packaged, Files.readAllBytes(temporary));
      assertNotNull(NativeShimAccess.bind(temporary));
    } finally {
      Files.deleteIfExists(temporary);
    }
  }

  @Test
  void missingLibraryNamesTheCause() {
    String reason = assertThrows(Exception.class, () -> NativeShimAccess.bind(dir.resolve("nope.so"))).getMessage();
    assertTrue(reason.contains("nope.so"), reason);
    String missing = assertThrows(Exception.class, () -> NativeShimAccess.extract("/native/none/libpmhash.so")).getMessage();
    assertTrue(missing.contains("no native library"), missing);
  }

  @Test
  void libraryWithoutTheEntryPointsNamesTheMissingSymbol() throws Exception {
    // The JDK's own libjava loads fine but is not our shim.
    Path other = Path.of(System.getProperty("java.home"), "lib", "libjava.so");
    String reason = assertThrows(Exception.class, () -> NativeShimAccess.bind(other)).getMessage();
    assertTrue(reason.contains("pmhash_abi_version missing"), reason);
  }
}
