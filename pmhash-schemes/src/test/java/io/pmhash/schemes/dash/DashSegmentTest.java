package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.PersistenceStats;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.hash.Hashing;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Bucket and segment operations in a one-segment table (global depth 0): balanced insert picks
 * the less full bucket, displacement, stashing with overflow fingerprints, overflow index and
 * membership, the overflow-count path, and the exact persist cost of each (Dash §4.6: 2 drains
 * per insert, 1 per delete and update, when nothing structural happens).
 */
class DashSegmentTest {
  private Pool pool;
  private DashEhTable t;
  private long seg;
  private long nextKey = 1;

  @BeforeEach
  void setUp() {
    pool = Pool.createVolatile(PoolOptions.defaults().withScheme("dash-eh", 1, 2).withInitialSize(2 << 20));
    t = DashEhTable.create(pool, 2, 0);
    seg = t.locate(pool.memory(), 0);
  }

  @AfterEach
  void tearDown() {
    t.close();
  }

  /** Fresh keys whose target bucket is {@code y}. */
  private long[] keysFor(int y, int n) {
    long[] out = new long[n];
    int i = 0;
    while (i < n) {
      long k = nextKey++;
      if (DashSegment.bucketIndex(Hashing.hash(k), DashLayout.NORMAL_BUCKETS - 1) == y) {
        out[i++] = k;
      }
    }
    return out;
  }

  private MemorySegment m() {
    return pool.memory();
  }

  private int count(int y) {
    return DashBucket.count(DashBucket.bitmap(m(), DashSegment.bucket(seg, y)));
  }

  /** @return the bucket index holding the key (64.. for stash buckets), or -1 */
  private int where(long key) {
    long h = Hashing.hash(key);
    int y = DashSegment.bucketIndex(h, DashLayout.NORMAL_BUCKETS - 1);
    long loc = t.segments.findLocked(m(), seg, DashSegment.bucket(seg, y), DashSegment.bucket(seg, (y + 1) & 63), key, DashSegment.fingerprintOf(h));
    return loc < 0 ? -1 : (int) (((loc & ~63L) - seg - SEG_BUCKETS) / BUCKET_BYTES);
  }

  private long drains(Runnable r) {
    PersistenceStats before = pool.persistence().stats();
    r.run();
    return pool.persistence().stats().drains() - before.drains();
  }

  @Test
  void balancedInsertPicksTheLessFullBucketAndCostsTwoDrains() {
    SplittableRandom r = new SplittableRandom(42);
    for (int i = 0; i < 600; i++) {
      long k = r.nextLong();
      int y = DashSegment.bucketIndex(Hashing.hash(k), DashLayout.NORMAL_BUCKETS - 1);
      int c1 = count(y);
      int c2 = count((y + 1) & 63);
      if (c1 == SLOTS && c2 == SLOTS) {
        continue; // would displace or stash: covered below
      }
      int expected = c1 <= c2 ? y : (y + 1) & 63;
      assertEquals(2, drains(() -> assertTrue(t.put(k, 1))), "insert " + i);
      assertEquals(expected, where(k), "insert " + i);
      boolean member = expected != y;
      long b = DashSegment.bucket(seg, expected);
      int bm = DashBucket.bitmap(m(), b);
      int slot = DashBucket.find(m(), b, bm, k, DashSegment.fingerprintOf(Hashing.hash(k)));
      assertEquals(member, (DashBucket.members(bm) & (1 << slot)) != 0, "membership bit");
    }
  }

  @Test
  void updateAndDeleteCostOneDrainEach() {
    long[] keys = keysFor(5, 10);
    for (long k : keys) {
      assertEquals(2, drains(() -> t.put(k, k)));
    }
    for (long k : keys) {
      assertEquals(1, drains(() -> assertFalse(t.put(k, k + 1))));
      assertEquals(1, drains(() -> assertTrue(t.replace(k, k + 1, k + 2))));
    }
    for (long k : keys) {
      assertEquals(1, drains(() -> assertTrue(t.remove(k))));
      assertEquals(0, drains(() -> assertFalse(t.remove(k))));
    }
    assertEquals(0, count(5) + count(6));
  }

  @Test
  void displacementMovesARecordOfTheProbingBucketToItsOwnProbingBucket() {
    long[] of11 = keysFor(11, 14);   // 11 and 12 get 7 each
    for (long k : of11) {
      t.put(k, k);
    }
    assertEquals(7, count(11));
    assertEquals(7, count(12));
    long[] of10 = keysFor(10, 22);   // 10 fills to 14, 11 to 14, then one displacement
    for (int i = 0; i < 21; i++) {
      long k = of10[i];
      assertEquals(2, drains(() -> t.put(k, k)));
    }
    assertEquals(SLOTS, count(10));
    assertEquals(SLOTS, count(11));
    long last = of10[21];
    // copy pair, publish copy, free original, then the insert's two drains
    assertEquals(5, drains(() -> t.put(last, last)));
    assertEquals(11, where(last));
    assertEquals(8, count(12));
    for (long k : of11) {
      assertEquals(k, t.get(k, -1));
    }
    for (long k : of10) {
      assertEquals(k, t.get(k, -1));
    }
    assertEquals(0, count(64) + count(65), "nothing stashed");
  }

