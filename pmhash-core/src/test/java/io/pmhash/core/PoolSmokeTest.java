package io.pmhash.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PoolSmokeTest {
  @TempDir Path dir;

  @Test
  void createCloseOpen() throws Exception {
    Path file = dir.resolve("a.pool");
    PoolOptions o = PoolOptions.defaults().withScheme("test", 3, 7, 9).withInitialSize(1 << 20);
    try (Pool p = Pool.create(file, o)) {
      assertEquals(Durability.PROCESS, p.durability());
      p.setRoot(2, p.heapOffset() + 64);
    }
    try (Pool p = Pool.open(file, o.withDurability(Durability.PMEM_EMULATED))) {
      assertTrue(p.lastShutdownClean());
      assertEquals(p.heapOffset() + 64, p.root(2));
      assertEquals("test", p.scheme());
      assertEquals(9, p.schemeParams()[1]);
      assertTrue(p.persistence().describe().contains("native"), p.persistence().describe());
      p.ensureSize(p.size() + 1);
      assertFalse(p.size() < (2 << 20));
    }
  }
}
