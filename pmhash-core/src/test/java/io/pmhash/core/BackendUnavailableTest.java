package io.pmhash.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * pmhash-core's tests run without the {@code pmhash-llpl} module: an llpl pool asked for, or a
 * PMDK pool file met, is refused with a {@link BackendUnavailableException} that names the module
 * and the Debian packages, before anything is created or written; FFM pools are untouched by it.
 */
class BackendUnavailableTest {
  @TempDir Path dir;

  @Test
  void aPmdkPoolFileNamesWhatToInstallAndIsLeftAlone() throws Exception {
    Path file = dir.resolve("pmdk.pool");
    byte[] bytes = new byte[64 << 10];
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 0x004A424F4D454D50L); // "PMEMOBJ\0"
    Files.write(file, bytes);
    for (var call : new java.util.concurrent.Callable<?>[] {
        () -> Pool.open(file, PoolOptions.defaults()), () -> Pool.inspect(file)}) {
      BackendUnavailableException e = assertThrows(BackendUnavailableException.class, call::call);
      assertTrue(e.getMessage().contains("pmhash-llpl") && e.getMessage().contains("libpmemobj1 libpmempool1"), e.getMessage());
    }
    assertArrayEquals(bytes, Files.readAllBytes(file));
  }

  @Test
  void anLlplCreateNamesWhatToInstallAndMakesNoFile() {
    Path file = dir.resolve("new.pool");
    BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
        () -> Pool.create(file, PoolOptions.defaults().withScheme("test", 1).withBackend("llpl")));
    assertTrue(e.getMessage().contains("pmhash-llpl"), e.getMessage());
    assertFalse(Files.exists(file));
  }

  @Test
  void anUnknownBackendNameIsRefusedWithTheChoices() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PoolOptions.defaults().withBackend("pmdk"));
    assertTrue(e.getMessage().contains("'ffm'") && e.getMessage().contains("'llpl'"), e.getMessage());
  }

  @Test
  void anFfmFileOpensWithTheFfmBackendNamedAndIsRefusedAsLlpl() throws Exception {
    Path file = dir.resolve("ffm.pool");
    Pool.create(file, PoolOptions.defaults().withScheme("test", 1).withDurability(Durability.PROCESS).withBackend("ffm")).close();
    Pool.open(file, PoolOptions.defaults().withBackend("ffm")).close();
    byte[] before = Files.readAllBytes(file);
    assertThrows(BackendMismatchException.class, () -> Pool.open(file, PoolOptions.defaults().withBackend("llpl")));
    assertArrayEquals(before, Files.readAllBytes(file));
  }
}
