package io.pmhash.schemes.level;

import static io.pmhash.schemes.level.LevelLayout.HDR_BOTTOM;
import static io.pmhash.schemes.level.LevelLayout.HDR_K;
import static io.pmhash.schemes.level.LevelLayout.HDR_TOP;
import static io.pmhash.schemes.level.LevelLayout.LONG;
import static io.pmhash.schemes.level.LevelLayout.MAX_K;
import static io.pmhash.schemes.level.LevelLayout.MIN_K;
import static io.pmhash.schemes.level.LevelLayout.SLOTS;
import static io.pmhash.schemes.level.LevelLayout.TOKEN;
import static io.pmhash.schemes.level.LevelLayout.bottomBytes;
import static io.pmhash.schemes.level.LevelLayout.slotOffset;
import static io.pmhash.schemes.level.LevelLayout.slotsAt;
import static io.pmhash.schemes.level.LevelLayout.topBytes;
import static io.pmhash.schemes.level.LevelLayout.topIndex;
import static io.pmhash.schemes.level.LevelTable.bucket;

import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.schemes.level.LevelTable.Levels;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * In-place resize and shrink (Zuo et al. §3.3), each under every stripe lock.
 *
 * <h2>Resize: k to k + 1</h2>
 *
 * <ol>
 *   <li>Reserve a new top level of {@code 2^(k+1)} buckets (not owned yet: a crash leaks
 *       nothing) and zero it.
 *   <li>Rehash only the records of the old bottom level (a third of the buckets) into it, each
 *       to the less loaded of its two new top buckets. A record that finds both full goes to one
 *       of its old top buckets (which become its new bottom buckets) with a log-free insert: in
 *       the old structure that is a legal second copy, which recovery removes if a crash comes
 *       first.
 *   <li>PERSIST: the whole new level is durable.
 *   <li>One allocator step (a redo step; one {@code pmemobj_publish} on an llpl pool, where the old
 *       level's free is a retire record) makes the new level owned, sets the header's
 *       top, bottom and k together, and frees the old bottom level. The published code stored
 *       the new capacity before the new level existed; here no crash can separate them.
 * </ol>
 *
 * <h2>Shrink: k to k - 1</h2>
 *
 * The old bottom level becomes the new top level; a new bottom level of {@code 2^(k-2)} buckets
 * is reserved; every record of the old top level is copied to a free slot of one of its two
 * buckets in the old bottom level (flushed, its token not yet set) or else to the new bottom level
 * (unpublished memory). If a record fits nowhere, the shrink is abandoned before any token
 * changed. Then one drain makes every copied pair durable, the copies' token bits are set bucket
 * by bucket and a second drain publishes them (each a legal duplicate in the old structure until
 * the publication), the new bottom level is persisted, and one publication sets top, bottom and
 * k and frees the old top level: all or nothing.
 */
final class LevelResize {
  private LevelResize() {}

  /** Grows the table by one level unless another thread already replaced {@code seen}. */
  static void expand(LevelTable t, Levels seen) {
    t.lockAll();
    try {
      Levels l = t.levels;
      if (l != seen) {
        return;
      }
      if (l.k() >= MAX_K) {
        throw new IllegalStateException("level hashing cannot grow beyond 2^" + MAX_K + " top buckets");
      }
      Pool pool = t.pool;
      Persistence p = t.persistence;
      int k = l.k();
      int k2 = k + 1;
      SchemeAllocator.Reserved res = pool.schemeAllocator().reserve(topBytes(k2));
      MemorySegment m = pool.memory();
      long top2 = res.offset();
      m.asSlice(top2, topBytes(k2)).fill((byte) 0);
      long[] copies = new long[16];
      int n = 0;
      // §3.3 step 2: rehash the old bottom level only.
      long buckets = 1L << (k - 1);
      for (long i = 0; i < buckets; i++) {
        long b = bucket(l.bottom(), i);
        long tok = LevelBucket.tokenAcquire(m, b);
        while (tok != 0) {
          int s = Long.numberOfTrailingZeros(tok);
          tok &= tok - 1;
          long key = LevelBucket.key(m, b, s);
          long value = LevelBucket.value(m, b, s);
          long h1 = LevelTable.hash1(key);
          long h2 = LevelTable.hash2(key);
          if (placePlain(m, bucket(top2, topIndex(h1, k2)), bucket(top2, topIndex(h2, k2)), key, value)) {
            continue;
          }
          long live = placeLive(m, p, bucket(l.top(), topIndex(h1, k)), bucket(l.top(), topIndex(h2, k)), key, value);
          if (live < 0) {
            undo(m, p, copies, n);
            pool.schemeAllocator().cancel(res);
            throw new IllegalStateException("level hashing cannot place key " + key + " in a resize to k = " + k2);
          }
          if (n == copies.length) {
            copies = Arrays.copyOf(copies, 2 * n);
          }
          copies[n++] = live;
        }
      }
      // PERSIST(§3.3 step 3): the new level is durable before anything names it.
      p.persist(top2, topBytes(k2));
      // §3.3 step 4: top, bottom and k change together with the ownership of both levels.
      try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
        pub.publish(res)
            .set(t.header + HDR_TOP, top2)
            .set(t.header + HDR_BOTTOM, l.top())
            .set(t.header + HDR_K, k2)
            .deferFree(l.bottom());
        pub.commit();
      }
      t.levels = new Levels(top2, l.top(), k2);
      t.resizes.incrementAndGet();
      // every stripe is held: no thread can still read the old bottom level
      pool.schemeAllocator().releaseRetired();
    } finally {
      t.unlockAll();
    }
  }

  /** Shrinks the table by one level if it is still {@code seen} and still sparse enough. */
  static void shrink(LevelTable t, Levels seen) {
    t.lockAll();
    try {
      Levels l = t.levels;
      if (l != seen || l.k() <= MIN_K || t.size() * 10 >= slotsAt(l.k())) {
        return;
      }
      Pool pool = t.pool;
      Persistence p = t.persistence;
      int k = l.k();
      int k2 = k - 1;
      SchemeAllocator.Reserved res = pool.schemeAllocator().reserve(bottomBytes(k2));
      MemorySegment m = pool.memory();
      long bottom2 = res.offset();
      m.asSlice(bottom2, bottomBytes(k2)).fill((byte) 0);
      // the old bottom level is the new top level: index topIndex(h, k - 1). Copies into it are
      // claimed in DRAM (pending) and published in one batch once every copied pair is durable.
      long[] pending = new long[Math.toIntExact(1L << k2)];
      long buckets = 1L << k;
      for (long i = 0; i < buckets; i++) {
        long b = bucket(l.top(), i);
        long tok = LevelBucket.tokenAcquire(m, b);
        while (tok != 0) {
          int s = Long.numberOfTrailingZeros(tok);
          tok &= tok - 1;
          long key = LevelBucket.key(m, b, s);
          long value = LevelBucket.value(m, b, s);
          long h1 = LevelTable.hash1(key);
          long h2 = LevelTable.hash2(key);
          if (claim(m, p, l.bottom(), pending, topIndex(h1, k2), topIndex(h2, k2), key, value)) {
            continue;
          }
          if (!placePlain(m, bucket(bottom2, topIndex(h1, k2) >>> 1), bucket(bottom2, topIndex(h2, k2) >>> 1), key, value)) {
            // no room: abandon before any token changed; the claimed slots were never published
            pool.schemeAllocator().cancel(res);
            return;
          }
        }
      }
      // PERSIST(shrink step 2a): every copied pair is durable before a token names it.
      p.drain();
      for (int j = 0; j < pending.length; j++) {
        if (pending[j] != 0) {
          long b = bucket(l.bottom(), j);
          LevelBucket.setTokenRelease(m, b, LevelBucket.tokenAcquire(m, b) | pending[j]);
          p.flush(b + TOKEN, 8);
        }
      }
      // PERSIST(shrink step 2b): the copies are published in the old bottom level, where each is
      // a legal duplicate of its original until the publication below (recovery removes it).
      p.drain();
      // PERSIST(shrink step 3): the new bottom level is durable before anything names it.
      p.persist(bottom2, bottomBytes(k2));
      // shrink step 4: one atomic step; the published shrink was not atomic.
      try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
        pub.publish(res)
            .set(t.header + HDR_TOP, l.bottom())
            .set(t.header + HDR_BOTTOM, bottom2)
            .set(t.header + HDR_K, k2)
            .deferFree(l.top());
        pub.commit();
      }
      t.levels = new Levels(l.bottom(), bottom2, k2);
      t.shrinks.incrementAndGet();
      pool.schemeAllocator().releaseRetired();
    } finally {
      t.unlockAll();
    }
  }

  /** Places a record in unpublished memory (plain stores; the caller persists the level). */
  private static boolean placePlain(MemorySegment m, long b1, long b2, long key, long value) {
    long tok1 = (long) LONG.get(m, b1 + TOKEN);
    long tok2 = (long) LONG.get(m, b2 + TOKEN);
    long b = Long.bitCount(tok1) <= Long.bitCount(tok2) ? b1 : b2;
    long tok = b == b1 ? tok1 : tok2;
    if (Long.bitCount(tok) >= SLOTS) {
      return false;
    }
    int s = Long.numberOfTrailingZeros(~tok);
    long pair = slotOffset(b, s);
    LONG.set(m, pair, key);
    LONG.set(m, pair + LevelLayout.PAIR_VALUE, value);
    LONG.set(m, b + TOKEN, tok | 1L << s);
    return true;
  }

  /**
   * Copies a record into a free, unclaimed slot of the less loaded of two live buckets of {@code
   * level}, flushes the pair (no drain) and claims the slot in {@code pending}; the token is set
   * later, in a batch.
   */
  private static boolean claim(MemorySegment m, Persistence p, long level, long[] pending, long i1, long i2, long key, long value) {
    long b1 = bucket(level, i1);
    long b2 = bucket(level, i2);
    long used1 = LevelBucket.tokenAcquire(m, b1) | pending[(int) i1];
    long used2 = LevelBucket.tokenAcquire(m, b2) | pending[(int) i2];
    boolean first = Long.bitCount(used1) <= Long.bitCount(used2);
    long used = first ? used1 : used2;
    if (Long.bitCount(used) >= SLOTS) {
      return false;
    }
    long b = first ? b1 : b2;
    int s = Long.numberOfTrailingZeros(~used);
    long pair = slotOffset(b, s);
    LONG.set(m, pair, key);
    LONG.set(m, pair + LevelLayout.PAIR_VALUE, value);
    p.flush(pair, LevelLayout.PAIR_BYTES);
    pending[(int) (first ? i1 : i2)] |= 1L << s;
    return true;
  }

  /** Log-free insert into a live bucket; returns {@code bucket | slot}, or -1 if both are full. */
  private static long placeLive(MemorySegment m, Persistence p, long b1, long b2, long key, long value) {
    int s = LevelBucket.freeSlot(m, b1);
    long b = b1;
    int s2 = LevelBucket.freeSlot(m, b2);
    if (s < 0 || s2 >= 0 && LevelBucket.count(m, b2) < LevelBucket.count(m, b1)) {
      s = s2;
      b = b2;
    }
    if (s < 0) {
      return -1;
    }
    LevelBucket.insert(m, p, b, s, key, value);
    return b | s;
  }

  private static void undo(MemorySegment m, Persistence p, long[] copies, int n) {
    for (int i = 0; i < n; i++) {
      LevelBucket.delete(m, p, copies[i] & ~7L, (int) (copies[i] & 7));
    }
  }
}
