package io.pmhash.schemes.esh;

import static io.pmhash.schemes.esh.EshLayout.*;

import io.pmhash.core.Persistence;
import io.pmhash.core.concurrent.UncheckedMemory;
import io.pmhash.core.concurrent.VersionLock;
import io.pmhash.core.hash.ByteMatch;
import io.pmhash.core.hash.Hashing;
import io.pmhash.schemes.internal.Damage;
import io.pmhash.schemes.internal.ExtendibleDirectory;
import java.lang.foreign.MemorySegment;

/**
 * The hot path over one segment of one geometry (ESH §4.3.3, Algorithms 4.1 and 4.2): bucket
 * addressing, the search of a home bucket and of its overflow buckets, and the record writes with
 * their persist orders. A flyweight: stateless apart from the geometry and the pool's {@link
 * Persistence}; every method takes the mapping and offsets. A record location is encoded as
 * {@code bucketOffset | slot} (buckets are 64-byte aligned, slots &lt; 14).
 *
 * <h2>Who may change what</h2>
 *
 * A record's <em>home</em> is bucket {@code (h >>> 8) & (buckets - 1)} of its segment; it lies in
 * its home or, as a <em>foreign</em> record, in another bucket of the segment that the home's OFRB
 * names. Every write of a key holds its home's lock, so the set of a home's records (wherever they
 * lie) changes only under that lock; a write that changes another bucket's slots or commit word
 * also holds that bucket's lock (taken with {@code tryLock}: a writer never waits for a second
 * lock while holding one, so there is no deadlock). A reader validates the home's version only.
 *
 * <h2>Invariants the persist orders come from</h2>
 *
 * <ol type="I">
 *   <li><b>A record is durable before the commit word that makes it a member.</b> One 8-byte
 *       release store of the commit word inserts or deletes a record (§4.3.2: "insertion is
 *       successful only after the metadata is persisted").
 *   <li><b>Overflow metadata over-approximates wherever it is used.</b> A home's OC is at least
 *       the number of its foreign records, and its OFRB names every bucket holding one, at every
 *       point a reader (which validates the home's version) or a clean shutdown can observe: an
 *       overflow insert raises OC and sets the OFRB bit before the neighbour's commit, a delete
 *       commits first and lowers OC after. A search that stops at OC = 0 ("stops early",
 *       Algorithm 4.2) never misses a record. Across a crash OC and OFRB are not trusted: the
 *       lazy recovery rebuilds them from the records before the segment is used ({@link
 *       #rebuild}), so their persist order is not load-bearing (the mutation check confirms:
 *       their flushes survive it); they are flushed with the operation that changes them so
 *       that a clean shutdown, after which nothing is rebuilt, leaves them durable.
 * </ol>
 *
 * Fingerprints are written with the commit word and flushed with it, not before: a crash may keep
 * a record without its fingerprint, so recovery recomputes every fingerprint from its key (as Dash
 * §4.8 does) before the segment is used.
 *
 * <h2>Persist order per operation (drains, lines)</h2>
 *
 * <ul>
 *   <li>insert into the home: pair flushed, drain; commit word and fingerprint, line 0 flushed,
 *       drain. 2 drains, 2 lines.
 *   <li>insert into a neighbour (Algorithm 4.1 lines 10–20): pair in the neighbour and the home's
 *       OC + 1 and OFRB bit flushed, drain; the neighbour's commit word and fingerprint flushed,
 *       drain (I). 2 drains, 3 lines.
 *   <li>update: the value, one 8-byte store, flushed, drain. 1 drain, 1 line.
 *   <li>delete from the home: commit word, flushed, drain. 1 drain, 1 line.
 *   <li>delete from a neighbour: the neighbour's commit word flushed, drain; then the home's OC - 1
 *       (and OFRB cleared at 0) flushed, not drained: recovery rebuilds it after a crash (II), and
 *       this thread's next drain carries it before a clean shutdown. 1 drain, 2 lines.
 * </ul>
 */
final class EshSegment {
  /** {@link #write} results. */
  static final int FALSE = 0;
  static final int TRUE = 1;
  /** The segment is full: split it and retry. */
  static final int FULL = 2;
  /** A neighbour's lock was busy: release the home's and retry. */
  static final int RETRY = 3;

  static final int PUT = 0;
  static final int PUT_IF_ABSENT = 1;
  static final int REPLACE = 2;
  static final int REPLACE_IF = 3;
  static final int REMOVE = 4;
  static final int REMOVE_IF = 5;

