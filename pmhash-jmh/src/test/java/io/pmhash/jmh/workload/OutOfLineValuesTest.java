package io.pmhash.jmh.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.TableOptions;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The workload's {@code --value-bytes}: every value is a block of the pool's heap that the table
 * points to. A value reads back whole, a replaced or deleted value's block is given back, and the
 * blocks the table points to are owned and distinct. (That the path is not crash-consistent as a
 * whole, a block leaked by a crash mid-operation, is documented, not tested.)
 */
class OutOfLineValuesTest {
  @ParameterizedTest
  @ValueSource(strings = {"nvlh", "nvdh", "dash-eh"})
  void valuesAreBlocksThatReadBackAndAreFreedWhenReplacedOrDeleted(String scheme) throws Exception {
    WorkloadOptions o = WorkloadOptions.parse(new String[] {"--scheme", scheme, "--durability", "VOLATILE", "--value-bytes", "136"});
    try (Target.OutOfLine t = (Target.OutOfLine) Target.create(o, TableOptions.scheme(scheme).withDurability(o.durability()))) {
      int n = 3000;
      for (int i = 0; i < n; i++) {
        t.insert(Keys.key(7, i), i);
      }
      // Checked at once: a freed block is reused by later inserts once its grace period is over.
      long replacedBlock = t.block(Keys.key(7, 5));
      t.insert(Keys.key(7, 5), 1_000_005);
      assertFalse(t.pool().allocator().owned(replacedBlock), "the replaced value's block is free");
      long deletedBlock = t.block(Keys.key(7, n - 1));
      assertTrue(t.delete(Keys.key(7, n - 1)));
      assertFalse(t.delete(Keys.key(7, n - 1)));
      assertFalse(t.pool().allocator().owned(deletedBlock), "the deleted value's block is free");
      for (int i = 0; i < n / 2; i++) {
        t.insert(Keys.key(7, i), 1_000_000 + i); // replaces: a new block, the old one freed
      }
      for (int i = n / 2; i < n; i += 3) {
        assertTrue(t.delete(Keys.key(7, i)));
      }
      Set<Long> blocks = new HashSet<>();
      long present = 0;
      for (int i = 0; i < n; i++) {
        long k = Keys.key(7, i);
        boolean deleted = i == n - 1 || (i >= n / 2 && (i - n / 2) % 3 == 0);
        assertEquals(deleted ? Long.MIN_VALUE : i < n / 2 ? 1_000_000 + i : i, t.get(k), "key " + i);
        if (!deleted) {
          present++;
          long b = t.block(k);
          assertTrue(t.pool().allocator().owned(b), "key " + i + ": its block is owned");
          assertTrue(blocks.add(b), "key " + i + ": its block is its own");
        }
      }
      assertEquals(present, t.size());
    }
  }

  @Test
  void badValueSizesAreRefusedWithAReason() {
    var e = assertThrows(WorkloadOptions.UsageException.class, () -> WorkloadOptions.parse(new String[] {"--value-bytes", "12"}));
    assertTrue(e.getMessage().contains("multiple of 8"), e.getMessage());
    e = assertThrows(WorkloadOptions.UsageException.class,
        () -> WorkloadOptions.parse(new String[] {"--value-bytes", "64", "--key-bytes", "16"}));
    assertTrue(e.getMessage().contains("cannot be combined"), e.getMessage());
    e = assertThrows(WorkloadOptions.UsageException.class,
        () -> WorkloadOptions.parse(new String[] {"--scheme", "pool", "--value-bytes", "64"}));
    assertTrue(e.getMessage().contains("table scheme"), e.getMessage());
  }
}
