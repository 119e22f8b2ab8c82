package io.pmhash.schemes.esh;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.dash.DashEhProvider;
import io.pmhash.schemes.dash.DashLayout;
import io.pmhash.schemes.internal.ExtendibleDirectory;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * What a negative search reads, in ESH and in Dash-EH, computed from the tables' bytes: the
 * numbers behind docs/format/esh.md's "Against Dash-EH", where ESH's negative search measured 2–6
 * % slower than Dash-EH's. No clock: each figure is the exact expectation, over a uniformly
 * random absent key, of what the scheme's search code loads (ESH: {@code EshSegment.locate};
 * Dash-EH: {@code DashEhTable.read}), derived from the formats (docs/format/esh.md and
 * dash-eh.md) and each table's contents after the same inserts:
 *
 * <ul>
 *   <li>a hash picks each directory entry, home bucket and fingerprint with equal probability,
 *       from independent bits; the census visits every directory entry, every home bucket of its
 *       segment and every fingerprint value, and averages;
 *   <li>per bucket a search reads its metadata line (line 0: lock, commit word or bitmap,
 *       fingerprints; both formats keep it in the first 32 bytes), and loads the key of every
 *       occupied slot whose fingerprint matches (ESH: a 4-bit nibble; Dash-EH: a byte). Slots 0
 *       and 1 share line 0; the others lie on lines 1–3;
 *   <li>ESH reads the home bucket, then, when its overflow count OC is not zero, every bucket its
 *       OFRB names (their foreign slots); Dash-EH reads the target and the probing bucket, then
 *       the stash buckets its overflow metadata names (all of them when the target's "check the
 *       stash" bit is set).
 * </ul>
 *
 * The directory entry and the segment header, one line each, are read by both and left out.
 * The table size is the workload's at its negative-search phase (1M preloaded + 5M inserted
 * keys); {@code -Dpmhash.misscost.records=N} changes it.
 */
class EshMissCostTest {
  private static final int RECORDS = Integer.getInteger("pmhash.misscost.records", 6_000_000);
  private static final int LINE = 64;

  /** Expectations per negative search, and the records the census saw (each counted once). */
  record Cost(double buckets, double keyLoads, double lines, long records) {
    @Override
    public String toString() {
      return String.format("buckets %.3f, key loads %.3f, cache lines %.3f", buckets, keyLoads, lines);
    }
  }

  /** Sums over the census's cases, then the means. */
  private static final class Census {
    double weight;
    double buckets;
    double keyLoads;
    double lines;
    long records;

    void add(long w, int bucketsRead, int loads, int linesRead) {
      weight += w;
      buckets += w * bucketsRead;
      keyLoads += w * loads;
      lines += w * linesRead;
    }

    Cost mean() {
      return new Cost(buckets / weight, keyLoads / weight, lines / weight, records);
    }
  }

  private static LongHashTable filled(String scheme, int records) {
    LongHashTable t = PmHash.createVolatile(TableOptions.scheme(scheme));
    SplittableRandom r = new SplittableRandom(42);
    for (int i = 0; i < records; i++) {
      t.put(r.nextLong(), i);
    }
    return t;
  }

  /** What the census does with one segment: {@code weight} is the number of directory entries naming it. */
  private interface SegmentVisit {
    void visit(long seg, long weight);
  }

  /** Visits every segment of the directory at {@code dir} once, with its weight. */
  private static void eachSegment(MemorySegment m, long dir, SegmentVisit visit) {
    long entries = 1L << ExtendibleDirectory.depth(m, dir);
    for (long i = 0, j; i < entries; i = j) {
      long seg = m.get(JAVA_LONG, ExtendibleDirectory.entry(m, dir, i));
      j = i + 1;
      while (j < entries && m.get(JAVA_LONG, ExtendibleDirectory.entry(m, dir, j)) == seg) {
        j++; // a segment of local depth d < g is named by 2^(g-d) consecutive entries
      }
      visit.visit(seg, j - i);
    }
  }

  /** The distinct lines beyond line 0 that the key loads of {@code slots} (a mask) touch. */
  private static int recordLines(int slots, long pairs) {
    int lines = 0;
    for (int s = slots; s != 0; s &= s - 1) {
      long line = (pairs + 16L * Integer.numberOfTrailingZeros(s)) / LINE;
      if (line != 0) {
        lines |= 1 << line;
      }
    }
    return Integer.bitCount(lines);
  }