  final Persistence p;
  final int pairs;
  final int buckets;
  final long bucketBytes;
  /** Cache lines per bucket (4 for ESH's 256-byte bucket, 1 for ACCEH's 64-byte one). */
  final int bucketLines;
  final long bytes;
  private final int allSlots;
  private final long allBuckets;

  EshSegment(Persistence p, int pairs, int buckets) {
    this.p = p;
    this.pairs = pairs;
    this.buckets = buckets;
    this.bucketBytes = EshLayout.bucket(pairs).byteSize();
    this.bucketLines = (int) bucketBytes / 64;
    this.bytes = segmentBytes(bucketBytes, buckets);
    this.allSlots = (1 << pairs) - 1;
    this.allBuckets = buckets == 64 ? -1L : (1L << buckets) - 1;
  }

  // ---------------------------------------------------------------- addressing and reads

  long bucket(long seg, int i) {
    return seg + SEG_BUCKETS + bucketBytes * i;
  }

  int bucketIndex(long h) {
    return (int) (h >>> 8) & (buckets - 1);
  }

  static long pair(long b, int slot) {
    return b + PAIRS + PAIR_BYTES * slot;
  }

  static long key(MemorySegment m, long b, int slot) {
    return (long) LONG.get(m, pair(b, slot) + PAIR_KEY);
  }

  static long value(MemorySegment m, long b, int slot) {
    return (long) LONG.get(m, pair(b, slot) + PAIR_VALUE);
  }

  static long valueAt(MemorySegment m, long loc) {
    return value(m, loc & ~63L, (int) loc & 63);
  }

  static long commitAcquire(MemorySegment m, long b) {
    return (long) LONG.getAcquire(m, b + COMMIT);
  }

  static long ofrb(MemorySegment m, long b) {
    return (long) LONG.getAcquire(m, b + OFRB);
  }

  static long fps(MemorySegment m, long b) {
    return (long) LONG.getAcquire(m, b + FPS);
  }

  static int state(MemorySegment m, long b) {
    return (int) INT.getAcquire(m, b + STATE);
  }

  static long shapeAcquire(MemorySegment m, long seg) {
    return (long) LONG.getAcquire(m, seg + SEG_SHAPE);
  }

  /**
   * The slot among {@code slots} of bucket {@code b} holding {@code key}, or -1. The sixteen
   * fingerprint nibbles are compared at once ({@link ByteMatch#matchNibbleFlags}, no branch per
   * slot); keys are loaded only where the fingerprint matches, in slot order.
   */
  static int find(MemorySegment m, long b, int slots, long key, int fp) {
    long candidates = ByteMatch.matchNibbleFlags(fps(m, b), ByteMatch.broadcastNibble(fp));
    while (candidates != 0) {
      int slot = Long.numberOfTrailingZeros(candidates) >>> 2;
      if ((slots >>> slot & 1) != 0 && key(m, b, slot) == key) {
        return slot;
      }
      candidates &= candidates - 1;
    }
    return -1;
  }

  /**
   * Algorithm 4.2: the key's home {@code hb} first, then (if OC &gt; 0) the foreign slots of the
   * buckets its OFRB names. One loop and one call site of {@link #find} for the home and its
   * neighbours, as {@link #locateAt}: with the neighbours in a method of their own, C2 compiled
   * that method as a call in two JVMs of three profiled, having profiled the writers while the
   * table was young and few homes had overflowed (docs/design.md, "A hot path has no helper
   * behind a branch the young table rarely takes"; docs/format/esh.md, session 33).
   *
   * @return the key's location ({@code bucket | slot}), or -1 if absent
   */
  long locate(MemorySegment m, long seg, long hb, long key, int fp) {
    long c = commitAcquire(m, hb);
    long others = overflowCount(c) == 0 ? 0 : ofrb(m, hb);
    long b = hb;
    int slots = home(c);
    for (;;) {
      int slot = find(m, b, slots, key, fp);
      if (slot >= 0) {
        return b | slot;
      }
      if (others == 0) {
        return -1;
      }
      b = bucket(seg, Long.numberOfTrailingZeros(others));
      others &= others - 1;
      slots = foreign(commitAcquire(m, b));
    }
  }

