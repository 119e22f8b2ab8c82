package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashBucket.*;
import static io.pmhash.schemes.dash.DashLayout.BUCKET_BYTES;
import static io.pmhash.schemes.dash.DashLayout.LOCK;
import static io.pmhash.schemes.dash.DashLayout.LONG;
import static io.pmhash.schemes.dash.DashLayout.SLOTS;
import static io.pmhash.schemes.dash.DashLayout.STASH_FLAG;
import static io.pmhash.schemes.dash.DashLhLayout.*;
import static io.pmhash.schemes.dash.DashSegment.bucket;

import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.concurrent.VersionLock;
import io.pmhash.core.hash.Hashing;
import io.pmhash.schemes.internal.Damage;
import java.lang.foreign.MemorySegment;

/**
 * What a Dash-LH segment adds to a Dash-EH segment (Dash §5.1): the chain of extra stash
 * buckets. Everything inside the 64 normal and the fixed stash buckets is {@link DashSegment}'s
 * (balanced insert, displacement, stash with overflow metadata, update, delete, each with its
 * persist order); this class searches, extends and deletes from the chain.
 *
 * <p><b>Overflow metadata of chained records.</b> A chained record gets an overflow fingerprint in
 * its target bucket (else its probing bucket) as a fixed stash record does (§4.3), with the
 * overflow index {@link #chainIndex}, the first value that names no fixed stash bucket; where
 * both buckets' four entries are taken, or where the stash has four buckets and no index value is
 * left, it is counted in the target bucket's overflow count, which sets the "check the stash"
 * flag. A search walks the chain when one of its two buckets has an entry with that index and
 * its fingerprint, or the target bucket's flag is set ({@link #chainMayHold}). Layout version 1
 * counted every chained record, so one chained record made every search through its bucket walk
 * the chain (docs/format/dash-lh.md, "Negative searches and the chain"). Like all overflow
 * metadata it is rebuilt by recovery (§4.6, §4.8).
 *
 * <p><b>Locking.</b> Order: the key's two buckets, then the fixed stash buckets (as Dash-EH),
 * then the segment's chain lock, then chained buckets in chain order. Every writer of key k
 * holds k's two buckets, so a reader that validates their versions needs no chain lock; an
 * append holds the chain lock, so that two appends never race on the head link; a split holds
 * everything. A chain node is freed only by a merge ({@link DashLhMerge}), with the epoch-deferred
 * reuse of the allocator, so an optimistic reader (always inside an epoch) never follows a link
 * into reused memory; a split leaves a drained node in place.
 */
final class DashLhSegment {
  private final Pool pool;
  private final Persistence p;
  private final DashSegment segs;

  /**
   * The overflow index of a chained record's overflow fingerprint: the number of fixed stash
   * buckets (indexes {@code 0 .. stash - 1} name them); -1 with four stash buckets, where the
   * 2-bit index has no value left and every chained record is counted.
   */
  final int chainIndex;

  DashLhSegment(Pool pool, DashSegment segs) {
    this.pool = pool;
    this.p = pool.persistence();
    this.segs = segs;
    this.chainIndex = segs.stash < 4 ? segs.stash : -1;
  }

  /** @return the first chain node of a segment, 0 for none */
  static long chainHead(MemorySegment m, long seg) {
    return (long) LONG.getAcquire(m, seg + SEG_CHAIN);
  }

  /** @return the node after {@code node}, 0 at the end */
  static long nextNode(MemorySegment m, long node) {
    return (long) LONG.getAcquire(m, node + NODE_NEXT);
  }

  /**
   * Whether a search must walk the chain: the segment has one, and the key's target bucket's
   * "check the stash" flag is set or its overflow candidates hold the chain's index.
   *
   * @param w1 the target bucket's overflow word, {@link DashBucket#overflowWord}
   * @param candidates the key's {@link DashSegment#overflowCandidates}, from the same reads (an
   *     optimistic reader validates them)
   */
  boolean chainMayHold(MemorySegment m, long seg, long w1, int candidates) {
    if ((ovfBitmap(w1) & STASH_FLAG) == 0 && (chainIndex < 0 || (candidates & 1 << chainIndex) == 0)) {
      return false;
    }
    return chainHead(m, seg) != 0;
  }

  /**
   * Records a chained record of fingerprint {@code fp} in its buckets' overflow metadata: {@link
   * DashBucket#recordOverflow} with {@link #chainIndex}, or the target's overflow count where the
   * index has no value left. Plain stores; the caller holds both buckets (or every lock) and
   * flushes their first lines.
   *
   * @throws IllegalStateException if the target's overflow count would pass 255 (nothing changed)
   */
  private void countChained(MemorySegment m, long b1, long b2, int fp) {
    if (chainIndex < 0) {
      incrementOverflowCount(m, b1);
    } else {
      recordOverflow(m, b1, b2, fp, chainIndex);
    }
  }

