package io.pmhash.schemes.level;

import static io.pmhash.schemes.level.LevelLayout.HDR_BOTTOM;
import static io.pmhash.schemes.level.LevelLayout.HDR_K;
import static io.pmhash.schemes.level.LevelLayout.HDR_MAGIC;
import static io.pmhash.schemes.level.LevelLayout.HDR_TOP;
import static io.pmhash.schemes.level.LevelLayout.HDR_VERSION;
import static io.pmhash.schemes.level.LevelLayout.INT;
import static io.pmhash.schemes.level.LevelLayout.LAYOUT_VERSION;
import static io.pmhash.schemes.level.LevelLayout.LONG;
import static io.pmhash.schemes.level.LevelLayout.MAGIC;
import static io.pmhash.schemes.level.LevelLayout.MAX_K;
import static io.pmhash.schemes.level.LevelLayout.MIN_K;
import static io.pmhash.schemes.level.LevelLayout.topIndex;
import static io.pmhash.schemes.level.LevelTable.bucket;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.schemes.internal.Damage;
import io.pmhash.schemes.level.LevelTable.Levels;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;

/**
 * Opening and recovery.
 *
 * <ol>
 *   <li>The pool has already replayed its lanes: a resize or shrink whose publication committed
 *       is complete, one that did not is gone (its new level was only reserved, so nothing
 *       leaks). There is nothing to finish or roll back at this level.
 *   <li>{@link #validate}: magic, version, {@code k} and both levels owned blocks of the right
 *       size; else an {@link UncheckedIOException} wrapping a {@link
 *       CorruptPoolException}.
 *   <li>After a clean shutdown the count written at close is used: O(1).
 *   <li>After a crash, {@link #repair} scans both levels: a record also found earlier in its own
 *       probe order (top 1, top 2, bottom 1, bottom 2) is the second copy left by an interrupted
 *       movement, resize or shrink (same key, same value) and its token is cleared (one persist
 *       each; idempotent, so a crash during recovery is recovered the same way). The records
 *       kept are counted. O(records). The paper's recovery reads no bucket; it also never
 *       removed those duplicates.
 * </ol>
 */
final class LevelRecovery {
  private LevelRecovery() {}

  /** The checked {@link CorruptPoolException}, wrapped for the unchecked SPI. */
  static UncheckedIOException corrupt(String message) {
    return new UncheckedIOException(new CorruptPoolException(message));
  }

  static Levels validate(Pool pool, long h) {
    MemorySegment m = pool.memory();
    if (h == 0 || (h & 7) != 0 || h + LevelLayout.TABLE_HEADER.byteSize() > m.byteSize()) {
      throw corrupt("level: root 0 (" + h + ") does not name a table header");
    }
    SchemeAllocator a = pool.schemeAllocator();
    if (a != pool.allocator().schemeAllocator() && Damage.outsideBlocks(pool, a, h, LevelLayout.TABLE_HEADER.byteSize())) {
      // on a backend's allocator (llpl: PMDK) the header is one of its blocks; a level pool made
      // on llpl before its blocks were PMDK's has its header in pmhash's heap and ends here
      throw corrupt("level: root 0 (" + h + ") does not name a table header: not a 64-byte aligned block of the pool's"
          + " backend allocator (a level pool made on llpl before its blocks were PMDK objects is refused; recreate it and reload)");
    }
    if ((long) LONG.get(m, h + HDR_MAGIC) != MAGIC) {
      throw corrupt("level: bad table magic at " + h);
    }
    int v = (int) INT.get(m, h + HDR_VERSION);
    if (v != LAYOUT_VERSION) {
      throw corrupt("level: table layout version " + v + ", expected " + LAYOUT_VERSION);
    }
    long k = (long) LONG.get(m, h + HDR_K);
    if (k < MIN_K || k > MAX_K) {
      throw corrupt("level: k = " + k + " outside " + MIN_K + ".." + MAX_K);
    }
    long top = (long) LONG.get(m, h + HDR_TOP);
    long bottom = (long) LONG.get(m, h + HDR_BOTTOM);
    checkLevel(pool, top, LevelLayout.topBytes((int) k), "top");
    checkLevel(pool, bottom, LevelLayout.bottomBytes((int) k), "bottom");
    return new Levels(top, bottom, (int) k);
  }

  private static void checkLevel(Pool pool, long level, long bytes, String which) {
    SchemeAllocator a = pool.schemeAllocator();
    if (!a.owned(level) || a.blockSize(level) < bytes) {
      throw corrupt("level: the " + which + " level at " + level + " is not an owned block of " + bytes + " bytes");
    }
  }

  /** @return the records kept */
  static long repair(Pool pool, Levels l) {
    MemorySegment m = pool.memory();
    Persistence p = pool.persistence();
    return repairLevel(m, p, l, l.top(), 1L << l.k(), 0) + repairLevel(m, p, l, l.bottom(), 1L << (l.k() - 1), 1);
  }

  private static long repairLevel(MemorySegment m, Persistence p, Levels l, long level, long buckets, int shift) {
    long kept = 0;
    for (long i = 0; i < buckets; i++) {
      long b = bucket(level, i);
      long tok = LevelBucket.tokenAcquire(m, b);
      while (tok != 0) {
        int s = Long.numberOfTrailingZeros(tok);
        tok &= tok - 1;
        long key = LevelBucket.key(m, b, s);
        long h1 = LevelTable.hash1(key);
        long h2 = LevelTable.hash2(key);
        if (topIndex(h1, l.k()) >>> shift != i && topIndex(h2, l.k()) >>> shift != i) {
          throw corrupt("level: key " + key + " in bucket " + i + " of the " + (shift == 0 ? "top" : "bottom") + " level, not one of its buckets");
        }
        long first = LevelTable.find(m, l, key, h1, h2);
        if (first != (b | s)) {
          LevelBucket.delete(m, p, b, s);
        } else {
          kept++;
        }
      }
    }
    return kept;
  }
}
