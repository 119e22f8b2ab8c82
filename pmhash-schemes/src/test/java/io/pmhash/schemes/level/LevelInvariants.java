package io.pmhash.schemes.level;

import static io.pmhash.schemes.level.LevelLayout.topIndex;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.schemes.contract.PmdkBlocks;
import io.pmhash.schemes.level.LevelTable.Levels;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;

/**
 * The structural invariants of a quiescent level-hashing table: every record sits in one of its
 * four buckets, no key twice, {@code size()} equals a scan, the header names the levels the
 * table uses, and exactly three blocks are owned (header, top, bottom: no leaked level).
 */
final class LevelInvariants {
  private LevelInvariants() {}

  static void check(LevelTable t, String at) {
    Levels l = t.levels;
    MemorySegment m = t.pool.memory();
    assertEquals(l.top(), (long) LevelLayout.LONG.get(m, t.header + LevelLayout.HDR_TOP), at + ": header top");
    assertEquals(l.bottom(), (long) LevelLayout.LONG.get(m, t.header + LevelLayout.HDR_BOTTOM), at + ": header bottom");
    assertEquals((long) l.k(), (long) LevelLayout.LONG.get(m, t.header + LevelLayout.HDR_K), at + ": header k");
    Set<Long> keys = new HashSet<>();
    long n = checkLevel(m, l, l.top(), 1L << l.k(), 0, keys, at) + checkLevel(m, l, l.bottom(), 1L << (l.k() - 1), 1, keys, at);
    assertEquals(n, t.size(), at + ": size equals a scan");
    // owned blocks exactly header, top, bottom (no leaked level), on pmhash's allocator or PMDK's
    PmdkBlocks.requireOwnedExactly(t.pool, Set.of(t.header, l.top(), l.bottom()), at);
  }

  private static long checkLevel(MemorySegment m, Levels l, long level, long buckets, int shift, Set<Long> keys, String at) {
    long n = 0;
    for (long i = 0; i < buckets; i++) {
      long b = LevelTable.bucket(level, i);
      long tok = LevelBucket.tokenAcquire(m, b);
      assertEquals(0, tok & ~LevelLayout.ALL_SLOTS, at + ": token bits beyond slot 6");
      while (tok != 0) {
        int s = Long.numberOfTrailingZeros(tok);
        tok &= tok - 1;
        long key = LevelBucket.key(m, b, s);
        assertTrue(topIndex(LevelTable.hash1(key), l.k()) >>> shift == i || topIndex(LevelTable.hash2(key), l.k()) >>> shift == i,
            at + ": key " + key + " is in none of its buckets");
        assertTrue(keys.add(key), at + ": key " + key + " twice");
        n++;
      }
    }
    return n;
  }
}