  /**
   * {@link #locate} for an optimistic reader through {@link UncheckedMemory}: the same loads, by
   * absolute address, none checked. The caller has checked that the segment lies inside a live
   * mapping; every bucket read here is one of its {@link #buckets} (a torn OFRB is masked to
   * them), so every address is inside it too.
   *
   * @param aseg the segment's address
   * @param ah the home bucket's address (one of the segment's)
   * @return {@code bucket address | slot} (buckets are 64-byte aligned), or -1
   */
  long locateAt(long aseg, long ah, long key, int fp) {
    long c = UncheckedMemory.getLong(ah + COMMIT);
    // the buckets still to search after the home: those its OFRB names, when its OC says some of
    // its records are in them. One loop and one call site of findAt for the home and its
    // neighbours, so that the compiler, which sees neighbours rarely where it profiles (positive
    // searches), still compiles their search inline rather than as a call (docs/format/esh.md)
    long others = overflowCount(c) == 0 ? 0 : UncheckedMemory.getLong(ah + OFRB) & allBuckets;
    long b = ah;
    int slots = home(c);
    for (;;) {
      int slot = findAt(b, slots, key, fp);
      if (slot >= 0) {
        return b | slot;
      }
      if (others == 0) {
        return -1;
      }
      b = bucket(aseg, Long.numberOfTrailingZeros(others));
      others &= others - 1;
      slots = foreign(UncheckedMemory.getLong(b + COMMIT));
    }
  }

  /**
   * One word of each record line of the bucket at address {@code ah} (up to three: buckets are at
   * most 256 bytes), for {@link io.pmhash.core.concurrent.Prefetch#keep}. Unrolled by hand: as a
   * loop over {@link #bucketLines} the compiled read ran at about 0.7 of the speed of these loads.
   */
  long recordLinesAt(long ah) {
    int lines = bucketLines;
    long touched = 0;
    if (lines > 1) {
      touched ^= UncheckedMemory.getLong(ah + 64);
    }
    if (lines > 2) {
      touched ^= UncheckedMemory.getLong(ah + 128);
    }
    if (lines > 3) {
      touched ^= UncheckedMemory.getLong(ah + 192);
    }
    return touched;
  }

  /** {@link #find} by absolute address ({@link #locateAt}). */
  private static int findAt(long b, int slots, long key, int fp) {
    long candidates = ByteMatch.matchNibbleFlags(UncheckedMemory.getLong(b + FPS), ByteMatch.broadcastNibble(fp));
    while (candidates != 0) {
      int slot = Long.numberOfTrailingZeros(candidates) >>> 2;
      if ((slots >>> slot & 1) != 0 && UncheckedMemory.getLong(pair(b, slot) + PAIR_KEY) == key) {
        return slot;
      }
      candidates &= candidates - 1;
    }
    return -1;
  }

  /** @return the value at a location {@link #locateAt} returned */
  static long valueAt(long location) {
    return UncheckedMemory.getLong(pair(location & ~63L, (int) location & 63) + PAIR_VALUE);
  }

  // ---------------------------------------------------------------- writes (home lock held)

  /**
   * One write of Algorithm 4.1 (and update, delete) with the home bucket's lock held.
   *
   * @return {@link #TRUE}, {@link #FALSE}, {@link #FULL} or {@link #RETRY}
   */
  int write(MemorySegment m, long seg, long hb, long key, long value, long expected, int op, int fp) {
    long loc = locate(m, seg, hb, key, fp);
    if (loc >= 0) {
      switch (op) {
        case PUT -> {
          update(m, loc, value);
          return FALSE;
        }
        case PUT_IF_ABSENT -> {
          return FALSE;
        }
        case REPLACE -> {
          update(m, loc, value);
          return TRUE;
        }
        case REPLACE_IF -> {
          if (valueAt(m, loc) != expected) {
            return FALSE;
          }
          update(m, loc, value);
          return TRUE;
        }
        default -> {
          if (op == REMOVE_IF && valueAt(m, loc) != expected) {
            return FALSE;
          }
          return delete(m, hb, loc);
        }
      }
    }
    if (op != PUT && op != PUT_IF_ABSENT) {
      return FALSE;
    }
    long c = commitAcquire(m, hb);
    if (!full(c)) {
      insert(m, hb, Integer.numberOfTrailingZeros(~alloc(c) & allSlots), key, value, fp, false);
      return TRUE;
    }
    return insertOverflow(m, seg, hb, key, value, fp);
  }

  /** Writes a record into a free slot of {@code b} and commits it (invariant I): 2 drains. */
  private void insert(MemorySegment m, long b, int slot, long key, long value, int fp, boolean foreign) {
    long pr = pair(b, slot);
    LONG.set(m, pr + PAIR_KEY, key);
    LONG.set(m, pr + PAIR_VALUE, value);
    p.flush(pr, PAIR_BYTES);
    // PERSIST(§4.3.3, Alg. 4.1 line 16, invariant I): the pair is durable before the commit word that makes the record a member
    p.drain();
    commitSlot(m, b, slot, fp, foreign);
    p.flush(b, PAIRS);
    // PERSIST(§4.3.3, Alg. 4.1 lines 17-20): the commit word (membership, MC, OB) is durable before put returns
    p.drain();
  }

