package io.pmhash.schemes.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.alloc.Reservation;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An llpl pool of a scheme made before the scheme's blocks were PMDK objects kept its table in
 * pmhash's heap inside the pool block, root 0 naming a block of pmhash's allocator. Such a pool is
 * refused at open with a {@link CorruptPoolException} naming root 0's offset (docs/llpl.md, Other
 * limits), not read as a table. No file of the old build was kept: the test makes the old shape
 * by hand from a new pool: a block of pmhash's allocator (as the old build used) holding a copy of
 * the table header, published into root 0, so the only difference from a good pool is whose block
 * root 0 names.
 */
class OldLlplPoolsRefusedTest {
  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(strings = {"nvlh", "nvdh", "dash-eh", "cceh", "esh", "level", "group", "dash-lh"})
  void aTableHeaderInPmhashsHeapIsRefusedAtOpen(String scheme) throws Exception {
    Path file = dir.resolve(scheme + ".pool");
    try (LongHashTable t = PmHash.create(file, TableOptions.scheme(scheme).withBackend("llpl").withDurability(Durability.PROCESS))) {
      for (long k = 1; k <= 100; k++) {
        t.put(k, k);
      }
    }
    long old;
    try (Pool pool = Pool.open(file, PoolOptions.defaults().withDurability(Durability.PROCESS))) {
      long header = pool.root(0);
      assertFalse(pool.allocator().schemeAllocator() == pool.schemeAllocator(), scheme + ": the seam is PMDK's");
      Reservation r = pool.allocator().reserve(256);
      old = r.offset();
      MemorySegment m = pool.memory();
      MemorySegment.copy(m, header, m, old, 256);
      pool.persistence().persist(old, 256);
      pool.allocator().publish(r, pool.rootWord(0));
      assertEquals(old, pool.root(0));
      assertTrue(old >= pool.headerOffset() && old < pool.size(), "the copy is in the pool block, as in the old build");
    }
    CorruptPoolException e = assertThrows(CorruptPoolException.class,
        () -> PmHash.open(file, TableOptions.any().withDurability(Durability.PROCESS)).close(), scheme);
    assertTrue(e.getMessage().contains(Long.toString(old)), scheme + ": the refusal names root 0's offset " + old + ": " + e.getMessage());
    System.out.println(scheme + ": " + e.getMessage());
  }
}
