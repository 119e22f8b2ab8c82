package io.pmhash.schemes.group;

import static io.pmhash.schemes.group.GroupCrashSupport.inserts;
import static io.pmhash.schemes.group.GroupCrashSupport.key;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.hash.Hashing;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.CrashModel.Op;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;

/**
 * The DRAM fingerprints of group hashing ({@link GroupCells}, an extension of the paper) agree
 * with the cells — a free cell has fingerprint 0, an occupied one the fingerprint of its key —
 * after inserts into both levels, deletes, updates, an expansion and a shrink, a clean reopen
 * (nothing built at open; each group built by the first operation on it, also when several
 * threads start at once) and a crash recovery (all built by Algorithm 4's scan); and
 * lookups depend on them (a wrong fingerprint hides its record, and the check catches it). The
 * crash tests ({@link GroupCrashTest}) check the same agreement at every drain through {@link
 * GroupInvariants}.
 */
class GroupFingerprintTest {
  @TempDir Path dir;

  @AfterEach
  void closeDryRunTables() {
    GroupCrashSupport.closeDryRuns();
  }

  private static TableOptions options(long capacity) {
    return TableOptions.scheme(GroupProvider.NAME).withParam(GroupProvider.GROUP_SIZE, 64).withInitialCapacity(capacity);
  }

  /** Every key in {@code [from, to)} has value {@code i + 1}; returns how many are in level 2. */
  private static long assertPresent(GroupTable t, int from, int to) {
    long level2 = 0;
    GroupCells c = t.current;
    for (int i = from; i < to; i++) {
      long k = key(i);
      assertEquals(i + 1, t.get(k, -1), "key " + i);
      long h = Hashing.hash(k);
      long cell = c.find(t.pool().memory(), k, c.home(h), GroupCells.fingerprint(h));
      level2 += cell >= c.cells ? 1 : 0;
    }
    return level2;
  }

  @Test
  void fingerprintIsNeverZero() {
    assertEquals(1, GroupCells.fingerprint(0));
    assertEquals(1, GroupCells.fingerprint(0xAB00));
    assertEquals(1, GroupCells.fingerprint(1));
    assertEquals(0xFF, GroupCells.fingerprint(-1));
    assertEquals(0x42, GroupCells.fingerprint(0x1234_5678_9ABC_DE42L));
  }

  @Test
  void insertsDeletesAndUpdatesInBothLevels() {
    try (GroupTable t = (GroupTable) PmHash.createVolatile(options(3000).withParam(GroupProvider.EXPAND, 0))) {
      long n = t.tableSize();
      for (int i = 0; i < 2000; i++) {
        t.put(key(i), i + 1);
      }
      assertEquals(n, t.tableSize(), "no expansion");
      assertEquals(2000, GroupInvariants.fingerprints(t, "after inserts"));
      assertTrue(assertPresent(t, 0, 2000) > 200, "many records in level 2");
      for (int i = 0; i < 2000; i += 3) {
        assertTrue(t.remove(key(i)));
      }
      GroupInvariants.fingerprints(t, "after deletes");
      for (int i = 0; i < 2000; i += 3) {
        assertEquals(-1, t.get(key(i), -1), "deleted key " + i);
      }
      for (int i = 1; i < 2000; i += 3) {
        t.put(key(i), i + 1); // updates in place: fingerprints unchanged
      }
      for (int i = 0; i < 2000; i += 3) {
        t.put(key(i), i + 1); // reinserts into freed cells, some into other cells than before
      }
      GroupInvariants.check(t, "after updates and reinserts");
      assertPresent(t, 0, 2000);
    }
  }

  @Test
  void expansionAndShrinkCarryTheFingerprints() {
    try (GroupTable t = (GroupTable) PmHash.createVolatile(options(0))) {
      long n0 = t.tableSize();
      for (int i = 0; i < 5000; i++) {
        t.put(key(i), i + 1);
      }
      assertTrue(t.stats().details().get("expansions") >= 2, "expanded: " + t.stats());
      GroupInvariants.check(t, "after expansions");
      assertPresent(t, 0, 5000);
      long n1 = t.tableSize();
      for (int i = 0; i < 4900; i++) {
        t.remove(key(i));
      }
      assertTrue(t.tableSize() < n1 && t.stats().details().get("shrinks") >= 1, "shrunk: " + t.stats() + " from N " + n1 + " (initial " + n0 + ")");
      GroupInvariants.check(t, "after shrinks");
      assertPresent(t, 4900, 5000);
    }
  }

  private Path cleanPool(TableOptions o) throws Exception {
    Path file = dir.resolve("clean.pool");
    try (GroupTable t = (GroupTable) PmHash.create(file, o)) {
      for (int i = 0; i < 3000; i++) {
        t.put(key(i), i + 1);
      }
      for (int i = 0; i < 3000; i += 4) {
        t.remove(key(i));
      }
    }
    return file;
  }