  private void commitSlot(MemorySegment m, long b, int slot, int fp, boolean foreign) {
    LONG.set(m, b + FPS, withFingerprint((long) LONG.get(m, b + FPS), slot, fp));
    long c = (long) LONG.get(m, b + COMMIT);
    int f = foreign(c) | (foreign ? 1 << slot : 0);
    LONG.setRelease(m, b + COMMIT, commit(alloc(c) | 1 << slot, f, overflowCount(c), pairs));
  }

  /**
   * Algorithm 4.1 lines 10–13: the home is full (OB = 1); the next bucket of the segment with room
   * takes the record, and the home's OC and OFRB record it. A neighbour whose lock is busy is
   * skipped.
   */
  private int insertOverflow(MemorySegment m, long seg, long hb, long key, long value, int fp) {
    int home = (int) ((hb - seg - SEG_BUCKETS) / bucketBytes);
    boolean busy = false;
    for (int i = 1; i < buckets; i++) {
      int j = (home + i) & (buckets - 1);
      long t = bucket(seg, j);
      if (full(commitAcquire(m, t))) {
        continue;
      }
      if (!VersionLock.tryLock(m, t + LOCK)) {
        busy = true;
        continue;
      }
      int held = VersionLock.held(m, t + LOCK);
      try {
        long tc = commitAcquire(m, t);
        if (full(tc)) {
          continue;
        }
        int slot = Integer.numberOfTrailingZeros(~alloc(tc) & allSlots);
        long hc = (long) LONG.get(m, hb + COMMIT);
        LONG.setRelease(m, hb + COMMIT, withOverflowCount(hc, overflowCount(hc) + 1));
        LONG.setRelease(m, hb + OFRB, (long) LONG.get(m, hb + OFRB) | 1L << j);
        p.flush(hb, PAIRS); // for a clean shutdown (II): after a crash recovery rebuilds OC and OFRB
        insert(m, t, slot, key, value, fp, true);
        return TRUE;
      } finally {
        VersionLock.unlock(m, t + LOCK, held);
      }
    }
    return busy ? RETRY : FULL;
  }

  /** Replaces a record's value in place: one 8-byte store, 1 drain. */
  private void update(MemorySegment m, long loc, long value) {
    long v = pair(loc & ~63L, (int) loc & 63) + PAIR_VALUE;
    LONG.setRelease(m, v, value);
    p.flush(v, 8);
    // PERSIST(update): the new value (one atomic word) is durable before the update returns
    p.drain();
  }

  /** Deletes the record at {@code loc} (§4.3.4 step 6): 1 drain. */
  private int delete(MemorySegment m, long hb, long loc) {
    long t = loc & ~63L;
    int slot = (int) loc & 63;
    if (t == hb) {
      uncommitSlot(m, t, slot);
      // PERSIST(delete, invariant I): the cleared membership is durable before remove returns
      p.drain();
      return TRUE;
    }
    if (!VersionLock.tryLock(m, t + LOCK)) {
      return RETRY;
    }
    int held = VersionLock.held(m, t + LOCK);
    try {
      uncommitSlot(m, t, slot);
      // PERSIST(delete from a neighbour, invariant I): the record is durably gone before remove returns
      p.drain();
    } finally {
      VersionLock.unlock(m, t + LOCK, held);
    }
    long hc = (long) LONG.get(m, hb + COMMIT);
    int oc = overflowCount(hc) - 1;
    LONG.setRelease(m, hb + COMMIT, withOverflowCount(hc, oc));
    if (oc == 0) {
      LONG.setRelease(m, hb + OFRB, 0L); // no record of the home is left outside it
    }
    p.flush(hb, PAIRS); // for a clean shutdown, not drained (II): after a crash recovery rebuilds OC and OFRB
    return TRUE;
  }

  private void uncommitSlot(MemorySegment m, long b, int slot) {
    long c = (long) LONG.get(m, b + COMMIT);
    LONG.setRelease(m, b + COMMIT, commit(alloc(c) & ~(1 << slot), foreign(c) & ~(1 << slot), overflowCount(c), pairs));
    p.flush(b + COMMIT, 8);
  }

  // ---------------------------------------------------------------- whole segment

