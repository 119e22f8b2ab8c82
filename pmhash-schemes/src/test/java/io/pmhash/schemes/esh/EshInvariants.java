package io.pmhash.schemes.esh;

import static io.pmhash.schemes.esh.EshLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.concurrent.VersionLock;
import io.pmhash.core.hash.Hashing;
import io.pmhash.schemes.contract.PmdkBlocks;
import io.pmhash.schemes.contract.Routes;
import io.pmhash.schemes.internal.ExtendibleDirectory;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;

/** Structural checks of an ESH table, shared by the tests of this package. */
final class EshInvariants {
  private EshInvariants() {}

  /**
   * Invariant I of {@link EshSplit} on a raw pool (a crash image before recovery, or a quiescent
   * table): every directory entry names a segment whose shape covers the entry, no local depth
   * above the global depth.
   */
  static void checkRouting(Pool pool, String at) {
    MemorySegment m = pool.memory();
    long dir = (long) LONG.get(m, pool.root(0) + HDR_DIRECTORY);
    int g = ExtendibleDirectory.depth(m, dir);
    for (long i = 0; i < 1L << g; i++) {
      long seg = (long) LONG.get(m, ExtendibleDirectory.entry(m, dir, i));
      assertTrue(seg != 0, at + ": directory entry " + i + " is empty");
      long shape = (long) LONG.get(m, seg + SEG_SHAPE);
      int d = depthOf(shape);
      assertTrue(d <= g, at + ": local depth " + d + " > global depth " + g);
      assertEquals(patternOf(shape), i >>> (g - d), at + ": entry " + i + " names segment " + seg + " of depth " + d + " and pattern " + patternOf(shape) + ", which does not cover it");
    }
  }

  /** Everything on a quiescent, recovered table: metadata exact, no duplicates, no leak. */
  static void check(Pool pool, EshTable t, String at) {
    checkRouting(pool, at);
    Routes.assertPublished(pool, t.route, at);
    MemorySegment m = pool.memory();
    EshSegment s = t.segments;
    Set<Long> keys = new HashSet<>();
    long records = 0;
    for (long seg : t.segmentOffsets()) {
      assertEquals(0L, (long) LONG.get(m, seg + SEG_CHILD), at + ": split child of " + seg);
      assertEquals(0L, (long) LONG.get(m, seg + SEG_PARENT), at + ": split parent of " + seg);
      long shape = (long) LONG.get(m, seg + SEG_SHAPE);
      int[] oc = new int[s.buckets];
      long[] holders = new long[s.buckets];
      for (int i = 0; i < s.buckets; i++) {
        long b = s.bucket(seg, i);
        assertTrue(!VersionLock.isLocked(m, b + LOCK), at + ": bucket " + i + " of " + seg + " is locked");
        assertEquals(t.stateTag, EshSegment.state(m, b), at + ": state of bucket " + i);
        long c = EshSegment.commitAcquire(m, b);
        int alloc = alloc(c);
        assertEquals(Integer.bitCount(alloc), memberCount(c), at + ": MC of bucket " + i);
        assertEquals(Integer.bitCount(alloc) == s.pairs, full(c), at + ": OB of bucket " + i);
        assertEquals(0, alloc >>> s.pairs, at + ": slots beyond the bucket");
        assertEquals(0, foreign(c) & ~alloc, at + ": foreign bits of free slots");
        long fps = EshSegment.fps(m, b);
        for (int a = alloc; a != 0; a &= a - 1) {
          int slot = Integer.numberOfTrailingZeros(a);
          long key = EshSegment.key(m, b, slot);
          long h = Hashing.hash(key);
          assertTrue(ExtendibleDirectory.prefix(h, depthOf(shape)) == patternOf(shape), at + ": key " + key + " in a segment that does not cover it");
          assertEquals(fingerprint(h), fingerprintAt(fps, slot), at + ": fingerprint of key " + key);
          int home = s.bucketIndex(h);
          assertEquals(home != i, (foreign(c) & 1 << slot) != 0, at + ": foreign bit of key " + key);
          if (home != i) {
            oc[home]++;
            holders[home] |= 1L << i;
          }
          assertTrue(keys.add(key), at + ": key " + key + " twice");
          records++;
        }
      }
      for (int i = 0; i < s.buckets; i++) {
        long b = s.bucket(seg, i);
        long c = EshSegment.commitAcquire(m, b);
        long ofrb = EshSegment.ofrb(m, b);
        assertEquals(oc[i], overflowCount(c), at + ": OC of bucket " + i + " of " + seg);
        assertEquals(holders[i], ofrb & holders[i], at + ": OFRB of bucket " + i + " names every bucket holding its records");
        assertTrue(oc[i] != 0 || ofrb == 0, at + ": OFRB of bucket " + i + " is clear when OC is 0");
      }
    }
    assertEquals(records, t.size(), at + ": size equals a scan");
    checkNoLeak(pool, t, at);
  }

  /** Owned blocks are exactly the table header, the directory and the segments. */
  static void checkNoLeak(Pool pool, EshTable t, String at) {
    MemorySegment m = pool.memory();
    Set<Long> reachable = new TreeSet<>();
    reachable.add(t.header);
    reachable.add(t.directory(m));
    for (long seg : t.segmentOffsets()) {
      reachable.add(seg);
    }
    PmdkBlocks.requireOwnedExactly(pool, reachable, at);
  }
}