  @Test
  void cleanReopenBuildsThemOneGroupAtATime() throws Exception {
    TableOptions o = options(4000).withDurability(Durability.PMEM_EMULATED);
    Path file = cleanPool(o);
    try (GroupTable t = (GroupTable) PmHash.open(file, o)) {
      assertTrue(t.pool().lastShutdownClean());
      assertEquals(2250, t.size());
      assertEquals(0, GroupInvariants.builtGroups(t), "a clean open builds nothing");
      GroupInvariants.fingerprints(t, "after a clean reopen");
      assertEquals(2, t.get(key(1), -1));
      assertEquals(1, GroupInvariants.builtGroups(t), "a read builds its group");
      assertTrue(t.remove(key(2)));
      assertTrue(t.put(key(3001), 1));
      assertTrue(GroupInvariants.builtGroups(t) <= 3, "so do a delete and an insert");
      GroupInvariants.fingerprints(t, "after three operations");
      for (int i = 0; i < 3000; i++) {
        assertEquals(i % 4 == 0 || i == 2 ? -1 : i + 1, t.get(key(i), -1), "key " + i);
      }
      assertEquals(t.current.groups, GroupInvariants.builtGroups(t), "every group was read");
      GroupInvariants.check(t, "after reading every key");
    }
  }

  @Test
  void concurrentFirstOperationsAfterACleanReopen() throws Exception {
    TableOptions o = options(4000).withDurability(Durability.PMEM_EMULATED);
    Path file = cleanPool(o);
    try (GroupTable t = (GroupTable) PmHash.open(file, o)) {
      List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
      List<Thread> threads = new ArrayList<>();
      for (int r = 0; r < 2; r++) {
        int start = r * 1500;
        threads.add(new Thread(() -> {
          try {
            for (int j = 0; j < 3000; j++) {
              int i = (start + j) % 3000;
              if (i % 4 != 0) {
                assertEquals(i + 1, t.get(key(i), -1), "key " + i);
              }
            }
          } catch (Throwable e) {
            failures.add(e);
          }
        }));
      }
      threads.add(new Thread(() -> {
        try {
          for (int i = 3000; i < 3600; i++) {
            assertTrue(t.put(key(i), i + 1));
          }
        } catch (Throwable e) {
          failures.add(e);
        }
      }));
      threads.forEach(Thread::start);
      for (Thread th : threads) {
        th.join();
      }
      assertTrue(failures.isEmpty(), failures.toString());
      GroupInvariants.check(t, "after concurrent first operations");
      for (int i = 0; i < 3600; i++) {
        assertEquals(i < 3000 && i % 4 == 0 ? -1 : i + 1, t.get(key(i), -1), "key " + i);
      }
    }
  }

  @Test
  void crashRecoveryRebuildsThem() throws Exception {
    Path file = dir.resolve("crash.pool");
    Path image = dir.resolve("image.pool");
    TableOptions o = options(4000).withDurability(Durability.PMEM_EMULATED);
    try (GroupTable t = (GroupTable) PmHash.create(file, o)) {
      for (int i = 0; i < 3000; i++) {
        t.put(key(i), i + 1);
      }
      for (int i = 0; i < 3000; i += 4) {
        t.remove(key(i));
      }
      // the file as a crash now would leave it (every store reached the file: the mapping is
      // shared), without the clean-shutdown marker
      Files.copy(file, image);
    }
    try (GroupTable t = (GroupTable) PmHash.open(image, o)) {
      assertFalse(t.pool().lastShutdownClean(), "the image needs recovery");
      assertEquals(2250, t.size());
      GroupInvariants.check(t, "after crash recovery", true);
      for (int i = 0; i < 3000; i++) {
        assertEquals(i % 4 == 0 ? -1 : i + 1, t.get(key(i), -1), "key " + i);
      }
    }
  }

  @Test
  void crashAtEveryDrainOfInsertsAndDeletes() {
    List<Op> setup = inserts(0, 24);
    List<Op> work = new ArrayList<>(inserts(24, 40));
    for (int i = 0; i < 40; i += 5) {
      work.add(Op.remove(key(i)));
    }
    // GroupCrashSupport's verifier runs GroupInvariants.check, fingerprints included, on every image
    GroupCrashSupport.crash(dir, "fingerprints", setup, work, false);
  }

  @Test
  void lookupsUseThemAndTheCheckCatchesAWrongOne() {
    GroupTable t = GroupCrashSupport.dryRun(inserts(0, 200), List.of());
    GroupCells c = t.current;
    long k = key(7);
    long h = Hashing.hash(k);
    long cell = c.find(t.pool().memory(), k, c.home(h), GroupCells.fingerprint(h));
    assertTrue(cell >= 0);
    int fp = c.fp(cell);
    c.setFp(cell, fp == 0xFF ? 1 : fp + 1);
    assertEquals(-1, t.get(k, -1), "a record whose fingerprint does not match is not found");
    assertThrows(AssertionFailedError.class, () -> GroupInvariants.fingerprints(t, "corrupted"));
    c.setFp(cell, fp);
    assertEquals(8, t.get(k, -1));
    GroupInvariants.check(t, "restored");
  }
}
