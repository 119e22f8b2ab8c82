package io.pmhash.jmh;

import com.intel.pmem.llpl.Heap;
import com.intel.pmem.llpl.MemoryBlock;
import io.pmhash.core.hash.Hashing;
import java.nio.file.Path;

/**
 * The table a JVM user would write on a bare llpl heap (no pmhash): one PMDK pool made by
 * llpl's {@code Heap}, one zeroed {@code MemoryBlock} of 16-byte slots {@code {key, value}},
 * open addressing with linear probing, keys persisted as the commit. It is a baseline for {@link
 * LlplHeapBenchmark}, not a product: it does not grow (sized at create for the benchmark's
 * records), and it is divided into {@link #STRIPES} independent sub-tables, each probed within
 * itself under its own monitor, readers included (llpl has no compare-and-set to build optimistic
 * readers on).
 *
 * <p>Persist order, each step one llpl {@code flush} ({@code pmemobj_persist}: the lines written
 * back, then a fence), so the table is crash-consistent for single-key operations:
 *
 * <ul>
 *   <li>insert into an empty or deleted slot: the value, persisted; then the key, persisted —
 *       the key is the commit, a crash before it leaves the slot empty (2 persists, as a pmhash
 *       insert's 2 drains);
 *   <li>update: the value in place, one aligned 8-byte store, persisted (1);
 *   <li>delete: the key replaced by {@link #DELETED}, persisted (1).
 * </ul>
 *
 * Key 0 marks an empty slot and {@link #DELETED} a deleted one; the benchmark's keys ({@code
 * Keys.key}) are never either, and {@link #put} refuses them.
 */
final class LlplHeapStore implements Store {
  /** Independent sub-tables, each with its own monitor. */
  static final int STRIPES = 1024;
  /** A deleted slot's key (a tombstone, so probe sequences stay intact). */
  static final long DELETED = Long.MIN_VALUE;
  private static final long SLOT = 16;

  private final Heap heap;
  private final MemoryBlock slots;
  private final Object[] locks = new Object[STRIPES];
  private final long slotsPerStripe;
  private final int stripeShift;
  private final String description;

  /**
   * Creates the heap file and the table.
   *
   * @param file the PMDK pool file to create (must not exist)
   * @param capacity records the table must hold; slots are twice that, rounded up to a power of two
   */
  LlplHeapStore(Path file, long capacity) {
    long perStripe = Long.highestOneBit(Math.max(16, 2 * capacity / STRIPES - 1)) << 1;
    this.slotsPerStripe = perStripe;
    this.stripeShift = 64 - Integer.numberOfTrailingZeros(STRIPES);
    long bytes = perStripe * STRIPES * SLOT;
    // PMDK needs room for its own metadata beside the block: 1/32 plus 16 MiB (docs/llpl.md).
    this.heap = Heap.createHeap(file.toString(), bytes + bytes / 32 + (16L << 20));
    this.slots = heap.allocateMemoryBlock(bytes, false);
    slots.setMemory((byte) 0, 0, bytes);
    slots.flush();
    heap.setRoot(slots.handle());
    for (int i = 0; i < STRIPES; i++) {
      locks[i] = new Object();
    }
    this.description = "a bare llpl heap table (open addressing, " + STRIPES + " locked stripes, "
        + perStripe * STRIPES + " slots) in the PMDK pool " + file;
  }

  @Override
  public long get(long key, long absent) {
    long h = Hashing.hash(key);
    int stripe = (int) (h >>> stripeShift);
    synchronized (locks[stripe]) {
      long slot = find(stripe, h, key);
      return slot < 0 ? absent : slots.getLong(slot + 8);
    }
  }

  @Override
  public void put(long key, long value) {
    if (key == 0 || key == DELETED) {
      throw new IllegalArgumentException("key " + key + " is reserved by this table (0: empty, MIN_VALUE: deleted)");
    }
    long h = Hashing.hash(key);
    int stripe = (int) (h >>> stripeShift);
    synchronized (locks[stripe]) {
      long slot = find(stripe, h, key);
      if (slot >= 0) {
        slots.setLong(slot + 8, value);
        slots.flush(slot + 8, 8);
        return;
      }
      slot = free(stripe, h);
      slots.setLong(slot + 8, value);
      slots.flush(slot + 8, 8);
      slots.setLong(slot, key);
      slots.flush(slot, 8);
    }
  }

  @Override
  public void remove(long key) {
    long h = Hashing.hash(key);
    int stripe = (int) (h >>> stripeShift);
    synchronized (locks[stripe]) {
      long slot = find(stripe, h, key);
      if (slot >= 0) {
        slots.setLong(slot, DELETED);
        slots.flush(slot, 8);
      }
    }
  }

  /** @return the byte offset of {@code key}'s slot in its stripe, or -1 */
  private long find(int stripe, long h, long key) {
    long base = stripe * slotsPerStripe;
    long mask = slotsPerStripe - 1;
    for (long i = h & mask, n = 0; n < slotsPerStripe; i = (i + 1) & mask, n++) {
      long at = (base + i) * SLOT;
      long k = slots.getLong(at);
      if (k == key) {
        return at;
      }
      if (k == 0) {
        return -1;
      }
    }
    return -1;
  }

  /** @return the byte offset of the first empty or deleted slot of {@code h}'s probe sequence */
  private long free(int stripe, long h) {
    long base = stripe * slotsPerStripe;
    long mask = slotsPerStripe - 1;
    for (long i = h & mask, n = 0; n < slotsPerStripe; i = (i + 1) & mask, n++) {
      long at = (base + i) * SLOT;
      long k = slots.getLong(at);
      if (k == 0 || k == DELETED) {
        return at;
      }
    }
    throw new IllegalStateException("llpl heap table: stripe " + stripe + " is full (" + slotsPerStripe
        + " slots); it does not grow: create it with a larger capacity");
  }

  @Override
  public long size() {
    long n = 0;
    for (long at = 0; at < slotsPerStripe * STRIPES * SLOT; at += SLOT) {
      long k = slots.getLong(at);
      n += k != 0 && k != DELETED ? 1 : 0;
    }
    return n;
  }

  @Override
  public String describe() {
    return description;
  }

  @Override
  public void close() {
    // llpl 1.2.0 has no public close for a heap; the pool stays mapped until the fork exits.
  }
}
