package io.pmhash.schemes.nvlh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;

/**
 * The structural invariants of a quiescent NVLH table: the header's state equals the mirror, no
 * split or merge pending, no in-process flag, every record in the chain its hash names, no key
 * twice, no empty overflow bucket, {@code size()} and the overflow count equal a scan, the
 * directory names exactly the segments the buckets need, and the owned blocks are exactly the
 * header, the directory levels, the segments and the overflow buckets (nothing leaked).
 */
final class NvlhInvariants {
  private NvlhInvariants() {}

  static void check(NvlhTable t, String at) {
    MemorySegment m = t.pool.memory();
    long s = t.state;
    assertEquals(s, (long) NvlhLayout.LONG.get(m, t.header + NvlhLayout.HDR_STATE), at + ": header state");
    assertEquals(0L, (long) NvlhLayout.LONG.get(m, t.header + NvlhLayout.HDR_PENDING), at + ": nothing pending");
    long buckets = t.bucketCount(s);
    Set<Long> keys = new HashSet<>();
    long overflow = 0;
    for (long b = 0; b < buckets; b++) {
      long head = t.bucketOffset(b);
      for (long x = head; x != 0; x = NvlhBucket.next(m, x)) {
        long meta = NvlhBucket.meta(m, x);
        assertEquals(0, meta & NvlhLayout.IN_PROCESS, at + ": bucket " + b + " has an in-process flag");
        assertEquals(0, NvlhLayout.withoutSlots(meta, NvlhLayout.ALL_SLOTS), at + ": bucket " + b + " has a fingerprint on a free slot");
        if (x != head) {
          overflow++;
          assertTrue((meta & NvlhLayout.ALL_SLOTS) != 0, at + ": empty overflow bucket in chain " + b);
        }
        for (long bits = meta & NvlhLayout.ALL_SLOTS; bits != 0; bits &= bits - 1) {
          int slot = Long.numberOfTrailingZeros(bits);
          long key = NvlhBucket.key(m, x, slot);
          assertEquals(b, t.bucketOf(NvlhTable.hash(key), s), at + ": key " + key + " in the wrong chain");
          assertEquals(NvlhLayout.fingerprint(NvlhTable.hash(key)), NvlhLayout.fingerprintAt(meta, slot), at + ": key " + key + "'s fingerprint");
          assertTrue(keys.add(key), at + ": key " + key + " twice");
        }
      }
    }
    assertEquals(keys.size(), t.size(), at + ": size equals a scan");
    assertEquals(overflow, t.overflowBuckets.get(), at + ": overflow buckets equal a scan");
    long segments = ((buckets - 1) >>> t.segShift) + 1;
    int levels = NvlhLayout.dirLevel(segments - 1) + 1;
    for (long g = 0; g < t.segs.length; g++) {
      assertEquals(g < segments, t.segs[(int) g] != 0, at + ": segment " + g + " allocated iff needed");
    }
    assertEquals(1 + segments + levelsEverUsed(t, m) + overflow, ownedBlocks(t.pool),
        at + ": owned blocks (header, " + levels + "+ directory levels, " + segments + " segments, " + overflow + " overflow buckets)");
  }

  /** Directory levels are never freed: those the header names. */
  private static long levelsEverUsed(NvlhTable t, MemorySegment m) {
    long n = 0;
    for (int l = 0; l < NvlhLayout.DIR_LEVELS; l++) {
      n += (long) NvlhLayout.LONG.get(m, t.header + NvlhLayout.HDR_DIR + 8L * l) != 0 ? 1 : 0;
    }
    return n;
  }

  static long ownedBlocks(Pool pool) {
    return pool.schemeAllocator().blocksOwned();
  }

  /** NVDH: size and tombstones equal a scan, the header names the table, two blocks owned. */
  static void check(NvdhTable t, String at) {
    MemorySegment m = t.pool.memory();
    assertEquals(t.table, (long) NvdhLayout.LONG.get(m, t.header + NvdhLayout.HDR_TABLE), at + ": header table");
    assertEquals((long) t.k, (long) NvdhLayout.LONG.get(m, t.header + NvdhLayout.HDR_K), at + ": header k");
    long full = 0;
    long deleted = 0;
    Set<Long> keys = new HashSet<>();
    for (long j = 0; j < 1L << t.k; j++) {
      int st = NvdhTable.state(m, t.table, j);
      if (st == NvdhLayout.FULL) {
        full++;
        long key = (long) NvdhLayout.LONG.get(m, NvdhTable.pairOffset(t.table, t.k, j));
        assertTrue(keys.add(key), at + ": key " + key + " twice");
        assertEquals(j, NvdhTable.probe(m, t.table, t.k, key), at + ": key " + key + " found where it is");
      } else if (st == NvdhLayout.DELETED) {
        deleted++;
      } else {
        assertEquals(NvdhLayout.EMPTY, st, at + ": slot " + j + " state");
      }
    }
    assertEquals(full, t.size(), at + ": size equals a scan");
    assertEquals(deleted, t.tombstones, at + ": tombstones equal a scan");
    assertEquals(2, ownedBlocks(t.pool), at + ": owned blocks (header, table)");
  }
}
