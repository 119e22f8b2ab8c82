package io.pmhash.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.jmh.workload.Keys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bare llpl baseline is a correct map for what the benchmark does with it (needs
 * libpmemobj, as the llpl backend's tests do): inserts, updates, deletes over tombstones, absent
 * keys, and the two ways it refuses input — reserved keys, a full stripe — with messages.
 */
class LlplHeapStoreTest {
  @TempDir java.nio.file.Path dir;

  @Test
  void putGetUpdateRemoveOverTombstones() {
    LlplHeapStore s = new LlplHeapStore(dir.resolve("t.pool"), 20_000);
    int n = 20_000;
    for (int i = 0; i < n; i++) {
      s.put(Keys.key(42, i), i);
    }
    assertEquals(n, s.size());
    for (int i = 0; i < n; i++) {
      assertEquals(i, s.get(Keys.key(42, i), -1));
    }
    assertEquals(-1, s.get(Keys.key(42, n + 1), -1), "never inserted");
    for (int i = 0; i < n; i += 2) {
      s.remove(Keys.key(42, i));
    }
    for (int i = 1; i < n; i += 2) {
      s.put(Keys.key(42, i), -i); // updates in place
    }
    assertEquals(n / 2, s.size());
    for (int i = 0; i < n; i++) {
      assertEquals(i % 2 == 0 ? -1 : -i, s.get(Keys.key(42, i), -1), "key index " + i);
    }
    for (int i = 0; i < n; i += 2) {
      s.put(Keys.key(42, i), 7); // back into tombstones
    }
    assertEquals(n, s.size());
    assertEquals(7, s.get(Keys.key(42, 0), -1));
  }

  @Test
  void refusesReservedKeysAndSaysWhenAStripeIsFull() {
    LlplHeapStore s = new LlplHeapStore(dir.resolve("full.pool"), 16);
    String reserved = assertThrows(IllegalArgumentException.class, () -> s.put(0, 1)).getMessage();
    assertTrue(reserved.contains("reserved"), reserved);
    assertThrows(IllegalArgumentException.class, () -> s.put(LlplHeapStore.DELETED, 1));
    // capacity 16 gives the minimum, 32 slots per stripe: one more key than all the stripes'
    // slots together fills some stripe before the end (pigeonhole)
    IllegalStateException full = assertThrows(IllegalStateException.class, () -> {
      for (int i = 0; i <= LlplHeapStore.STRIPES * 32; i++) {
        s.put(Keys.key(7, i), i);
      }
    });
    assertTrue(full.getMessage().contains("does not grow"), full.getMessage());
  }
}
