package io.pmhash.schemes.group;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.PersistenceStats;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.StableKeyReaders;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Optimistic readers while writers fill groups, expand the table many times and update values in
 * place: a key present for the whole run is always found, with one of the values it ever had
 * (never a torn or foreign one, never absent while an expansion rehashes it); a key updated by one
 * writer is read with a value of its own sequence. After the writers finish the table holds
 * exactly what they wrote. Readers never write: the persist counters do not move during a
 * read-only phase with readers alone. No sleeps: readers run until the writers are done.
 */
class GroupConcurrencyTest {
  /** The second version of a stable key's value: {@code key ^ MARK} (the first is {@code ~key}). */
  static final long MARK = 0x5A5A_0000_0000_0000L;

  @Test
  void readersSeeStableKeysAcrossExpansionsAndUpdates() throws Exception {
    try (GroupTable t = (GroupTable) PmHash.createVolatile(TableOptions.scheme(GroupProvider.NAME).withParam(GroupProvider.GROUP_SIZE, 64))) {
      int stable = 2_000;
      int writers = 2;
      int perWriter = 40_000;
      List<StableKeyReaders.Writer> bodies = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        long base = 1_000_000L * (w + 1);
        bodies.add(() -> {
          for (long i = 0; i < perWriter; i++) {
            assertTrue(t.put(base + i, i));
            if (i % 3 == 2) {
              assertTrue(t.remove(base + i - 1), "remove " + (base + i - 1));
            }
            if (i % 5 == 0) {
              // a stable key's value flips between its two versions, in place, under the readers
              long k = i % stable;
              t.put(k, (i / 5) % 2 == 0 ? k ^ MARK : ~k);
            }
          }
        });
      }
      long reads = StableKeyReaders.whileReading(t, stable, bodies, (k, v) -> v == ~k || v == (k ^ MARK));
      assertTrue(t.expansions.get() >= 5, "the run expanded the table: " + t.stats());
      assertTrue(reads > 0);
      long expected = stable;
      for (int w = 0; w < writers; w++) {
        long base = 1_000_000L * (w + 1);
        for (long i = 0; i < perWriter; i++) {
          boolean present = i % 3 != 1 || i == perWriter - 1;
          assertEquals(present ? i : -1, t.get(base + i, -1), "writer " + w + " key " + i);
          expected += present ? 1 : 0;
        }
      }
      assertEquals(expected, t.size());
      GroupInvariants.check(t, "after the concurrent run");
      System.out.println("GroupConcurrencyTest: " + reads + " optimistic reads, " + t.stats());

      // readers alone never write: no flush, no drain, no change to the table's bytes
      PersistenceStats before = t.pool().persistence().stats();
      byte[] image = t.pool().memory().asSlice(t.current.base, GroupLayout.tableBytes(t.tableSize())).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
      Thread[] readers = new Thread[2];
      for (int r = 0; r < readers.length; r++) {
        readers[r] = Thread.ofPlatform().start(() -> {
          for (long k = 0; k < 100_000; k++) {
            t.get(k, 0);
            t.containsKey(k + 1_000_000);
          }
        });
      }
      for (Thread r : readers) {
        r.join();
      }
      PersistenceStats d = t.pool().persistence().stats().minus(before);
      assertEquals(0, d.drains() + d.linesFlushed(), "readers flushed or drained");
      byte[] after = t.pool().memory().asSlice(t.current.base, GroupLayout.tableBytes(t.tableSize())).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
      assertTrue(java.util.Arrays.equals(image, after), "readers changed the table");
    }
  }
}