  /** The census of ESH: {@code EshSegment.locate} for every entry, home bucket and 4-bit fingerprint. */
  static Cost esh(LongHashTable t) {
    MemorySegment m = t.pool().memory();
    long hdr = t.pool().root(0);
    long dir = m.get(JAVA_LONG, hdr + EshLayout.HDR_DIRECTORY);
    int buckets = m.get(JAVA_INT, hdr + EshLayout.HDR_BUCKETS);
    long bucketBytes = m.get(JAVA_INT, hdr + EshLayout.HDR_BUCKET_BYTES);
    Census c = new Census();
    eachSegment(m, dir, (seg, weight) -> {
      for (int y = 0; y < buckets; y++) {
        long hb = seg + EshLayout.SEG_BUCKETS + y * bucketBytes;
        long commit = m.get(JAVA_LONG, hb + EshLayout.COMMIT);
        long ofrb = m.get(JAVA_LONG, hb + EshLayout.OFRB);
        c.records += Integer.bitCount(EshLayout.alloc(commit));
        for (int fp = 0; fp < 16; fp++) {
          int home = matching(m, hb, EshLayout.home(commit), fp);
          int bucketsRead = 1;
          int loads = Integer.bitCount(home);
          int lines = 1 + recordLines(home, EshLayout.PAIRS);
          if (EshLayout.overflowCount(commit) != 0) {
            for (long o = ofrb; o != 0; o &= o - 1) {
              long nb = seg + EshLayout.SEG_BUCKETS + Long.numberOfTrailingZeros(o) * bucketBytes;
              int foreign = matching(m, nb, EshLayout.foreign(m.get(JAVA_LONG, nb + EshLayout.COMMIT)), fp);
              bucketsRead++;
              loads += Integer.bitCount(foreign);
              lines += 1 + recordLines(foreign, EshLayout.PAIRS);
            }
          }
          c.add(weight, bucketsRead, loads, lines);
        }
      }
    });
    return c.mean();
  }

  /** ESH's slots of {@code mask} whose fingerprint nibble is {@code fp}. */
  private static int matching(MemorySegment m, long b, int mask, int fp) {
    long fps = m.get(JAVA_LONG, b + EshLayout.FPS);
    int out = 0;
    for (int s = mask; s != 0; s &= s - 1) {
      int slot = Integer.numberOfTrailingZeros(s);
      if (EshLayout.fingerprintAt(fps, slot) == fp) {
        out |= 1 << slot;
      }
    }
    return out;
  }

  /** The census of Dash-EH: {@code DashEhTable.read} for every entry, target bucket and 8-bit fingerprint. */
  static Cost dash(LongHashTable t) {
    MemorySegment m = t.pool().memory();
    long hdr = t.pool().root(0);
    long dir = m.get(JAVA_LONG, hdr + DashLayout.HDR_DIRECTORY);
    int normal = m.get(JAVA_INT, hdr + DashLayout.HDR_NORMAL);
    int stash = m.get(JAVA_INT, hdr + DashLayout.HDR_STASH);
    Census c = new Census();
    eachSegment(m, dir, (seg, weight) -> {
      for (int y = 0; y < stash; y++) {
        c.records += Integer.bitCount(dashMatching(m, dashBucket(seg, normal + y), -1));
      }
      for (int y = 0; y < normal; y++) {
        long b1 = dashBucket(seg, y);
        long b2 = dashBucket(seg, (y + 1) % normal);
        c.records += Integer.bitCount(dashMatching(m, b1, -1));
        for (int fp = 0; fp < 256; fp++) {
          int m1 = dashMatching(m, b1, fp);
          int m2 = dashMatching(m, b2, fp);
          int bucketsRead = 2;
          int loads = Integer.bitCount(m1) + Integer.bitCount(m2);
          int lines = 2 + recordLines(m1, DashLayout.PAIRS) + recordLines(m2, DashLayout.PAIRS);
          for (int s = stashCandidates(m, b1, b2, fp, stash); s != 0; s &= s - 1) {
            int ms = dashMatching(m, dashBucket(seg, normal + Integer.numberOfTrailingZeros(s)), fp);
            bucketsRead++;
            loads += Integer.bitCount(ms);
            lines += 1 + recordLines(ms, DashLayout.PAIRS);
          }
          c.add(weight, bucketsRead, loads, lines);
        }
      }
    });
    return c.mean();
  }

