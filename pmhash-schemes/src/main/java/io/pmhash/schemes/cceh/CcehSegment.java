package io.pmhash.schemes.cceh;

import static io.pmhash.schemes.cceh.CcehLayout.*;

import io.pmhash.core.Persistence;
import io.pmhash.core.concurrent.Prefetch;
import io.pmhash.core.concurrent.SwitchPoint;
import io.pmhash.core.concurrent.UncheckedMemory;
import io.pmhash.schemes.internal.Damage;
import java.lang.foreign.MemorySegment;

/**
 * The hot path over one segment (CCEH §3.3): the reader-writer lock, the 16-slot probe window and
 * the record operations. A flyweight: stateless apart from the pool's {@link Persistence}; every
 * method takes the mapping and the segment's offset.
 *
 * <h2>Locking (CCEH §4; Dash §6.1)</h2>
 *
 * One reader-writer lock per segment, in the segment header: readers CAS the reader count up
 * and down (so a search writes the lock's cache line, which is what makes CCEH's reads scale
 * worse than Dash's optimistic ones, Dash §6.3); a writer CASes the writer bit in once the
 * readers are gone. A waiting writer sets {@link CcehLayout#WRITER_WAITING} so new readers hold
 * back and writers are not starved. The lock word is never flushed; recovery resets it.
 *
 * <h2>Persist order</h2>
 *
 * <ul>
 *   <li>insert: key and value written to a free slot, the slot's line flushed, drain; then the
 *       slot's valid bit set (release), the bitmap line flushed, drain. 2 drains, 2 lines.
 *   <li>update: the value replaced with one 8-byte release store, flushed, drain. 1 drain.
 *   <li>delete: the valid bit cleared (release), flushed, drain. 1 drain.
 * </ul>
 */
final class CcehSegment {
  private final Persistence p;

  CcehSegment(Persistence p) {
    this.p = p;
  }

  // ---------------------------------------------------------------- lock

  static void readLock(MemorySegment m, long seg) {
    SwitchPoint.here();
    long off = seg + SEG_LOCK;
    long w = (long) LONG.getVolatile(m, off);
    if ((w & (WRITER | WRITER_WAITING)) == 0 && LONG.compareAndSet(m, off, w, w + 1)) {
      return;
    }
    readLockSlow(m, off);
  }

  /**
   * The wait of {@link #readLock}, bounded: a word that stays unchanged while it keeps readers
   * out for {@link Damage#STUCK_LOCK_MILLIS} ms is damage (a lock word is reset only by recovery
   * after a crash, not after a clean shutdown).
   */
  private static void readLockSlow(MemorySegment m, long off) {
    for (;;) {
      long w = (long) LONG.getVolatile(m, off);
      if ((w & (WRITER | WRITER_WAITING)) == 0) {
        if (LONG.compareAndSet(m, off, w, w + 1)) {
          return;
        }
        continue;
      }
      Damage.awaitWordChange(m, off, w, o -> (long) LONG.getVolatile(m, o), "cceh segment lock");
    }
  }

  static void readUnlock(MemorySegment m, long seg) {
    SwitchPoint.here();
    long unused = (long) LONG.getAndAdd(m, seg + SEG_LOCK, -1L);
  }

  static void writeLock(MemorySegment m, long seg) {
    SwitchPoint.here();
    long off = seg + SEG_LOCK;
    long w = (long) LONG.getVolatile(m, off);
    if ((w & ~WRITER_WAITING) == 0 && LONG.compareAndSet(m, off, w, WRITER)) {
      return;
    }
    writeLockSlow(m, off);
  }

  /** The wait of {@link #writeLock}, bounded as {@link #readLockSlow}'s. */
  private static void writeLockSlow(MemorySegment m, long off) {
    for (;;) {
      long w = (long) LONG.getVolatile(m, off);
      if ((w & ~WRITER_WAITING) == 0) {
        if (LONG.compareAndSet(m, off, w, WRITER)) {
          return;
        }
        continue;
      }
      if ((w & WRITER_WAITING) == 0) {
        LONG.compareAndSet(m, off, w, w | WRITER_WAITING);
        continue;
      }
      Damage.awaitWordChange(m, off, w, o -> (long) LONG.getVolatile(m, o), "cceh segment lock");
    }
  }

  static void writeUnlock(MemorySegment m, long seg) {
    SwitchPoint.here();
    // a writer that waits re-sets its flag; clearing it here is harmless
    LONG.setRelease(m, seg + SEG_LOCK, 0L);
  }

  static long shapeAcquire(MemorySegment m, long seg) {
    return (long) LONG.getAcquire(m, seg + SEG_SHAPE);
  }

  // ---------------------------------------------------------------- bitmap

  static long bitmapWord(MemorySegment m, long seg, int w) {
    return (long) LONG.getAcquire(m, seg + SEG_BITMAP + 8L * w);
  }

  /**
   * The lines an operation on the window from {@code start} reads under the segment's lock,
   * loaded before it takes the lock ({@link Prefetch}): the bitmap word of the window's first slot
   * and the window's first {@code buckets} buckets (one line each, wrapping at the segment's end).
   * Writers load the whole window ({@link CcehLayout#PROBE_BUCKETS}); readers the bitmap word and
   * the first bucket, where the probe starts (docs/format/cceh.md, Concurrency). Every offset is
   * inside the segment whatever it holds.
   *
   * @param buckets how many of the window's buckets, 1 to {@link CcehLayout#PROBE_BUCKETS}
   * @return the loaded values folded together, for {@link Prefetch#keep}
   */
  static long prefetchWindow(MemorySegment m, long seg, int start, int buckets) {
    long touched = (long) LONG.get(m, seg + SEG_BITMAP + 8L * (start >>> 6));
    for (int b = 0; b < buckets; b++) {
      touched ^= (long) LONG.get(m, slotOffset(seg, (start + b * PAIRS_PER_BUCKET) & (SLOTS - 1)));
    }
    return touched;
  }

