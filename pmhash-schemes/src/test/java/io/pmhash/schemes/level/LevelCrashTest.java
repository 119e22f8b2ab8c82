package io.pmhash.schemes.level;

import static io.pmhash.schemes.level.LevelCrashSupport.crash;
import static io.pmhash.schemes.level.LevelCrashSupport.dryRun;
import static io.pmhash.schemes.level.LevelCrashSupport.key;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.crash.CrashHarness;
import io.pmhash.schemes.contract.CrashModel.Op;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash at every drain of each operation type of level hashing, and of recovery: insert, update
 * (both paths), delete, movement, resize, shrink. The verifier is {@link LevelCrashSupport}'s.
 * Each workload is checked on a volatile dry run to reach the path it is named after.
 */
class LevelCrashTest {
  @TempDir Path dir;

  @AfterEach
  void closeDryRunTables() {
    LevelCrashSupport.closeDryRuns();
  }

  /** The index of the first of {@code key(0), key(1), ...} whose insert changes {@code counter}. */
  static int firstInsertChanging(ToLongFunction<LevelTable> counter) {
    LevelTable t = dryRun(0, List.of(), List.of());
    for (int i = 0; ; i++) {
      long before = counter.applyAsLong(t);
      t.put(key(i), i);
      if (counter.applyAsLong(t) != before) {
        return i;
      }
    }
  }

  static List<Op> inserts(int from, int to) {
    List<Op> ops = new ArrayList<>();
    for (int i = from; i < to; i++) {
      ops.add(Op.put(key(i), i));
    }
    return ops;
  }

  @Test
  void insertsIntoAnEmptyTable() {
    CrashHarness.Report r = crash(dir, "insert", 0, List.of(), inserts(0, 12), true);
    assertTrue(r.crashPoints() >= 24, r.summary());
  }

  @Test
  void updatesOfANearlyFullTableTakeBothUpdatePaths() {
    int moveAt = firstInsertChanging(t -> t.moves.get());
    List<Op> setup = inserts(0, moveAt);
    List<Op> work = new ArrayList<>();
    for (int i = 0; i < moveAt; i += 3) {
      work.add(Op.put(key(i), -i));
    }
    LevelTable t = dryRun(0, setup, List.of());
    assertTrue(fullBuckets(t) > 0, "some bucket is full, so some update is in place");
    crash(dir, "update", 0, setup, work, false);
  }

  @Test
  void deletes() {
    List<Op> work = new ArrayList<>();
    for (int i = 0; i < 20; i += 2) {
      work.add(Op.remove(key(i)));
    }
    crash(dir, "delete", 0, inserts(0, 20), work, false);
  }

  @Test
  void movement() {
    int moveAt = firstInsertChanging(t -> t.moves.get());
    List<Op> work = inserts(moveAt, moveAt + 1);
    LevelTable t = dryRun(0, inserts(0, moveAt), List.of());
    long moves = t.moves.get();
    long resizes = t.resizes.get();
    work.forEach(o -> o.apply(t));
    assertTrue(t.moves.get() > moves, "the insert moves a record");
    assertEquals(resizes, t.resizes.get(), "and does not resize");
    crash(dir, "movement", 0, inserts(0, moveAt), work, true);
  }

  /**
   * The bottom-to-top movement: after the first resize the old top level is the bottom one and the
   * new top level has room, so an insert finding its four buckets full moves a bottom record up
   * instead of resizing again.
   */
  @Test
  void bottomToTopMovement() {
    int b2tAt = firstInsertChanging(t -> t.bottomToTopMoves.get());
    List<Op> work = inserts(b2tAt, b2tAt + 1);
    LevelTable t = dryRun(0, inserts(0, b2tAt), List.of());
    long up = t.bottomToTopMoves.get();
    long resizes = t.resizes.get();
    assertTrue(resizes > 0, "reached after a resize, as in the original");
    work.forEach(o -> o.apply(t));
    assertEquals(up + 1, t.bottomToTopMoves.get(), "the insert moves a bottom record up");
    assertEquals(resizes, t.resizes.get(), "and does not resize");
    crash(dir, "bottom-to-top", 0, inserts(0, b2tAt), work, true);
  }

  @Test
  void resize() {
    int resizeAt = firstInsertChanging(t -> t.resizes.get());
    List<Op> work = inserts(resizeAt, resizeAt + 2);
    LevelTable t = dryRun(0, inserts(0, resizeAt), work);
    assertEquals(1, t.resizes.get());
    crash(dir, "resize", 0, inserts(0, resizeAt), work, true);
  }

  @Test
  void shrink() {
    List<Op> setup = new ArrayList<>();
    List<Op> work = shrinkWorkload(setup);
    crash(dir, "shrink", 0, setup, work, true);
  }

  /**
   * Fills {@code setup} with inserts up to k = 4 and removes, newest first, up to the one that
   * shrinks; returns that remove and one more op. Checks the shrink moves several records of the
   * top level into the old bottom level.
   */
  static List<Op> shrinkWorkload(List<Op> setup) {
    LevelTable t = dryRun(0, List.of(), List.of());
    int n = 0;
    while (t.k() < 4) {
      t.put(key(n), n);
      setup.add(Op.put(key(n), n));
      n++;
    }
    // newest first: the oldest records, which filled the top level, are left for the shrink to move
    for (int i = n - 1; i >= 0; i--) {
      t.remove(key(i));
      if (t.shrinks.get() > 0) {
        assertTrue(t.size() > 5, "the shrink moves several records");
        return List.of(Op.remove(key(i)), Op.put(key(n), n));
      }
      setup.add(Op.remove(key(i)));
    }
    throw new AssertionError("no shrink after removing every key");
  }

  static int fullBuckets(LevelTable t) {
    int full = 0;
    LevelTable.Levels l = t.levels;
    for (long i = 0; i < 1L << l.k(); i++) {
      full += LevelBucket.count(t.pool.memory(), LevelTable.bucket(l.top(), i)) == LevelLayout.SLOTS ? 1 : 0;
    }
    for (long i = 0; i < 1L << (l.k() - 1); i++) {
      full += LevelBucket.count(t.pool.memory(), LevelTable.bucket(l.bottom(), i)) == LevelLayout.SLOTS ? 1 : 0;
    }
    return full;
  }
}
