package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.PersistenceStats;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Persist counts of Dash-EH's pointer mode outside structural changes, as {@code
 * docs/format/dash-eh.md} ("Pointer mode: persist order") states them: insert, update and delete
 * are each one redo step of the allocator, 4 drains (entries; commit word; applied actions; commit
 * word cleared); the new record's lines are flushed before the step and ordered by its first
 * drain. Readers (get, scan) flush and drain nothing and leave every byte of the pool as it was.
 */
class DashPointerPersistCountTest {
  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static PersistenceStats since(Pool pool, PersistenceStats before) {
    return pool.persistence().stats().minus(before);
  }

  @Test
  void insertUpdateDeleteAreOneRedoStepEach() throws Exception {
    try (Pool pool = Pool.createVolatile(PoolOptions.defaults().withScheme("dash-eh", 1, 2))) {
      DashPointerTable t = DashPointerCrashTest.create(pool);
      for (int i = 0; i < 100; i++) {
        t.put(b("warm-" + (1000 + i)), b("value-" + (1000 + i))); // formats the 32-byte run: no chunk formatting below
      }
      long splits = t.table.splits.get();
      PersistenceStats s = pool.persistence().stats();
      t.put(b("key-0001"), b("value-0001")); // a 26-byte record: one 32-byte block
      PersistenceStats insert = since(pool, s);
      s = pool.persistence().stats();
      t.put(b("key-0001"), b("value-0002"));
      PersistenceStats update = since(pool, s);
      s = pool.persistence().stats();
      t.remove(b("key-0001"));
      PersistenceStats delete = since(pool, s);
      assertEquals(splits, t.table.splits.get(), "no structural change in the measured operations");
      assertEquals(4, insert.drains(), "insert: " + insert);
      assertEquals(4, update.drains(), "update: " + update);
      assertEquals(4, delete.drains(), "delete: " + delete);
      // lines (measured 7, 7, 5): the new record (1, or 2 when its 16-aligned block crosses a
      // line), the pair (insert only), then the redo step: its entries (1), the commit word (1),
      // each action's line (insert: owned bit, bucket word; update: owned bit, slot word, freed
      // bit, some sharing a line; delete: bucket word, freed bit), the commit word cleared (1)
      assertTrue(insert.linesFlushed() >= 6 && insert.linesFlushed() <= 8, "insert: " + insert);
      assertTrue(update.linesFlushed() >= 5 && update.linesFlushed() <= 8, "update: " + update);
      assertTrue(delete.linesFlushed() >= 4 && delete.linesFlushed() <= 6, "delete: " + delete);
      System.out.println("pointer mode persist counts: insert " + insert + ", update " + update + ", delete " + delete);
    }
  }

  @Test
  void readersNeverWrite() throws Exception {
    try (Pool pool = Pool.createVolatile(PoolOptions.defaults().withScheme("dash-eh", 1, 2))) {
      DashPointerTable t = DashPointerCrashTest.create(pool);
      for (int i = 0; i < 3000; i++) {
        t.put(b("k" + i), b("v" + i));
      }
      byte[] image = pool.memory().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
      PersistenceStats s = pool.persistence().stats();
      for (int i = 0; i < 3100; i++) {
        byte[] v = t.get(b("k" + i));
        if (i < 3000) {
          assertNotNull(v);
        }
      }
      long[] n = {0};
      for (long c = t.scan(0, (k, v) -> n[0]++); c != 0; c = t.scan(c, (k, v) -> n[0]++)) {
        // all parts
      }
      assertEquals(3000, n[0]);
      assertEquals(new PersistenceStats(0, 0), since(pool, s));
      assertArrayEquals(image, pool.memory().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), "readers changed the pool");
    }
  }
}
