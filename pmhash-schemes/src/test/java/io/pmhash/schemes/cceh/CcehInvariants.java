package io.pmhash.schemes.cceh;

import static io.pmhash.schemes.cceh.CcehLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.hash.Hashing;
import io.pmhash.schemes.contract.PmdkBlocks;
import io.pmhash.schemes.contract.Routes;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;

/** Structural checks of a CCEH table, shared by the tests of this package. */
final class CcehInvariants {
  private CcehInvariants() {}

  /**
   * Invariant I of {@link CcehSplit} on a raw pool (a crash image before recovery, or a live
   * quiescent table): every directory entry names a segment whose shape covers the entry, and no
   * local depth exceeds the global depth.
   */
  static void checkRouting(Pool pool, String at) {
    MemorySegment m = pool.memory();
    long hdr = pool.root(0);
    long dir = (long) LONG.get(m, hdr + HDR_DIRECTORY);
    int g = (int) INT.get(m, dir + DIR_DEPTH);
    for (long i = 0; i < 1L << g; i++) {
      long seg = (long) LONG.get(m, dir + DIR_ENTRIES + 8 * i);
      assertTrue(seg != 0, at + ": directory entry " + i + " of " + (1L << g) + " is empty");
      long shape = (long) LONG.get(m, seg + SEG_SHAPE);
      int d = depthOf(shape);
      assertTrue(d <= g, at + ": local depth " + d + " > global depth " + g);
      assertEquals(patternOf(shape), i >>> (g - d), at + ": entry " + i + " names segment " + seg + " of depth " + d + " and pattern " + patternOf(shape) + ", which does not cover it");
    }
  }

  /** Everything on a quiescent, recovered table. */
  static void check(Pool pool, CcehTable t, String at) {
    checkRouting(pool, at);
    Routes.assertPublished(pool, t.route, at);
    MemorySegment m = pool.memory();
    Set<Long> keys = new HashSet<>();
    long records = 0;
    for (long seg : t.segmentOffsets()) {
      assertEquals(0L, (long) LONG.get(m, seg + SEG_LOCK), at + ": lock of segment " + seg);
      assertEquals(0L, (long) LONG.get(m, seg + SEG_CHILD), at + ": split child of segment " + seg);
      long shape = (long) LONG.get(m, seg + SEG_SHAPE);
      for (int slot = 0; slot < SLOTS; slot++) {
        if (!CcehSegment.valid(m, seg, slot)) {
          continue;
        }
        long key = CcehSegment.key(m, seg, slot);
        long h = Hashing.hash(key);
        assertTrue(covers(shape, h), at + ": key " + key + " in segment " + seg + " that does not cover it");
        assertTrue(((slot - startSlot(h)) & (SLOTS - 1)) < PROBE_SLOTS, at + ": key " + key + " outside its probe window");
        assertTrue(keys.add(key), at + ": key " + key + " twice");
        records++;
      }
    }
    assertEquals(records, t.size(), at + ": size equals a scan of the bitmaps");
    checkNoLeak(pool, t, at);
  }

  /** Owned blocks are exactly the table header, the directory and the segments. */
  static void checkNoLeak(Pool pool, CcehTable t, String at) {
    MemorySegment m = pool.memory();
    Set<Long> reachable = new TreeSet<>();
    reachable.add(t.header);
    reachable.add((long) LONG.get(m, t.header + HDR_DIRECTORY));
    reachable.addAll(t.segmentOffsets());
    PmdkBlocks.requireOwnedExactly(pool, reachable, at);
  }
}