  /** Undoes {@link #countChained} for a chained record of fingerprint {@code fp}; plain stores. */
  private void uncountChained(MemorySegment m, long b1, long b2, int fp) {
    if (chainIndex < 0) {
      decrementOverflowCount(m, b1);
    } else {
      forgetOverflow(m, b1, b2, fp, chainIndex);
    }
  }

  /** A mapping that covers {@code node}: the caller's, or the pool's current one. */
  private MemorySegment covering(MemorySegment m, long node) {
    return node + NODE_BYTES <= m.byteSize() ? m : pool.memory();
  }

  /**
   * Searches the chain (no locks: the caller validates or holds the key's two buckets).
   *
   * @return {@code bucket offset | slot}, or -1
   */
  long findInChain(MemorySegment m, long seg, long key, int fp) {
    for (long node = chainHead(m, seg); node != 0; node = nextNode(m, node)) {
      m = covering(m, node);
      long b = node + NODE_BUCKET;
      int slot = find(m, b, bitmapAcquire(m, b), key, fp);
      if (slot >= 0) {
        return b | slot;
      }
    }
    return -1;
  }

  /**
   * Inserts an absent key into the chain, the caller holding the key's two buckets {@code b1}
   * and {@code b2} (the segment is full otherwise): the first chained bucket with room (the
   * persist order of {@link DashSegment#put}), else a new node.
   *
   * @return true if a new chained bucket was allocated (Dash §5.1: a split is due)
   */
  boolean insertChain(MemorySegment mapping, long seg, long b1, long b2, long key, long value, int fp) {
    MemorySegment m = pool.memory();
    Damage.lock(m, seg + SEG_CHAIN_LOCK, "dash-lh chain lock");
    try {
      for (long node = chainHead(m, seg); node != 0; node = nextNode(m, node)) {
        long b = node + NODE_BUCKET;
        Damage.lock(m, b + LOCK, "dash-lh bucket lock");
        try {
          int bm = bitmap(m, b);
          if (count(bm) < SLOTS) {
            // overflow metadata first (it may name a record that does not exist yet: harmless,
            // and rebuilt by recovery); put drains it with the record (§4.6)
            countChained(m, b1, b2, fp);
            flushMeta(p, b1);
            flushMeta(p, b2);
            segs.put(m, b, bm, key, value, fp, false, null);
            return false;
          }
        } finally {
          VersionLock.unlock(m, b + LOCK);
        }
      }
      appendNode(seg, b1, b2, key, value, fp);
      return true;
    } finally {
      VersionLock.unlock(m, seg + SEG_CHAIN_LOCK);
    }
  }

  /**
   * A new node holding the record in slot 0, linked at the head of the chain. The node is built
   * completely while it is reserved and nothing names it; one allocator step then owns it and
   * stores it into the head link. A crash before the step leaves no trace; after, the record.
   */
  private void appendNode(long seg, long b1, long b2, long key, long value, int fp) {
    SchemeAllocator.Reserved r = pool.schemeAllocator().reserve(NODE_BYTES);
    MemorySegment m = pool.memory();
    try {
      countChained(m, b1, b2, fp);
    } catch (IllegalStateException e) {
      pool.schemeAllocator().cancel(r);
      throw e;
    }
    long node = r.offset();
    initNode(m, node, chainHead(m, seg));
    long b = node + NODE_BUCKET;
    writeRecord(m, b, 0, key, value, fp);
    setBitmapRelease(m, b, withSlot(0, 0, false));
    p.flush(node, NODE_BYTES);
    flushMeta(p, b1);
    flushMeta(p, b2);
    try (SchemeAllocator.Step pub = pool.schemeAllocator().begin()) {
      pub.publish(r, seg + SEG_CHAIN);
      // PERSIST(§5.1 chained stash): the node and its record are durable (flushed above, ordered by the redo entries' drain) before the step that owns it and links it at the head commits
      pub.commit();
    }
  }

  /** Zeroes a node (lock and bitmap included) and sets its next link; plain stores. */
  static void initNode(MemorySegment m, long node, long next) {
    m.asSlice(node, NODE_BYTES).fill((byte) 0);
    LONG.set(m, node + NODE_NEXT, next);
  }

  /** @return whether {@code location} is in a chained bucket rather than in the segment */
  static boolean isChained(long seg, long segBytes, long location) {
    long b = location & ~63L;
    return b < seg || b >= seg + segBytes;
  }

  /**
   * Deletes a chained record of fingerprint {@code fp}, the caller holding the key's two buckets
   * {@code b1} and {@code b2}: the bitmap bit cleared and its overflow metadata taken back
   * ({@link #uncountChained}), one drain (as a fixed stash delete, §4.6).
   */
  void deleteChained(MemorySegment mapping, long b1, long b2, long location, int fp) {
    MemorySegment m = covering(mapping, location);
    long b = location & ~63L;
    int slot = (int) location & 63;
    Damage.lock(m, b + LOCK, "dash-lh bucket lock");
    try {
      setBitmapRelease(m, b, withoutSlot(bitmap(m, b), slot));
      uncountChained(m, b1, b2, fp);
      flushMeta(p, b);
      flushMeta(p, b1);
      flushMeta(p, b2);
      // PERSIST(§4.6 delete): the chained bucket's cleared bit is durable; the overflow metadata rides along (rebuilt by §4.8 recovery)
      p.drain();
    } finally {
      VersionLock.unlock(m, b + LOCK);
    }
  }

