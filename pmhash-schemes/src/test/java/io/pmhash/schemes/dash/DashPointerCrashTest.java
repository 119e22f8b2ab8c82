package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.crash.CrashHarness;
import io.pmhash.core.crash.CrashPoint;
import io.pmhash.core.crash.ImageKind;
import io.pmhash.core.hash.Hashing;
import io.pmhash.map.spi.OutOfLineRecord;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash tests of Dash-EH's pointer mode (Dash §4.5) at every drain, with the crash simulator:
 * insert, value update, delete, the conditional forms, stash inserts, an insert that triggers a
 * split (with a directory doubling), a delete that triggers a merge (and a halving), and crashes
 * during recovery. Each image is opened, every
 * segment recovered, and checked: no completed write lost, no deleted key back, the in-flight
 * operation all or nothing, no duplicate, size equal to a scan, every record's key hashing to
 * its slot's hash, and record ownership exact: the allocator's owned blocks are exactly the
 * table header, the directory, the segments and the records the slots name, no record named by
 * two slots (no leaked record, no double-owned one, no slot naming a free block); every segment
 * NORMAL, recovered, at most the global depth and named by its directory entries ({@link
 * DashCrashTest#checkShapes}); then the table keeps working. Displacement is crashed too.
 */
class DashPointerCrashTest {
  @TempDir Path dir;

  enum Kind { PUT, REMOVE, PUT_IF_ABSENT, REPLACE, REPLACE_IF, REMOVE_IF }

  record Op(Kind kind, String key, String value, String expected) {
    static Op put(String k, String v) {
      return new Op(Kind.PUT, k, v, null);
    }

    static Op remove(String k) {
      return new Op(Kind.REMOVE, k, null, null);
    }

    void apply(DashPointerTable t) {
      byte[] k = bytes(key);
      switch (kind) {
        case PUT -> t.put(k, bytes(value));
        case REMOVE -> t.remove(k);
        case PUT_IF_ABSENT -> t.putIfAbsent(k, bytes(value));
        case REPLACE -> t.replace(k, bytes(value));
        case REPLACE_IF -> t.replace(k, bytes(expected), bytes(value));
        case REMOVE_IF -> t.remove(k, bytes(expected));
      }
    }

    void apply(Map<String, String> m) {
      switch (kind) {
        case PUT -> m.put(key, value);
        case REMOVE -> m.remove(key);
        case PUT_IF_ABSENT -> m.putIfAbsent(key, value);
        case REPLACE -> m.replace(key, value);
        case REPLACE_IF -> m.replace(key, expected, value);
        case REMOVE_IF -> m.remove(key, expected);
      }
    }
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static PoolOptions options() {
    return PoolOptions.defaults().withScheme("dash-eh", 1, 2)
        .withGeometry(2, 4096, 64 << 10).withInitialSize(1 << 20);
  }

  static DashPointerTable create(Pool pool) {
    return create(pool, 0);
  }

  static DashPointerTable create(Pool pool, long capacity) {
    return new DashPointerTable(DashEhTable.create(pool, NORMAL_BUCKETS, 2, capacity, true));
  }

  private CrashHarness.Report crash(String name, List<Op> setup, List<Op> work, boolean recoveryCrashes) {
    return crash(name, 0, setup, work, recoveryCrashes);
  }

  private CrashHarness.Report crash(String name, long capacity, List<Op> setup, List<Op> work, boolean recoveryCrashes) {
    Map<String, String> s = new HashMap<>();
    setup.forEach(o -> o.apply(s));
    List<Map<String, String>> states = new ArrayList<>();
    states.add(new HashMap<>(s));
    for (Op o : work) {
      o.apply(s);
      states.add(new HashMap<>(s));
    }
    CrashHarness.Builder b = CrashHarness.builder(dir, options())
        .images(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE)
        .randomImages(3, 0x9017L)
        .eachLineCap(24)
        .crashDuringRecovery(recoveryCrashes)
        .setup(pool -> {
          DashPointerTable t = create(pool, capacity);
          for (Op o : setup) {
            o.apply(t);
          }
        });
    if (recoveryCrashes) {
      b.recoveryImages(ImageKind.DRAINED, ImageKind.ALL_PENDING);
    }
    CrashHarness.Report r = b.run(
        (pool, ops) -> {
          DashPointerTable t = new DashPointerTable(DashEhTable.open(pool, true));
          for (int i = 0; i < work.size(); i++) {
            ops.begin(i);
            work.get(i).apply(t);
            ops.end(i);
          }
          t.close(); // a clean shutdown: its marker's images open clean (docs/reliability.md, "Clean close")
        },
        (pool, point) -> verify(pool, point, states, work));
    System.out.println("DashPointerCrashTest " + name + ": " + r.summary());
    assertTrue(r.passed(), r.summary());
    return r;
  }

  private static void verify(Pool pool, CrashPoint point, List<Map<String, String>> states, List<Op> work) {
    String at = point.describe();
    DashPointerTable t = new DashPointerTable(DashEhTable.open(pool, true));
    long size = t.size(); // recovers every segment
    CrashHarness.recovered(pool);
    int done = point.opsCompleted();
    Map<String, String> before = states.get(done);
    Map<String, String> after = point.inFlightOp().isPresent() ? states.get(done + 1) : before;
    String inFlightKey = point.inFlightOp().isPresent() ? work.get((int) point.inFlightOp().getAsLong()).key() : null;
    Map<String, String> seen = new HashMap<>();
    for (long c = t.scan(0, (k, v) -> {
          if (seen.put(new String(k, StandardCharsets.UTF_8), new String(v, StandardCharsets.UTF_8)) != null) {
            throw new AssertionError(at + ": key " + new String(k, StandardCharsets.UTF_8) + " twice");
          }
        }); c != 0; ) {
      c = t.scan(c, (k, v) -> {
        if (seen.put(new String(k, StandardCharsets.UTF_8), new String(v, StandardCharsets.UTF_8)) != null) {
          throw new AssertionError(at + ": key " + new String(k, StandardCharsets.UTF_8) + " twice");
        }
      });
    }
    assertEquals(seen.size(), size, at + ": size equals a scan");
    Set<String> keys = new HashSet<>(before.keySet());
    keys.addAll(after.keySet());
    keys.addAll(seen.keySet());
    for (String k : keys) {
      String got = seen.get(k);
      byte[] v = t.get(bytes(k));
      assertEquals(got, v == null ? null : new String(v, StandardCharsets.UTF_8), at + ": get and scan agree on " + k);
      if (k.equals(inFlightKey)) {
        assertTrue(Objects.equals(got, before.get(k)) || Objects.equals(got, after.get(k)),
            at + ": in-flight key " + k + " is " + got + ", neither " + before.get(k) + " nor " + after.get(k));
      } else {
        assertEquals(before.get(k), got, at + ": key " + k);
      }
    }
    checkOwnership(pool, t, at);
    DashCrashTest.checkShapes(pool, t.table, at);
    for (int i = 0; i < 3; i++) {
      byte[] k = bytes("after-recovery-" + i);
      t.put(k, bytes("v" + i));
      assertEquals("v" + i, new String(t.get(k), StandardCharsets.UTF_8), at + ": table works after recovery");
      t.remove(k);
    }
  }

  /**
   * Owned blocks are exactly the table's structure and the records its slots name; no record is
   * named twice; every allocated slot is covered by its segment and its record's key hashes to
   * the slot's hash.
   */
  static void checkOwnership(Pool pool, DashPointerTable pt, String at) {
    DashEhTable t = pt.table;
    Set<Long> expected = new TreeSet<>();
    expected.add(t.header);
    MemorySegment m = pool.memory();
    expected.add((long) LONG.get(m, t.header + HDR_DIRECTORY));
    Set<Long> records = new TreeSet<>();
    for (long seg : t.segmentOffsets()) {
      expected.add(seg);
      m = pool.memory();
      long shape = DashSegment.shapeAcquire(m, seg);
      for (int i = 0; i < NORMAL_BUCKETS + t.stash; i++) {
        long b = DashSegment.bucket(seg, i);
        for (int a = DashBucket.allocated(DashBucket.bitmap(m, b)); a != 0; a &= a - 1) {
          int slot = Integer.numberOfTrailingZeros(a);
          long h = DashBucket.value(m, b, slot);
          long rec = DashBucket.key(m, b, slot);
          assertTrue(DashSegment.covers(shape, h), at + ": an uncovered record survived recovery");
          assertTrue(records.add(rec), at + ": record " + rec + " is named by two slots");
          assertEquals(h, Hashing.hash(OutOfLineRecord.key(m, rec)), at + ": record " + rec + "'s key does not hash to its slot's hash");
        }
      }
    }
    expected.addAll(records);
    Set<Long> owned = new TreeSet<>();
    pool.allocator().forEachOwned((off, size) -> owned.add(off));
    Set<Long> leaked = new TreeSet<>(owned);
    leaked.removeAll(expected);
    Set<Long> unowned = new TreeSet<>(expected);
    unowned.removeAll(owned);
    assertTrue(leaked.isEmpty() && unowned.isEmpty(), at + ": leaked (owned, unreachable) " + leaked + "; reachable but free " + unowned);
  }

  // ------------------------------------------------------------------ tests

  static String value(int i, int length) {
    return ("v" + i + "-").repeat(length + 1).substring(0, Math.max(1, length));
  }

  @Test
  void insertUpdateDeleteAndCrashDuringRecovery() {
    List<Op> setup = List.of(Op.put("alpha", "1"), Op.put("beta-with-a-longer-key", value(2, 200)), Op.put("gamma", "3"));
    List<Op> work = List.of(
        Op.put("delta", value(4, 40)),                          // insert
        Op.put("beta-with-a-longer-key", value(22, 3)),         // update, shorter value
        Op.put("alpha", value(11, 700)),                        // update, longer value (another size class)
        Op.remove("gamma"),                                     // delete
        new Op(Kind.PUT_IF_ABSENT, "alpha", "no", null),        // present: nothing changes
        new Op(Kind.REPLACE_IF, "delta", "x", value(4, 40)),    // conditional update
        new Op(Kind.REMOVE_IF, "alpha", null, "wrong"),         // conditional delete, refused
        new Op(Kind.REMOVE_IF, "delta", null, "x"),             // conditional delete
        Op.put("", ""));                                        // empty key and value
    // A table created with four segments, so that create's segment flush matters (a one-segment
    // table's segment header is all zero but its version, which recovery does not trust; found
    // by the mutation check).
    long capacity = 2400;
    try (Pool pool = Pool.createVolatile(options())) {
      assertEquals(4, create(pool, capacity).table.segmentOffsets().length, "segments at create");
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
    CrashHarness.Report r = crash("insert-update-delete", capacity, setup, work, true);
    assertTrue(r.crashPoints() >= 7 * 4, r.summary());
    assertTrue(r.recoveryCrashPoints() > 0, r.summary());
  }

  /** {@code n} keys of the given prefix whose target bucket is {@code y}. */
  private static List<String> keysFor(String prefix, int y, int n) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; keys.size() < n; i++) {
      String k = prefix + i;
      if (DashSegment.bucketIndex(Hashing.hash(bytes(k)), DashLayout.NORMAL_BUCKETS - 1) == y) {
        keys.add(k);
      }
    }
    return keys;
  }

  /**
   * An insert that displaces (Dash §4.6): buckets 10 and 11 full, 11 holding records of bucket
   * 10 (probing) in slots 0 and 1 and its own records from slot 2 on, so the insert of one more
   * key of bucket 10 moves 11's record in slot 2 on to 12 and takes that slot; then a delete.
   * The move's pair, bitmaps and drains are crashed (found by the mutation check: no pointer
   * crash test displaced while armed). The freed slot is outside the bucket's metadata line
   * (slots 0 and 1 share it), so that the new pair's flush does not also flush the freed bit.
   */
  @Test
  void displacement() {
    // balanced inserts (the less full of target and probing bucket, the target on a tie):
    // 4 keys of 10 put 10's 2nd and 4th into 11's slots 0 and 1; 14 keys of 11 fill 11's slots
    // 2..7 (and 12); 18 more keys of 10 fill 10 and 11's slots 8..13
    List<String> of10 = keysFor("of-10-", 10, 23);
    List<Op> setup = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      setup.add(Op.put(of10.get(i), value(i, 1 + i)));
    }
    for (String k : keysFor("own-11-", 11, 14)) {
      setup.add(Op.put(k, value(k.length(), 12)));
    }
    for (int i = 4; i < 22; i++) {
      setup.add(Op.put(of10.get(i), value(i, 1 + i)));
    }
    try (Pool pool = Pool.createVolatile(options())) {
      DashPointerTable t = create(pool);
      setup.forEach(o -> o.apply(t));
      MemorySegment m = pool.memory();
      long seg = t.table.segmentOffsets()[0];
      int bm10 = DashBucket.bitmap(m, DashSegment.bucket(seg, 10));
      int bm11 = DashBucket.bitmap(m, DashSegment.bucket(seg, 11));
      assertEquals(SLOTS, DashBucket.count(bm10), "bucket 10 full");
      assertEquals(SLOTS, DashBucket.count(bm11), "bucket 11 full");
      int movable = DashBucket.allocated(bm11) & ~DashBucket.members(bm11);
      assertEquals(2, Integer.numberOfTrailingZeros(movable), "the record to move is in slot 2 of bucket 11");
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
    List<Op> work = List.of(Op.put(of10.get(22), value(77, 30)), Op.remove(of10.get(3)));
    CrashHarness.Report r = crash("displacement", setup, work, true);
    assertTrue(r.crashPoints() >= 6, r.summary());
  }

  @Test
  void stashInsertAndDelete() {
    // keys of one target bucket: 28 fill it and its probing bucket, the rest go to the stash
    List<String> keys = keysFor("stash-", 20, 34);
    List<Op> setup = new ArrayList<>();
    for (int i = 0; i < 28; i++) {
      setup.add(Op.put(keys.get(i), value(i, 10)));
    }
    List<Op> work = new ArrayList<>();
    for (int i = 28; i < 32; i++) {
      work.add(Op.put(keys.get(i), value(i, 10)));
    }
    work.add(Op.put(keys.get(30), value(99, 50)));
    work.add(Op.remove(keys.get(29)));
    work.add(Op.remove(keys.get(3)));
    crash("stash", setup, work, false);
  }

  /** Index of the first insert of the seeded sequence that splits a segment. */
  private static int splitIndex(List<Op> ops) {
    try (Pool pool = Pool.createVolatile(options())) {
      DashPointerTable t = create(pool);
      for (int i = 0; ; i++) {
        long splits = t.table.splits.get();
        ops.get(i).apply(t);
        if (t.table.splits.get() > splits) {
          return i;
        }
      }
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void insertThatSplitsWithDoubling() {
    SplittableRandom rnd = new SplittableRandom(0x5B11L);
    List<Op> all = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      all.add(Op.put("k" + rnd.nextLong() + "-".repeat(rnd.nextInt(20)), value(i, 1 + rnd.nextInt(60))));
    }
    int at = splitIndex(all);
    List<Op> work = new ArrayList<>(all.subList(at, at + 2));
    work.add(Op.put(all.get(3).key(), "updated after the split"));
    work.add(Op.remove(all.get(5).key()));
    CrashHarness.Report r = crash("split", all.subList(0, at), work, true);
    assertTrue(r.crashPoints() >= 12, r.summary());
  }

  /** The removes of the first keys of {@code all} (after the inserts up to the first split) that make the first merge happen. */
  private static int[] mergeIndexes(List<Op> all) {
    try (Pool pool = Pool.createVolatile(options())) {
      DashPointerTable t = create(pool);
      int at = 0;
      for (; t.table.splits.get() == 0; at++) {
        all.get(at).apply(t);
      }
      for (int i = 0; ; i++) {
        t.remove(bytes(all.get(i).key()));
        if (t.table.merges.get() > 0) {
          assertEquals(1, t.table.halvings.get(), "the merge halves the directory too");
          return new int[] {at, i};
        }
      }
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void deleteThatMergesAndHalves() {
    SplittableRandom rnd = new SplittableRandom(0x3E26L);
    List<Op> all = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      all.add(Op.put("m" + rnd.nextLong() + "-".repeat(rnd.nextInt(20)), value(i, 1 + rnd.nextInt(60))));
    }
    int[] ix = mergeIndexes(all);
    List<Op> setup = new ArrayList<>(all.subList(0, ix[0]));
    for (int i = 0; i < ix[1]; i++) {
      setup.add(Op.remove(all.get(i).key()));
    }
    List<Op> work = List.of(Op.remove(all.get(ix[1]).key()), Op.put(all.get(ix[1] + 1).key(), "updated after the merge"),
        Op.remove(all.get(ix[1] + 2).key()));
    CrashHarness.Report r = crash("merge", setup, work, false);
    assertTrue(r.crashPoints() >= 12, r.summary());
  }
}