  /** The valid bits of the 16-slot window from {@code start} (a multiple of 4), bit i = slot start + i. */
  static int window(MemorySegment m, long seg, int start) {
    int w = start >>> 6;
    int o = start & 63;
    long bits = bitmapWord(m, seg, w) >>> o;
    if (o > 64 - PROBE_SLOTS) {
      bits |= bitmapWord(m, seg, (w + 1) & (BITMAP_WORDS - 1)) << (64 - o);
    }
    return (int) bits & ((1 << PROBE_SLOTS) - 1);
  }

  static boolean valid(MemorySegment m, long seg, int slot) {
    return (bitmapWord(m, seg, slot >>> 6) & (1L << slot)) != 0;
  }

  static long key(MemorySegment m, long seg, int slot) {
    return (long) LONG.get(m, slotOffset(seg, slot) + PAIR_KEY);
  }

  static long value(MemorySegment m, long seg, int slot) {
    return (long) LONG.get(m, slotOffset(seg, slot) + PAIR_VALUE);
  }

  /** @return the slot of {@code key} in the window from {@code start}, or -1 */
  static int find(MemorySegment m, long seg, int start, long key) {
    for (int win = window(m, seg, start); win != 0; win &= win - 1) {
      int slot = (start + Integer.numberOfTrailingZeros(win)) & (SLOTS - 1);
      if (key(m, seg, slot) == key) {
        return slot;
      }
    }
    return -1;
  }

  // ---------------------------------------------------------------- reads by address (read lock held)

  /**
   * {@link #prefetchWindow} of one bucket for a reader by address ({@link UncheckedMemory}):
   * {@code a} is the segment's address in a live mapping, the segment checked against it.
   */
  static long prefetchWindowAt(long a, int start) {
    return UncheckedMemory.getLong(a + SEG_BITMAP + 8L * (start >>> 6)) ^ UncheckedMemory.getLong(slotOffset(a, start));
  }

  /**
   * {@link #find} by address, for a reader that holds the segment's read lock: no writer changes
   * the segment meanwhile, and the lock's compare-and-set orders these plain loads after the last
   * writer's release, so no acquire is needed. {@code a} as in {@link #prefetchWindowAt}.
   */
  static int findAt(long a, int start, long key) {
    int w = start >>> 6;
    int o = start & 63;
    long bits = UncheckedMemory.getLong(a + SEG_BITMAP + 8L * w) >>> o;
    if (o > 64 - PROBE_SLOTS) {
      bits |= UncheckedMemory.getLong(a + SEG_BITMAP + 8L * ((w + 1) & (BITMAP_WORDS - 1))) << (64 - o);
    }
    for (int win = (int) bits & ((1 << PROBE_SLOTS) - 1); win != 0; win &= win - 1) {
      int slot = (start + Integer.numberOfTrailingZeros(win)) & (SLOTS - 1);
      if (UncheckedMemory.getLong(slotOffset(a, slot) + PAIR_KEY) == key) {
        return slot;
      }
    }
    return -1;
  }

  /** {@link #value} by address, as {@link #findAt}. */
  static long valueAt(long a, int slot) {
    return UncheckedMemory.getLong(slotOffset(a, slot) + PAIR_VALUE);
  }

  /** @return the first free slot of the window from {@code start}, or -1 (the caller holds the write lock) */
  static int freeSlot(MemorySegment m, long seg, int start) {
    int free = ~window(m, seg, start) & ((1 << PROBE_SLOTS) - 1);
    return free == 0 ? -1 : (start + Integer.numberOfTrailingZeros(free)) & (SLOTS - 1);
  }

  // ---------------------------------------------------------------- writes (write lock held)

  /** Writes a record into a free slot and publishes it: 2 drains. */
  void insert(MemorySegment m, long seg, int slot, long key, long value) {
    long pair = slotOffset(seg, slot);
    LONG.set(m, pair + PAIR_KEY, key);
    LONG.set(m, pair + PAIR_VALUE, value);
    p.flush(pair, PAIR_BYTES);
    // PERSIST(CCEH §3.3 insert, commit after data): the pair is durable before the valid bit that makes it part of the table
    p.drain();
    long w = seg + SEG_BITMAP + 8L * (slot >>> 6);
    LONG.setRelease(m, w, (long) LONG.get(m, w) | 1L << slot);
    p.flush(w, 8);
    // PERSIST(CCEH §3.3 insert, commit): the valid bit is durable before put returns
    p.drain();
  }

  /** Replaces a record's value in place: one 8-byte atomic store, 1 drain. */
  void update(MemorySegment m, long seg, int slot, long value) {
    long v = slotOffset(seg, slot) + PAIR_VALUE;
    LONG.setRelease(m, v, value);
    p.flush(v, 8);
    // PERSIST(update): the new value (one atomic word) is durable before the update returns
    p.drain();
  }

  /** Clears a record's valid bit: 1 drain; the slot is free at once. */
  void delete(MemorySegment m, long seg, int slot) {
    long w = seg + SEG_BITMAP + 8L * (slot >>> 6);
    LONG.setRelease(m, w, (long) LONG.get(m, w) & ~(1L << slot));
    p.flush(w, 8);
    // PERSIST(delete, commit): the cleared valid bit is durable before remove returns
    p.drain();
  }

  /** @return the records of a segment (a popcount of its bitmap) */
  static long count(MemorySegment m, long seg) {
    long n = 0;
    for (int w = 0; w < BITMAP_WORDS; w++) {
      n += Long.bitCount(bitmapWord(m, seg, w));
    }
    return n;
  }
}
