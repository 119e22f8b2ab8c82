package io.pmhash.schemes.group;

import static io.pmhash.schemes.group.GroupCrashSupport.crash;
import static io.pmhash.schemes.group.GroupCrashSupport.dryRun;
import static io.pmhash.schemes.group.GroupCrashSupport.inLevel2;
import static io.pmhash.schemes.group.GroupCrashSupport.inserts;
import static io.pmhash.schemes.group.GroupCrashSupport.key;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.crash.CrashHarness;
import io.pmhash.schemes.contract.CrashModel;
import io.pmhash.schemes.contract.CrashModel.Op;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash at every drain of each operation type of group hashing, and of recovery (Algorithm 4):
 * insert into both levels, update, delete from both levels, expansion, shrink. The verifier is
 * {@link GroupCrashSupport}'s. Each workload is checked on a volatile dry run to reach the path
 * it is named after.
 */
class GroupCrashTest {
  @TempDir Path dir;

  @AfterEach
  void closeDryRunTables() {
    GroupCrashSupport.closeDryRuns();
  }

  /** The index of the first of {@code key(0), key(1), ...} whose insert expands the table. */
  static int firstExpandingInsert() {
    GroupTable t = dryRun(List.of(), List.of());
    for (int i = 0; ; i++) {
      long n = t.tableSize();
      t.put(key(i), i + 1);
      if (t.tableSize() != n) {
        return i;
      }
    }
  }

  @Test
  void insertsIntoBothLevels() {
    List<Op> work = inserts(0, 32);
    assertTrue(inLevel2(dryRun(List.of(), work)).size() >= 3, "some inserts go to level 2");
    CrashHarness.Report r = crash(dir, "insert", List.of(), work, true);
    assertTrue(r.crashPoints() >= 2 * 32, r.summary());
  }

  @Test
  void updates() {
    List<Op> setup = inserts(0, 30);
    List<Op> work = new ArrayList<>();
    for (int i = 0; i < 30; i += 3) {
      work.add(Op.put(key(i), -i));
    }
    work.add(new Op(CrashModel.Kind.REPLACE, key(1), 77));
    crash(dir, "update", setup, work, false);
  }

  @Test
  void deletesFromBothLevels() {
    List<Op> setup = inserts(0, 30);
    Set<Long> level2 = inLevel2(dryRun(setup, List.of()));
    assertTrue(level2.size() >= 2, "some records are in level 2: " + level2.size());
    List<Op> work = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      if (level2.contains(key(i)) || i % 3 == 0) {
        work.add(Op.remove(key(i)));
      }
    }
    work.add(Op.put(key(0), 5)); // reuses a freed cell
    crash(dir, "delete", setup, work, true);
  }

  @Test
  void expansion() {
    int at = firstExpandingInsert();
    List<Op> work = inserts(at, at + 2);
    GroupTable t = dryRun(inserts(0, at), work);
    assertEquals(1, t.expansions.get());
    assertTrue(at > GroupCrashSupport.GROUP_SIZE, "the first table holds more than a group: " + at);
    crash(dir, "expansion", inserts(0, at), work, true);
  }

  @Test
  void shrink() {
    List<Op> setup = new ArrayList<>();
    List<Op> work = shrinkWorkload(setup);
    crash(dir, "shrink", setup, work, true);
  }

  /**
   * Fills {@code setup} with inserts up to N = 256 and removes, oldest first, up to the one that
   * shrinks; returns that remove and one insert more. Checks the shrink rehashes several records.
   */
  static List<Op> shrinkWorkload(List<Op> setup) {
    GroupTable t = dryRun(List.of(), List.of());
    int n = 0;
    while (t.tableSize() < 256) {
      t.put(key(n), n + 1);
      setup.add(Op.put(key(n), n + 1));
      n++;
    }
    for (int i = 0; i < n; i++) {
      t.remove(key(i));
      if (t.shrinks.get() > 0) {
        assertTrue(t.size() > 10, "the shrink moves several records: " + t.size());
        return List.of(Op.remove(key(i)), Op.put(key(n), n + 1));
      }
      setup.add(Op.remove(key(i)));
    }
    throw new AssertionError("no shrink after removing every key");
  }
}