  private static long dashBucket(long seg, int index) {
    return seg + DashLayout.SEG_BUCKETS + index * DashLayout.BUCKET_BYTES;
  }

  /** Dash-EH's allocated slots of bucket {@code b} whose fingerprint byte is {@code fp} (all of them for -1). */
  private static int dashMatching(MemorySegment m, long b, int fp) {
    int allocated = m.get(JAVA_INT, b + DashLayout.BITMAP) >>> DashLayout.ALLOC_SHIFT & DashLayout.SLOT_MASK;
    int out = 0;
    for (int s = allocated; s != 0; s &= s - 1) {
      int slot = Integer.numberOfTrailingZeros(s);
      if (fp < 0 || (m.get(JAVA_BYTE, b + DashLayout.FP + slot) & 0xFF) == fp) {
        out |= 1 << slot;
      }
    }
    return out;
  }

  /** The stash buckets a Dash-EH search of {@code fp} reads (docs/format/dash-eh.md, overflow metadata). */
  private static int stashCandidates(MemorySegment m, long b1, long b2, int fp, int stash) {
    int bitmap1 = m.get(JAVA_BYTE, b1 + DashLayout.OVF_BITMAP) & 0xFF;
    if ((bitmap1 & DashLayout.STASH_FLAG) != 0) {
      return (1 << stash) - 1;
    }
    return overflowCandidates(m, b1, fp, 0) | overflowCandidates(m, b2, fp, 1);
  }

  /** The stash buckets named by bucket {@code b}'s valid overflow fingerprints equal to {@code fp} with membership {@code member}. */
  private static int overflowCandidates(MemorySegment m, long b, int fp, int member) {
    int valid = m.get(JAVA_BYTE, b + DashLayout.OVF_BITMAP) & DashLayout.OVF_VALID_MASK;
    int members = m.get(JAVA_BYTE, b + DashLayout.OVF_MEMBER) & 0xFF;
    int index = m.get(JAVA_BYTE, b + DashLayout.OVF_INDEX) & 0xFF;
    int out = 0;
    for (int v = valid; v != 0; v &= v - 1) {
      int j = Integer.numberOfTrailingZeros(v);
      if ((members >>> j & 1) == member && (m.get(JAVA_BYTE, b + DashLayout.OVF_FP + j) & 0xFF) == fp) {
        out |= 1 << (index >>> 2 * j & 3);
      }
    }
    return out;
  }

  @Test
  void anEmptyTableReadsOneBucketInEshAndTwoInDash() {
    try (LongHashTable esh = filled(EshProvider.NAME, 0); LongHashTable dash = filled(DashEhProvider.NAME, 0)) {
      assertEquals(new Cost(1, 0, 1, 0), esh(esh));
      assertEquals(new Cost(2, 0, 2, 0), dash(dash));
    }
  }

  /**
   * The figures for docs/format/esh.md, at the workload's table size. The assertions are the
   * format's arithmetic, which the census must reproduce: a 4-bit fingerprint matches one occupied
   * slot in 16, a byte one in 256, so ESH loads about 16 times as many keys per bucket read.
   */
  @Test
  void whatANegativeSearchReads() {
    try (LongHashTable esh = filled(EshProvider.NAME, RECORDS)) {
      Cost e = esh(esh);
      double eshLoad = esh.loadFactor();
      try (LongHashTable dash = filled(DashEhProvider.NAME, RECORDS)) {
        Cost d = dash(dash);
        System.out.printf("EshMissCostTest: %,d records; per negative search (beyond the directory entry and segment header):%n"
            + "  ESH     (load factor %.3f): %s%n  Dash-EH (load factor %.3f): %s%n", RECORDS, eshLoad, e, dash.loadFactor(), d);
        assertEquals(esh.size(), e.records(), "the ESH census read every record once");
        assertEquals(dash.size(), d.records(), "the Dash-EH census read every record once");
        assertTrue(e.buckets() >= 1 && d.buckets() >= 2, "every miss reads the home (ESH) or both buckets (Dash-EH)");
        double eshPerBucket = e.keyLoads() / e.buckets();
        double dashPerBucket = d.keyLoads() / d.buckets();
        assertTrue(eshPerBucket > 8 * dashPerBucket,
            "4-bit against 8-bit fingerprints: ESH " + eshPerBucket + " key loads per bucket read, Dash-EH " + dashPerBucket);
      }
    }
  }
}
