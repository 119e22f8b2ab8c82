package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashBucket.allocated;
import static io.pmhash.schemes.dash.DashBucket.bitmap;
import static io.pmhash.schemes.dash.DashBucket.key;
import static io.pmhash.schemes.dash.DashBucket.ovfBitmap;
import static io.pmhash.schemes.dash.DashBucket.overflowWord;
import static io.pmhash.schemes.dash.DashBucket.stashCandidates;
import static io.pmhash.schemes.dash.DashLayout.STASH_FLAG;
import static io.pmhash.schemes.dash.DashLhLayout.NODE_BUCKET;
import static io.pmhash.schemes.dash.DashSegment.bucket;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.hash.Hashing;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Layout version 2's overflow metadata of chained records (docs/format/dash-lh.md, "Chained stash
 * bucket"): with fewer than four stash buckets a chained record is named by an overflow entry
 * with the chain's index in its target or probing bucket (counted, flag set, only where both are
 * full); with four it is always counted. Checked on a grown table: every chained record is named
 * one way or the other and is found; and searches for absent keys walk the chain far less often
 * than when every chained record set its target bucket's flag (layout version 1, recomputed here
 * from the same table).
 */
class DashLhChainOverflowTest {
  @ParameterizedTest
  @ValueSource(ints = {2, 3, 4})
  void chainedRecordsAreNamedByAChainEntryOrCountedAndMissesRarelyWalkTheChain(int stash) {
    try (DashLhTable t = DashLhTable.create(
        Pool.createVolatile(PoolOptions.defaults().withScheme("dash-lh", DashLhLayout.LAYOUT_VERSION, stash, 64, 8)), stash, 64, 8)) {
      SplittableRandom r = new SplittableRandom(5);
      for (int i = 0; i < 300_000; i++) {
        t.put(r.nextLong(), i);
      }
      DashSegment s = t.segments;
      long[] segs = t.segmentOffsets();
      MemorySegment m = t.pool.memory();
      int chained = 0;
      int byEntry = 0;
      Set<Long> v1Flagged = new HashSet<>(); // the target buckets version 1 flagged for the chain
      for (long seg : segs) {
        for (long node = DashLhSegment.chainHead(m, seg); node != 0; node = DashLhSegment.nextNode(m, node)) {
          long b = node + NODE_BUCKET;
          for (int a = allocated(bitmap(m, b)); a != 0; a &= a - 1) {
            long k = key(m, b, Integer.numberOfTrailingZeros(a));
            long h = Hashing.hash(k);
            int y = s.bucketIndex(h);
            long b1 = bucket(seg, y);
            long b2 = bucket(seg, (y + 1) & s.mask);
            int fp = DashSegment.fingerprintOf(h);
            long w1 = overflowWord(m, b1);
            long w2 = overflowWord(m, b2);
            boolean entry = stash < 4 && ((stashCandidates(m, b1, w1, fp, 0) | stashCandidates(m, b2, w2, fp, 1)) & 1 << stash) != 0;
            boolean flag = (ovfBitmap(w1) & STASH_FLAG) != 0;
            assertTrue(entry || flag, "chained key " + k + " is named by no overflow entry and its target is not flagged");
            assertTrue(t.lh.chainMayHold(m, seg, w1, s.overflowCandidates(m, b1, w1, b2, w2, fp)),
                "a search for chained key " + k + " walks the chain");
            assertTrue(t.containsKey(k), "chained key " + k + " is found");
            chained++;
            byEntry += entry ? 1 : 0;
            v1Flagged.add(b1);
          }
        }
      }
      assertTrue(chained >= 200, "the table grew chains: " + chained + " chained records, " + t.stats().details());
      if (stash == 4) {
        assertEquals(0, byEntry, "four stash buckets leave no index value for the chain: every chained record is counted");
        return;
      }
      assertTrue(byEntry >= chained * 9 / 10, byEntry + " of " + chained + " chained records named by a chain entry");
      // Absent keys: how many walk the chain now, and how many would with every chained record's
      // target flagged (version 1; the flags set now for unnamed records count for both).
      int walks = 0;
      int v1Walks = 0;
      for (int i = 0; i < 200_000; i++) {
        long h = Hashing.hash(r.nextLong());
        long seg = t.locate(m, h);
        if (seg < 0) {
          continue;
        }
        int y = s.bucketIndex(h);
        long b1 = bucket(seg, y);
        long b2 = bucket(seg, (y + 1) & s.mask);
        long w1 = overflowWord(m, b1);
        boolean walk = t.lh.chainMayHold(m, seg, w1, s.overflowCandidates(m, b1, w1, b2, overflowWord(m, b2), DashSegment.fingerprintOf(h)));
        walks += walk ? 1 : 0;
        v1Walks += walk || (v1Flagged.contains(b1) && DashLhSegment.chainHead(m, seg) != 0) ? 1 : 0;
      }
      assertTrue(v1Walks > 1000, "version 1 would walk the chain for " + v1Walks + " of 200,000 absent keys");
      assertTrue(walks * 4 < v1Walks, "absent keys that walk the chain: " + walks + ", version 1: " + v1Walks);
      System.out.printf("DashLhChainOverflowTest: stash %d, %d chained records (%d by a chain entry), absent keys walking the chain"
          + " %d of 200,000 (version 1: %d)%n", stash, chained, byEntry, walks, v1Walks);
    }
  }
}