  /**
   * Rebuilds the overflow metadata of every normal bucket: the fixed stash's ({@link
   * DashSegment#rebuildOverflow}), then each chained record's ({@link #countChained}). Plain
   * stores; the caller holds every lock (or recovers) and flushes.
   */
  void rebuildOverflow(MemorySegment m, long seg) {
    segs.rebuildOverflow(m, seg);
    for (long node = chainHead(m, seg); node != 0; node = nextNode(m, node)) {
      long b = node + NODE_BUCKET;
      for (int a = allocated(bitmap(m, b)); a != 0; a &= a - 1) {
        countChainedRecord(m, seg, Hashing.hash(key(m, b, Integer.numberOfTrailingZeros(a))));
      }
    }
  }

  /** {@link #countChained} for a chained record of hash {@code h} that belongs to {@code seg}. */
  void countChainedRecord(MemorySegment m, long seg, long h) {
    int y = segs.bucketIndex(h);
    countChained(m, bucket(seg, y), bucket(seg, (y + 1) & segs.mask), DashSegment.fingerprintOf(h));
  }

  /**
   * Drops every record of the segment and its chain that {@code shape} does not cover (release
   * stores of bitmaps, no flush): the half a split moved to its new segment, or the copies of an
   * interrupted merge. The caller rebuilds the overflow metadata and persists.
   */
  void dropUncovered(MemorySegment m, long seg, long shape) {
    for (int i = 0; i < segs.normal + segs.stash; i++) {
      dropUncoveredIn(m, bucket(seg, i), shape);
    }
    dropUncoveredInChain(m, seg, shape);
  }

  /** {@link #dropUncovered} for the segment's chained buckets only. */
  void dropUncoveredInChain(MemorySegment m, long seg, long shape) {
    for (long node = chainHead(m, seg); node != 0; node = nextNode(m, node)) {
      dropUncoveredIn(m, node + NODE_BUCKET, shape);
    }
  }

  private static void dropUncoveredIn(MemorySegment m, long b, long shape) {
    int bm = bitmap(m, b);
    int keep = 0;
    for (int a = allocated(bm); a != 0; a &= a - 1) {
      int slot = Integer.numberOfTrailingZeros(a);
      if (DashLhTable.covers(shape, Hashing.hash(key(m, b, slot)))) {
        keep |= 1 << slot;
      }
    }
    if (keep != allocated(bm)) {
      setBitmapRelease(m, b, restrictTo(bm, keep));
    }
  }

  /** Flushes the metadata line of every chained bucket (no drain). */
  void flushChainMeta(MemorySegment m, long seg) {
    for (long node = chainHead(m, seg); node != 0; node = nextNode(m, node)) {
      flushMeta(p, node + NODE_BUCKET);
    }
  }

  /** Locks the chain lock, then every chained bucket in chain order. */
  static void lockChain(MemorySegment m, long seg) {
    Damage.lock(m, seg + SEG_CHAIN_LOCK, "dash-lh chain lock");
    for (long node = chainHead(m, seg); node != 0; node = nextNode(m, node)) {
      Damage.lock(m, node + NODE_BUCKET + LOCK, "dash-lh bucket lock");
    }
  }

  /** Unlocks what {@link #lockChain} locked (the chain cannot change while it is held). */
  static void unlockChain(MemorySegment m, long seg) {
    for (long node = chainHead(m, seg); node != 0; node = nextNode(m, node)) {
      VersionLock.unlock(m, node + NODE_BUCKET + LOCK);
    }
    VersionLock.unlock(m, seg + SEG_CHAIN_LOCK);
  }

  /** @return records in the chain */
  static long chainRecords(MemorySegment m, long seg) {
    long n = 0;
    for (long node = chainHead(m, seg); node != 0; node = nextNode(m, node)) {
      n += count(bitmapAcquire(m, node + NODE_BUCKET));
    }
    return n;
  }

  /** @return chained buckets */
  static long chainLength(MemorySegment m, long seg) {
    long n = 0;
    for (long node = chainHead(m, seg); node != 0; node = nextNode(m, node)) {
      n++;
    }
    return n;
  }

  /** @return the records of a segment: its buckets' and its chain's */
  long records(MemorySegment m, long seg) {
    return segs.records(m, seg) + chainRecords(m, seg);
  }

  /** @return records in the fixed stash and the chain */
  long stashRecords(MemorySegment m, long seg) {
    long n = chainRecords(m, seg);
    for (int i = 0; i < segs.stash; i++) {
      n += count(bitmapAcquire(m, seg + DashLayout.SEG_BUCKETS + (segs.normal + i) * BUCKET_BYTES));
    }
    return n;
  }
}