  /** Locks every bucket in index order (a split). */
  void lockAll(MemorySegment m, long seg) {
    for (int i = 0; i < buckets; i++) {
      Damage.lock(m, bucket(seg, i) + LOCK, "esh bucket lock");
    }
  }

  void unlockAll(MemorySegment m, long seg) {
    for (int i = buckets - 1; i >= 0; i--) {
      VersionLock.unlock(m, bucket(seg, i) + LOCK);
    }
  }

  /** @return the records of a segment */
  long records(MemorySegment m, long seg) {
    long n = 0;
    for (int i = 0; i < buckets; i++) {
      n += Integer.bitCount(alloc(commitAcquire(m, bucket(seg, i))));
    }
    return n;
  }

  /**
   * Rebuilds every bucket's metadata from its records (recovery, and a split finished by it):
   * fingerprints from the keys' hashes, MC and OB from the membership, and OC and OFRB exactly
   * from the foreign records' homes. Only the records {@code (depth, pattern)} covers stay
   * members. Flushes every bucket's metadata; no drain. Idempotent; the caller has the segment to
   * itself.
   */
  void rebuild(MemorySegment m, long seg, int depth, long pattern) {
    rebuild(m, seg, depth, pattern, null, null);
  }

  /**
   * {@link #rebuild(MemorySegment, long, int, long)} for a split's old half, whose records'
   * hashes the split has: {@code moved} (per bucket, the slots whose records the new half took)
   * are dropped and the others keep their hashes from {@code hashes} ({@code i * pairs + slot}),
   * or, both null, every record is hashed and kept if {@code (depth, pattern)} covers it.
   */
  void rebuild(MemorySegment m, long seg, int depth, long pattern, int[] moved, long[] hashes) {
    int[] oc = new int[buckets];
    long[] ofrb = new long[buckets];
    int[] alloc = new int[buckets];
    int[] foreign = new int[buckets];
    long[] fps = new long[buckets];
    for (int i = 0; i < buckets; i++) {
      long b = bucket(seg, i);
      long c = (long) LONG.get(m, b + COMMIT);
      int a = alloc(c) & allSlots & (moved != null ? ~moved[i] : -1);
      int f = 0;
      long fp = 0;
      for (int s = a; s != 0; s &= s - 1) {
        int slot = Integer.numberOfTrailingZeros(s);
        long h;
        if (hashes != null) {
          h = hashes[i * pairs + slot];
        } else {
          h = Hashing.hash(key(m, b, slot));
          if (ExtendibleDirectory.prefix(h, depth) != pattern) {
            a &= ~(1 << slot); // a record the segment's shape no longer covers: a split moved it
            continue;
          }
        }
        fp = withFingerprint(fp, slot, fingerprint(h));
        int home = bucketIndex(h);
        if (home != i) {
          f |= 1 << slot;
          oc[home]++;
          ofrb[home] |= 1L << i;
        }
      }
      alloc[i] = a;
      foreign[i] = f;
      fps[i] = fp;
    }
    for (int i = 0; i < buckets; i++) {
      long b = bucket(seg, i);
      LONG.set(m, b + FPS, fps[i]);
      LONG.setRelease(m, b + OFRB, ofrb[i]);
      LONG.setRelease(m, b + COMMIT, commit(alloc[i], foreign[i], oc[i], pairs));
      p.flush(b, PAIRS);
    }
  }

  /**
   * Places a record in a segment nobody else can see yet (a split's new half): its home if there
   * is room, else the next bucket with room (Algorithm 4.1's order). Updates commit words, OC and
   * OFRB; flushes nothing.
   *
   * @return false if the segment is full
   */
  boolean place(MemorySegment m, long seg, long key, long value, long h) {
    int home = bucketIndex(h);
    for (int i = 0; i < buckets; i++) {
      int j = (home + i) & (buckets - 1);
      long t = bucket(seg, j);
      long c = (long) LONG.get(m, t + COMMIT);
      if (full(c)) {
        continue;
      }
      int slot = Integer.numberOfTrailingZeros(~alloc(c) & allSlots);
      LONG.set(m, pair(t, slot) + PAIR_KEY, key);
      LONG.set(m, pair(t, slot) + PAIR_VALUE, value);
      commitSlot(m, t, slot, fingerprint(h), i != 0);
      if (i != 0) {
        long hb = bucket(seg, home);
        long hc = (long) LONG.get(m, hb + COMMIT);
        LONG.set(m, hb + COMMIT, withOverflowCount(hc, overflowCount(hc) + 1));
        LONG.set(m, hb + OFRB, (long) LONG.get(m, hb + OFRB) | 1L << j);
      }
      return true;
    }
    return false;
  }
}
