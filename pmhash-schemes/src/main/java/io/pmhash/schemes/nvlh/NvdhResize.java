package io.pmhash.schemes.nvlh;

import static io.pmhash.schemes.nvlh.NvdhLayout.FULL;
import static io.pmhash.schemes.nvlh.NvdhLayout.HDR_K;
import static io.pmhash.schemes.nvlh.NvdhLayout.HDR_TABLE;
import static io.pmhash.schemes.nvlh.NvdhLayout.LONG;
import static io.pmhash.schemes.nvlh.NvdhLayout.PAIR_VALUE;

import io.pmhash.core.alloc.SchemeAllocator;
import java.lang.foreign.MemorySegment;

/**
 * NVDH's one structural change (§IV "periodically rehashes records into a larger table"): a
 * rehash of every record into a new table, under the table's write lock. The new table is
 * reserved (not owned: a crash before the publication leaks nothing and leaves the old table
 * whole), filled with plain stores, persisted whole with one drain, then one allocator
 * publication makes it owned, sets the header's table and k together and frees the old one.
 * O(records): the stop-the-world pause the NVLH paper measures as NVDH's maximum latency.
 */
final class NvdhResize {
  private NvdhResize() {}

  /** Under the write lock: everything into a new table, then the root switched (see the class comment). */
  static void rehash(NvdhTable t) {
    int k2 = t.size * 8 > (3L << t.k) ? t.k + 1 : t.k;
    if (k2 > NvdhLayout.MAX_K) {
      throw new IllegalStateException("nvdh cannot grow beyond 2^" + NvdhLayout.MAX_K + " slots");
    }
    SchemeAllocator.Reserved res = t.pool.schemeAllocator().reserve(NvdhLayout.tableBytes(k2));
    MemorySegment m = t.pool.memory();
    long t2 = res.offset();
    long bytes = NvdhLayout.tableBytes(k2);
    m.asSlice(t2, NvdhLayout.statesBytes(k2)).fill((byte) 0);
    for (long j = 0; j < 1L << t.k; j++) {
      if (NvdhTable.state(m, t.table, j) != FULL) {
        continue;
      }
      long from = NvdhTable.pairOffset(t.table, t.k, j);
      long key = (long) LONG.get(m, from);
      long slot = -1 - NvdhTable.probe(m, t2, k2, key);
      long to = NvdhTable.pairOffset(t2, k2, slot);
      LONG.set(m, to, key);
      LONG.set(m, to + PAIR_VALUE, (long) LONG.get(m, from + PAIR_VALUE));
      long w = t2 + (slot >>> 5) * 8;
      LONG.set(m, w, (long) LONG.get(m, w) | ((long) FULL << ((slot & 31) * 2)));
    }
    // PERSIST(nvdh rehash 1): the whole new table is durable before anything names it.
    t.persistence.persist(t2, bytes);
    // PERSIST(nvdh rehash 2): ownership, table and k switch together; the old table is freed.
    try (SchemeAllocator.Step pub = t.pool.schemeAllocator().begin()) {
      pub.publish(res, t.header + HDR_TABLE).set(t.header + HDR_K, k2).deferFree(t.table);
      pub.commit();
    }
    t.table = t2;
    t.k = k2;
    t.tombstones = 0;
    t.rehashes++;
    // the write lock is held: no reader can still be in the old table
    t.pool.schemeAllocator().releaseRetired();
  }

}