  @Test
  void stashWithOverflowFingerprintsIndexMembershipAndCount() {
    long[] of20 = keysFor(20, 28 + 12);
    for (int i = 0; i < 28; i++) {
      t.put(of20[i], i);
    }
    assertEquals(SLOTS, count(20));
    assertEquals(SLOTS, count(21));
    long b20 = DashSegment.bucket(seg, 20);
    long b21 = DashSegment.bucket(seg, 21);
    List<Long> stashed = new ArrayList<>();
    for (int i = 28; i < 40; i++) {
      long k = of20[i];
      assertEquals(2, drains(() -> assertTrue(t.put(k, k))), "stash insert");
      assertTrue(where(k) >= 64, "in the stash");
      stashed.add(k);
      long w20 = DashBucket.overflowWord(m(), b20);
      long w21 = DashBucket.overflowWord(m(), b21);
      int n = stashed.size();
      assertEquals((1 << Math.min(n, 4)) - 1, DashBucket.ovfBitmap(w20) & OVF_VALID_MASK, "target's overflow fps");
      assertEquals(0, DashBucket.ovfMember(w20) & 0xF);
      assertEquals((1 << Math.max(0, Math.min(n - 4, 4))) - 1, DashBucket.ovfBitmap(w21) & OVF_VALID_MASK, "probing bucket's overflow fps");
      assertEquals((1 << Math.max(0, Math.min(n - 4, 4))) - 1, DashBucket.ovfMember(w21) & 0xF, "membership: they belong to the bucket before");
      assertEquals(Math.max(0, n - 8), DashBucket.ovfCount(w20), "overflow count");
      assertEquals(n > 8, (DashBucket.ovfBitmap(w20) & STASH_FLAG) != 0, "check-the-stash flag");
    }
    // overflow index: fps 0..3 of bucket 20 point at the stash bucket their record is in
    long w20 = DashBucket.overflowWord(m(), b20);
    for (int j = 0; j < 4; j++) {
      int idx = (DashBucket.ovfIndex(w20) >>> (2 * j)) & 3;
      long k = stashed.get(j);
      assertEquals(where(k) - 64, idx);
      assertEquals(DashSegment.fingerprintOf(Hashing.hash(k)), DashBucket.ovfFingerprint(m(), b20, j));
    }
    for (int i = 0; i < 40; i++) {
      assertEquals(i < 28 ? i : of20[i], t.get(of20[i], -1));
    }
    // negative search for a key of bucket 20 that is absent: must probe the stash, find nothing
    assertEquals(-1, t.get(keysFor(20, 1)[0], -1));
    // deletes from the stash clear overflow metadata, last-in first
    for (int i = stashed.size() - 1; i >= 0; i--) {
      long k = stashed.get(i);
      assertEquals(1, drains(() -> assertTrue(t.remove(k))), "stash delete");
    }
    long w = DashBucket.overflowWord(m(), b20);
    assertEquals(0, DashBucket.ovfBitmap(w));
    assertEquals(0, DashBucket.ovfCount(w));
    assertEquals(0, DashBucket.ovfBitmap(DashBucket.overflowWord(m(), b21)) & OVF_VALID_MASK);
    for (int i = 0; i < 28; i++) {
      assertEquals(i, t.get(of20[i], -1));
    }
  }

  @Test
  void rebuildOverflowReproducesTheRuntimeMetadata() {
    long[] of30 = keysFor(30, 40);
    for (long k : of30) {
      t.put(k, k);
    }
    byte[] before = m().asSlice(seg, t.segments.bytes).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    t.segments.rebuildOverflow(m(), seg);
    for (long k : of30) {
      assertEquals(k, t.get(k, -1));
    }
    long b = DashSegment.bucket(seg, 30);
    assertEquals(before[(int) (b - seg + OVF_COUNT)], m().get(java.lang.foreign.ValueLayout.JAVA_BYTE, b + OVF_COUNT));
  }

  @Test
  void aLimitedCountIsExactUpToItsLimitAndAboveItPast() {
    for (long k : keysFor(40, 9)) {
      t.put(k, k);
    }
    for (long k : keysFor(3, 5)) {
      t.put(k, k);
    }
    assertEquals(14, t.segments.records(m(), seg));
    assertEquals(14, t.segments.records(m(), seg, 14));
    assertEquals(14, t.segments.records(m(), seg, 1000));
    assertTrue(t.segments.records(m(), seg, 13) > 13);
    assertTrue(t.segments.records(m(), seg, 0) > 0);
    assertTrue(t.segments.records(m(), seg, 4) > 4); // stops after buckets 3 and 4 (5 records), before 40
    assertTrue(t.segments.records(m(), seg, 4) < 14);
  }

  @Test
  void buddiesMergeAtTheThresholdAndNotOneRecordAbove() {
    List<Long> keys = new ArrayList<>();
    SplittableRandom r = new SplittableRandom(7);
    while (t.splits.get() == 0) {
      long k = r.nextLong();
      t.put(k, k);
      keys.add(k);
    }
    long left = t.locate(m(), 0);
    long right = t.locate(m(), -1L);
    assertTrue(left != right, "one split gives two buddies");
    long threshold = t.merge.threshold();
    while (keys.size() > threshold + 1) {
      assertTrue(t.remove(keys.remove(keys.size() - 1)));
    }
    assertEquals(0, t.merges.get(), "no merge above the threshold, whatever the deletes emptied");
    t.merge.maybeMerge(left);
    t.merge.maybeMerge(right);
    assertEquals(0, t.merges.get(), "threshold + 1 records: no merge");
    assertTrue(t.remove(keys.remove(keys.size() - 1)));
    t.merge.maybeMerge(left); // the remove merged already if it emptied a bucket; then this one finds one segment
    assertEquals(1, t.merges.get(), "threshold records: merged");
    for (long k : keys) {
      assertEquals(k, t.get(k, -1));
    }
  }
}
