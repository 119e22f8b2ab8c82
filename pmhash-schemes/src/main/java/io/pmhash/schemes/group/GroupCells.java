package io.pmhash.schemes.group;

import static io.pmhash.schemes.group.GroupLayout.CELL_BYTES;
import static io.pmhash.schemes.group.GroupLayout.CELL_VALUE;
import static io.pmhash.schemes.group.GroupLayout.LONG;

import io.pmhash.core.Persistence;
import io.pmhash.core.alloc.DramArrays;
import io.pmhash.core.concurrent.Prefetch;
import io.pmhash.core.concurrent.UncheckedMemory;
import io.pmhash.core.concurrent.VersionLock;
import io.pmhash.core.hash.ByteMatch;
import io.pmhash.core.hash.Hashing;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;

/**
 * One table block as the hot path sees it: its geometry, the addressing of cells and bits, the
 * per-cell operations of Algorithms 1–3, and the group locks. Immutable; an expansion or shrink
 * replaces it (never changes it). Cells are numbered 0 .. 2N-1 across both levels ({@link
 * GroupLayout}).
 *
 * <h2>Group locks (an extension of the paper)</h2>
 *
 * The paper's table is single-threaded. Each group has a {@link VersionLock} (Dash §4.4) held by
 * the writer of any cell of the group: a key's cells (its level-1 cell and the level-2 group) all
 * belong to one group, so a writer takes exactly one lock. Readers snapshot the version, read,
 * validate and retry; they never write (but for building a group's fingerprints, below). The
 * locks live in DRAM, 8 bytes each (128 KiB for the 16 Ki groups of a 128 MiB table: they stay in
 * cache), not in the table block: nothing in the
 * persistent image needs resetting after a crash, and the layout stays the paper's. Eight groups
 * share a cache line of locks; with random keys two threads rarely touch neighbouring groups at
 * once, and a writer's CAS costs a neighbour's reader a cache miss, never a retry. A table replaced by an expansion or
 * shrink keeps every lock held forever: a thread that finds a lock held and the table replaced
 * starts again on the new one.
 *
 * <p>The lock words are taken, released, snapshotted and validated <b>by address</b> ({@link
 * VersionLock#tryLockAt}, {@link VersionLock#snapshotAt}), never through {@link #locks}: the
 * {@code VersionLock} methods that take a segment are shared with the schemes whose locks live in
 * the pool's mapping (Dash, ESH), and a DRAM segment passed to them slows every scheme of the JVM
 * ({@link VersionLock#tryLockAt} says why and by how much). Each method that touches a word by
 * address keeps this table reachable until it is done ({@link Reference#reachabilityFence}), since
 * the array is freed with it.
 *
 * <h2>DRAM fingerprints (an extension of the paper)</h2>
 *
 * Algorithm 2 compares the key of every occupied cell of the level-2 group in order: at load
 * factor 0.75 a group holds about 185 records (47 cache lines), and a search for a key in level 2
 * reads half of them, a miss or an insert's absence check all of them. Here each cell also has a
 * one-byte fingerprint in DRAM ({@link #fps}: byte {@code c} for cell {@code c}, 2N bytes, 1/16
 * of the cells' size), taken from the low 8 bits of the key's hash (the home cell uses the top
 * bits), 0 meaning "free" (a hash whose low byte is 0 gets fingerprint 1). A lookup reads the
 * home cell's fingerprint instead of its persistent bitmap word, and scans the level-2 group's G
 * fingerprint bytes eight at a time ({@link ByteMatch}: G/64 cache lines, 4 for G = 256), comparing
 * keys only where the fingerprint matches (a false match for one occupied cell in 255). The
 * fingerprints are not persistent and not part of the format; they are rebuilt from the cells
 * after every open. After a crash the scan of Algorithm 4, which reads every cell anyway, builds
 * them all ({@link GroupRecovery}). After a clean shutdown the open stays O(1): each group is
 * built when an operation first touches it ({@link #built}, {@link #buildFingerprints}), under the
 * group's lock — the only case in which a reader takes a lock — from its bits and its occupied
 * cells' keys; the scan the open saves is paid one group at a time.
 *
 * <p>Consistency: a cell's fingerprint is written only by the holder of its group's lock — set
 * before the pair and the commit bit of an insert, cleared with the bit of a delete — so, under the
 * lock, fingerprint != 0 exactly when the cell's bit is 1 and then it is the fingerprint of the
 * cell's key ({@code GroupInvariants} checks it after every test). Optimistic readers may see a
 * writer's fingerprint before or after its pair; their version validation fails whenever a
 * writer held the lock meanwhile, so they retry, as they do for the pairs.
 *
 * <h2>DRAM overflow and free-cell hints (an extension of the paper)</h2>
 *
 * With the fingerprints alone, every operation on a key that is not at home scans the level-2
 * group's fingerprints from its first word: a negative search and an insert's absence check all
 * G/64 lines, a positive search of a level-2 key the lines up to it, and an insert that overflows
 * the lines up to the first free cell (at load factor 0.75, first-fit has filled about 185 of 256
 * level-2 cells, so three lines). Each level-1 cell's DRAM entry ({@link #homeEntry}, 4 bytes,
 * one load) carries, beside its fingerprint, two hints about the records whose home it is, and
 * each group's lock slot a third; all are written only under the group lock (or on a table nobody
 * else sees), and read by optimistic readers, whose version validation fails if a writer changed
 * them meanwhile:
 *
 * <ul>
 *   <li><b>Overflow word</b> (entry byte 1): 0 when no record whose home is this cell has been
 *       placed in level 2 since the entry was last rebuilt, else {@code 1 + min(w, 254)} for the
 *       lowest level-2 fingerprint word {@code w} such a record was placed in. Invariant (checked
 *       by {@code GroupInvariants}): every occupied level-2 cell whose key's home is {@code i} lies
 *       in word {@code overflowWord(i) - 1} or later; so a lookup that misses the home cell stops
 *       at once when it is 0 (a negative search then reads one DRAM line), and otherwise scans
 *       from that word. Sticky: a delete leaves it (a stale hint costs a scan, never a wrong
 *       answer); a rebuild (recovery, the first touch after a clean open, an expansion or shrink)
 *       sets it afresh.
 *   <li><b>Last overflow</b> (entry bytes 2..3): 0, or {@code 1 +} the index in the level-2 group
 *       of the cell where the last record of this home was placed in level 2. A guess, not an
 *       invariant: a lookup tests that cell's fingerprint and key before it scans, so a level-2
 *       key that is its home's last overflow is found one dependent load after the home entry
 *       instead of two (with uniform keys and no deletes at load factor 0.75, about 61 % of the
 *       level-2 records are; a recently inserted one usually is). A stale guess (the record deleted,
 *       the cell reused) fails the fingerprint or key test and costs that test only.
 *   <li><b>Free word</b> (bytes 6..7 of the group's lock slot, the line a writer reads for the
 *       lock): every level-2 fingerprint word below it has no free cell. An insert that overflows
 *       scans from it and moves it to the word where it found the free cell; a delete in level 2
 *       lowers it to its word. 0 (scan from the start) is always correct, so a new table starts
 *       with it. Placement is unchanged: the first free cell at or after it is the first free cell
 *       of the group.
 * </ul>
 *
 * Cost: the level-1 entries make the DRAM array 5N bytes (4 per level-1 cell, 1 per level-2
 * cell), 1/6.4 of the cells' 32N bytes.
 */
final class GroupCells {
  /**
   * Bytes per lock slot, eight groups to a cache line: the 4-byte VersionLock word, the group's
   * "fingerprints built" flag (bytes 4..5), its free-word hint (bytes 6..7).
   */
  private static final int LOCK_STRIDE_BYTES = 8;
  /** A byte of {@link #fps}. */
  private static final VarHandle FP = ValueLayout.JAVA_BYTE.varHandle().withInvokeExactBehavior();
  /** A level-1 cell's entry of {@link #fps}: fingerprint, overflow word, last overflow (GroupCells). */
  private static final VarHandle HOME_ENTRY = ValueLayout.JAVA_INT.varHandle().withInvokeExactBehavior();
  /** The last-overflow field of a level-1 cell's entry (its bytes 2..3). */
  private static final VarHandle LAST_OVERFLOW = ValueLayout.JAVA_SHORT.varHandle().withInvokeExactBehavior();
  /** The "fingerprints built" flag of a group: bytes 4..5 of its lock slot. */
  private static final VarHandle BUILT = ValueLayout.JAVA_SHORT.varHandle().withInvokeExactBehavior();
  private static final long BUILT_OFFSET = 4;
  /** The free-word hint of a group: bytes 6..7 of its lock slot. */
  private static final VarHandle FREE_FROM = ValueLayout.JAVA_SHORT.varHandle().withInvokeExactBehavior();
  private static final long FREE_FROM_OFFSET = 6;
  /** The largest word an overflow word names: {@code 1 + 254} fits its byte. */
  private static final int MAX_HINT_WORD = 254;

  /** Offset of the table block. */
  final long base;
  /** N, cells per level. */
  final long cells;
  /** log2 N. */
  final int cellBits;
  /** log2 G. */
  final int groupBits;
  /** Number of groups, N / G. */
  final long groups;
  /** Offset of the bitmap area. */
  final long bitmaps;
  /** Offset of cell 0 (level 1); cell c is at {@code level1 + 16 c}. */
  final long level1;
  /**
   * The group locks, in DRAM ({@link DramArrays}): the lock word at {@link #lockOffset}, the built
   * flag and free-word hint beside it. The lock words are accessed by address only (the class
   * comment).
   */
  final MemorySegment locks;
  /** The address of {@link #locks}: the lock words are taken and read by address. */
  private final long locksAddress;
  /**
   * The fingerprints and hints, in DRAM, 5N bytes: level-1 cell {@code c} has its 4-byte entry at
   * byte {@code 4c} (fingerprint, overflow word, last overflow: {@link #homeEntry}); level-2 cell
   * {@code c} (N &le; c &lt; 2N) its fingerprint at byte {@code 3N + c}, so a level-2 group's
   * fingerprints are contiguous. A fingerprint is 0 when its cell is free.
   */
  final MemorySegment fps;
  /** 3N: level-2 cell {@code c}'s fingerprint is byte {@code level2Fps + c} of {@link #fps}. */
  private final long level2Fps;
  /** The address of {@link #fps}, for the reads by address ({@link #findAt}, {@link #prefetchForPut}). */
  private final long fpsAddress;
  /** The offset just past the last cell: a mapping {@link #findAt} reads must cover it. */
  final long cellsEnd;

  /** A table whose fingerprints are all built: a new one (all cells free) or one being rehashed into. */
  GroupCells(long base, long cells, int groupSize) {
    this(base, cells, groupSize, true);
  }

  /**
   * @param built whether every group's fingerprints are (or, for a table nobody sees yet, will be)
   *     built before the table is used; false after a clean open: each group is built on first use
   */
  GroupCells(long base, long cells, int groupSize, boolean built) {
    this.base = base;
    this.cells = cells;
    this.cellBits = Long.numberOfTrailingZeros(cells);
    this.groupBits = Integer.numberOfTrailingZeros(groupSize);
    this.groups = cells >>> groupBits;
    this.bitmaps = base + GroupLayout.BITMAPS;
    this.level1 = base + GroupLayout.level1(cells);
    this.locks = DramArrays.zeroed(groups * LOCK_STRIDE_BYTES);
    this.locksAddress = UncheckedMemory.base(locks);
    // zeroed (every cell free) until GroupRecovery or GroupResize fills it; freed with this table
    this.fps = DramArrays.zeroed(5 * cells);
    this.level2Fps = 3 * cells;
    this.fpsAddress = UncheckedMemory.base(fps);
    this.cellsEnd = level1 + 2 * cells * CELL_BYTES;
    if (built) {
      markAllBuilt();
    }
  }

  /**
   * The fingerprint of a key.
   *
   * @param h the key's hash
   * @return its low 8 bits, 1 instead of 0 (0 marks a free cell): 1..255
   */
  static int fingerprint(long h) {
    int f = (int) h & 0xFF;
    return f | (f - 1) >>> 31;
  }

  /** @return the offset in {@link #fps} of cell {@code c}'s fingerprint */
  private long fpOffset(long c) {
    return c < cells ? 4 * c : level2Fps + c;
  }

  /** @return the fingerprint of cell {@code c}, 0 if it is free */
  int fp(long c) {
    return (byte) FP.get(fps, fpOffset(c)) & 0xFF;
  }

  /** @return the fingerprint of level-2 cell {@code c} (N &le; c &lt; 2N), 0 if it is free: {@link #fp} without its level test */
  private int level2Fp(long c) {
    return (byte) FP.get(fps, level2Fps + c) & 0xFF;
  }

  /** Sets cell {@code c}'s fingerprint (under the group lock, or on a table nobody else sees). */
  void setFp(long c, int fp) {
    FP.set(fps, fpOffset(c), (byte) fp);
  }

  /**
   * A level-1 cell's entry in one load.
   *
   * @return the fingerprint in bits 0..7, the overflow word in bits 8..15, the last overflow in
   *     bits 16..31
   */
  int homeEntry(long home) {
    return (int) HOME_ENTRY.get(fps, 4 * home);
  }

  /** @return the overflow word of level-1 cell {@code home}: 0, or 1 + the first level-2 word to scan */
  int overflowWord(long home) {
    return homeEntry(home) >>> 8 & 0xFF;
  }

  /** @return the last overflow of level-1 cell {@code home}: 0, or 1 + a level-2 index in its group */
  int lastOverflow(long home) {
    return homeEntry(home) >>> 16;
  }

  /** Clears both hints of every level-1 entry of group {@code g} (before a rebuild of its fingerprints). */
  private void clearHints(long g) {
    for (long home = g << groupBits, end = home + groupSize(); home < end; home++) {
      HOME_ENTRY.set(fps, 4 * home, homeEntry(home) & 0xFF);
    }
  }

  /**
   * Marks cell {@code c} occupied by a key with the given home and fingerprint: its fingerprint,
   * and for a level-2 cell its home's overflow word lowered to the cell's word if needed and its
   * last overflow set to the cell. Under the group lock, or on a table nobody else sees.
   */
  void occupy(long c, long home, int fp) {
    setFp(c, fp);
    if (c >= cells) {
      long index = c - level2First(groupOf(home)); // the cell's place in its level-2 group
      int word = 1 + (int) Math.min(index >>> 3, MAX_HINT_WORD);
      int current = overflowWord(home);
      if (current == 0 || word < current) {
        FP.set(fps, 4 * home + 1, (byte) word);
      }
      LAST_OVERFLOW.set(fps, 4 * home + 2, (short) (1 + index));
    }
  }

  /** {@link #occupy} for a key of hash {@code h} (the rebuilds: recovery, first touch, resize). */
  void occupyByHash(long c, long h) {
    occupy(c, home(h), fingerprint(h));
  }

  /** @return group {@code g}'s free-word hint: no level-2 word below it has a free cell */
  int freeFrom(long g) {
    return (short) FREE_FROM.get(locks, lockOffset(g) + FREE_FROM_OFFSET) & 0xFFFF;
  }

  private void setFreeFrom(long g, int word) {
    FREE_FROM.set(locks, lockOffset(g) + FREE_FROM_OFFSET, (short) word);
  }

  /**
   * Whether group {@code g}'s fingerprints are built. Once true, true for the life of this table.
   * The flag shares its group's lock slot (bytes 4..7), so it costs no cache line of its own.
   */
  boolean built(long g) {
    return (short) BUILT.getAcquire(locks, lockOffset(g) + BUILT_OFFSET) != 0;
  }

  /**
   * Builds group {@code g}'s fingerprints from its bits and the keys of its occupied cells (both
   * levels), then marks it built. Under the group lock: the first operation on a group after a
   * clean open ({@link GroupTable}).
   */
  void buildFingerprints(MemorySegment m, long g) {
    clearHints(g);
    int words = groupSize() >>> 6;
    for (int level = 0; level < 2; level++) {
      long first = level == 0 ? g << groupBits : level2First(g);
      for (int w = 0; w < words; w++) {
        long at = first + 64L * w;
        for (long bits = (long) LONG.get(m, bitmapWord(at)); bits != 0; bits &= bits - 1) {
          long c = at + Long.numberOfTrailingZeros(bits);
          occupyByHash(c, Hashing.hash(key(m, c)));
        }
      }
    }
    // the fingerprints are visible before the flag that says they are built
    BUILT.setRelease(locks, lockOffset(g) + BUILT_OFFSET, (short) 1);
  }

  /** Marks every group built: its fingerprints were (or will be) set before anyone reads the table. */
  void markAllBuilt() {
    for (long g = 0; g < groups; g++) {
      BUILT.set(locks, lockOffset(g) + BUILT_OFFSET, (short) 1);
    }
  }

  /** @return G */
  int groupSize() {
    return 1 << groupBits;
  }

  /** @return the record capacity, 2N */
  long capacity() {
    return 2 * cells;
  }

  /** @return the level-1 cell a hash addresses: its top log2 N bits */
  long home(long h) {
    return h >>> (64 - cellBits);
  }

  /** @return the group of a level-1 cell */
  long groupOf(long home) {
    return home >>> groupBits;
  }

  /** @return the pool offset of cell {@code c}'s pair */
  long pair(long c) {
    return level1 + c * CELL_BYTES;
  }

  /** @return the pool offset of the bitmap word holding cell {@code c}'s bit */
  long bitmapWord(long c) {
    long inLevel = c & (cells - 1);
    long group = inLevel >>> groupBits;
    long level2 = c >= cells ? 1L << (groupBits - 3) : 0;
    return bitmaps + (group << (groupBits - 2)) + level2 + ((inLevel >>> 3) & ((1L << (groupBits - 3)) - 8));
  }

  /** @return the pool offset of the first level-2 bitmap word of group {@code g} */
  long level2Bits(long g) {
    return bitmaps + (g << (groupBits - 2)) + (1L << (groupBits - 3));
  }

  /** @return the cell number of the first level-2 cell of group {@code g} */
  long level2First(long g) {
    return cells + (g << groupBits);
  }

  /** @return the offset of group {@code g}'s lock word in {@link #locks} */
  static long lockOffset(long g) {
    return g * LOCK_STRIDE_BYTES;
  }

  // ------------------------------------------------------------------ Algorithms 1–3

  /**
   * Finds a key for a reader (Algorithm 2): its level-1 cell, then (unless its home's overflow word
   * is 0) its home's last overflow, then the cells of its level-2 group whose fingerprint matches
   * from the overflow word on. The home cell's key is loaded only when the home's fingerprint
   * matches: a negative search then reads no cell at all (docs/format/group.md, "A reader's home
   * cell").
   *
   * @param home the key's level-1 cell
   * @param fp the key's {@link #fingerprint}
   * @return the cell number, or -1
   */
  long find(MemorySegment m, long key, long home, int fp) {
    int entry = homeEntry(home);
    if ((entry & 0xFF) == fp && key(m, home) == key) {
      return home;
    }
    return (entry & 0xFF00) == 0 ? -1 : findOverflow(m, key, home, fp, entry);
  }

  /**
   * A key whose home's overflow word is set: first the cell of the home's last overflow (its
   * fingerprint, then its key), then the fingerprints from the overflow word on.
   */
  private long findOverflow(MemorySegment m, long key, long home, int fp, int entry) {
    long g = groupOf(home);
    int last = entry >>> 16;
    if (last != 0) {
      long c = level2First(g) + last - 1;
      if (level2Fp(c) == fp && key(m, c) == key) {
        return c;
      }
    }
    return findLevel2(m, key, g, fp, (entry >>> 8 & 0xFF) - 1);
  }

  /** The level-2 cells of group {@code g} whose fingerprint matches, from fingerprint word {@code from}. */
  private long findLevel2(MemorySegment m, long key, long g, int fp, int from) {
    long first = level2First(g);
    long pattern = ByteMatch.broadcast(fp);
    MemorySegment f = fps;
    int words = 1 << (groupBits - 3);
    for (int w = from; w < words; w++) {
      long at = first + 8L * w;
      long hits = ByteMatch.matchFlags((long) LONG.get(f, level2Fps + at), pattern);
      while (hits != 0) {
        long c = at + (Long.numberOfTrailingZeros(hits) >>> 3);
        if ((long) LONG.get(m, pair(c)) == key) {
          return c;
        }
        hits &= hits - 1;
      }
    }
    return -1;
  }

  /**
   * {@link #find} for an optimistic reader through {@link UncheckedMemory}: the same loads, by
   * address, none checked. The fingerprints are this table's DRAM array (the caller keeps this
   * object reachable until it has validated); the cells are read at {@code mbase + pair(c)}, and
   * the caller has checked that the mapping at {@code mbase} covers {@link #cellsEnd}. Every
   * index is bounded: the home cell by the hash, the last overflow by the group size, the scan by
   * the group's words.
   *
   * @param mbase the address of a mapping of the pool that covers the cells
   * @return the cell number, or -1
   */
  long findAt(long mbase, long key, long home, int fp) {
    int entry = UncheckedMemory.getInt(fpsAddress + 4 * home);
    if ((entry & 0xFF) == fp && UncheckedMemory.getLong(mbase + pair(home)) == key) {
      return home;
    }
    if ((entry & 0xFF00) == 0) {
      return -1;
    }
    long first = level2First(groupOf(home));
    int last = entry >>> 16;
    if (last != 0 && last <= groupSize()) {
      long c = first + last - 1;
      if (UncheckedMemory.getUnsignedByte(fpsAddress + level2Fps + c) == fp && UncheckedMemory.getLong(mbase + pair(c)) == key) {
        return c;
      }
    }
    long pattern = ByteMatch.broadcast(fp);
    int words = 1 << (groupBits - 3);
    for (int w = (entry >>> 8 & 0xFF) - 1; w < words; w++) {
      long at = first + 8L * w;
      long hits = ByteMatch.matchFlags(UncheckedMemory.getLong(fpsAddress + level2Fps + at), pattern);
      while (hits != 0) {
        long c = at + (Long.numberOfTrailingZeros(hits) >>> 3);
        if (UncheckedMemory.getLong(mbase + pair(c)) == key) {
          return c;
        }
        hits &= hits - 1;
      }
    }
    return -1;
  }

  /** @return the value of an occupied cell, by address ({@link #findAt}) */
  long valueAt(long mbase, long c) {
    return UncheckedMemory.getLong(mbase + pair(c) + CELL_VALUE);
  }

  /**
   * A free cell for a new key (Algorithm 1): its level-1 cell if free, else the first free cell of
   * its level-2 group, found by the fingerprints (0 = free; under the lock they agree with the
   * bits) from the group's free-word hint, which it moves to the word it found. Under the group
   * lock, or on a table nobody else sees.
   *
   * @return the cell number, or -1 if the group is full
   */
  long freeCell(long home) {
    if (fp(home) == 0) {
      return home;
    }
    long g = groupOf(home);
    long first = level2First(g);
    MemorySegment f = fps;
    int words = 1 << (groupBits - 3);
    for (int w = freeFrom(g); w < words; w++) {
      long at = first + 8L * w;
      long free = ByteMatch.zeroByteFlags((long) LONG.get(f, level2Fps + at));
      if (free != 0) {
        setFreeFrom(g, w);
        return at + (Long.numberOfTrailingZeros(free) >>> 3);
      }
    }
    setFreeFrom(g, words);
    return -1;
  }

  /**
   * Starts, before an inserting writer ({@code put}, {@code putIfAbsent}, {@code replace}) takes
   * the group lock, the cache misses it will take under the lock: the lines of the key's home
   * entry, group bitmap and home cell (written when it is free), the level-2 fingerprints its
   * absence check scans (from the home's overflow word on), and the free word's fingerprints with
   * the two lines of its eight cells and their bitmap word, one of which an insert that overflows
   * takes (both, so that they need not wait for the word). The lock's CAS waits for earlier
   * loads, so these misses overlap one another instead of following each other under the lock,
   * where the pair's write then hits the cache and its persist does not wait for the line
   * (docs/format/group.md, "Writers load before they lock").
   *
   * <p>Only the level-2 fingerprint lines wait for the home entry (they start at its overflow
   * word); every other address is known before it arrives, and those lines are loaded whatever
   * the entry holds (a free home needs no free word, a taken one not its cell): chosen by the
   * entry, they waited for its miss, two misses deep instead of one (docs/format/group.md, "One
   * miss deep"). An update of a key in level 2 reads its cell under the lock.
   *
   * <p>Nothing read here is trusted: the writer reads everything again under the lock. It is safe
   * without the lock (but inside the epoch, which keeps this table's DRAM arrays and the mapping
   * {@code m} mapped): every address it computes lies in this table's arrays whatever the hints
   * read, as they are always words of the key's group; it reads by address ({@link
   * UncheckedMemory}), and with assertions on checks each address against the table.
   *
   * @param home the key's level-1 cell
   * @return a value derived from every load, for {@link Prefetch#keep}, so that no load is optimised away
   */
  long prefetchForPut(MemorySegment m, long home) {
    long g = groupOf(home);
    int entry = homeEntry(home);
    long first = level2First(g);
    long freeAt = first + 8L * Math.min(freeFrom(g), (1 << (groupBits - 3)) - 1);
    long pool = UncheckedMemory.base(m);
    long bitmap = pool + bitmapWord(home);
    return entry
        ^ prefetchLoad(pool, bitmap)
        ^ prefetchLoad(pool, pool + pair(home))
        ^ level2Lines(pool, home, entry, first)
        // the free word's fingerprints, the two lines of its eight cells, their bitmap word
        ^ prefetchLoad(pool, fpsAddress + level2Fps + freeAt)
        ^ prefetchLoad(pool, pool + pair(freeAt))
        ^ prefetchLoad(pool, pool + pair(freeAt + 4))
        ^ prefetchLoad(pool, pool + bitmapWord(freeAt));
  }

  /**
   * {@link #prefetchForPut} for a {@code remove}: the home entry, the group bitmap, the home cell,
   * the level-2 fingerprints from the overflow word on, and the cell of the home's last overflow
   * (a level-2 key is its home's last overflow more often than not, and a recent one usually
   * is). The last overflow's cell waits for the entry, as the fingerprint lines do.
   *
   * @param home the key's level-1 cell
   * @return a value derived from every load, for {@link Prefetch#keep}
   */
  long prefetchForRemove(MemorySegment m, long home) {
    long g = groupOf(home);
    int entry = homeEntry(home);
    int last = Math.min(entry >>> 16, groupSize());
    long first = level2First(g);
    long pool = UncheckedMemory.base(m);
    long bitmap = pool + bitmapWord(home);
    // where the entry names no last overflow, a line loaded anyway (the bitmap word's)
    long lastOverflow = last != 0 ? pool + pair(first + last - 1) : bitmap;
    return entry
        ^ prefetchLoad(pool, bitmap)
        ^ prefetchLoad(pool, pool + pair(home))
        ^ level2Lines(pool, home, entry, first)
        ^ prefetchLoad(pool, lastOverflow);
  }

  /**
   * The level-2 fingerprint lines a writer's search reads: from the home entry's overflow word to
   * the group's end ({@code first} and G are multiples of 64), or, when no record of the home
   * overflowed, the home entry's own line (loaded anyway), so that the loop loads a line on every
   * call and is compiled inline (docs/format/group.md, "Every load on every call").
   */
  private long level2Lines(long pool, long home, int entry, long first) {
    int overflowWord = entry >>> 8 & 0xFF;
    long groupFps = fpsAddress + level2Fps + first;
    long from = overflowWord != 0 ? groupFps + (8L * (overflowWord - 1) & ~63L) : fpsAddress + (4 * home & ~7L);
    int lines = overflowWord != 0 ? (int) ((groupFps + groupSize() - from) >>> 6) : 1;
    assert inTable(pool, from) && inTable(pool, from + 64L * (lines - 1)) : "level-2 fingerprint lines outside the table";
    return Prefetch.linesAt(from, lines);
  }

  /**
   * A load of {@link #prefetchForPut} or {@link #prefetchForRemove}, by address. With assertions on (the tests), the address
   * is checked to lie in this table: in its pool block's bitmaps and cells, or in its DRAM
   * fingerprints.
   */
  private long prefetchLoad(long pool, long address) {
    assert inTable(pool, address) : "a writer's load before its lock outside the table: " + address;
    return UncheckedMemory.getLong(address);
  }

  /** Whether the 8 bytes at {@code address} lie in this table's bitmaps and cells, or its fingerprints. */
  private boolean inTable(long pool, long address) {
    return address >= pool + bitmaps && address <= pool + cellsEnd - 8
        || address >= fpsAddress && address <= fpsAddress + fps.byteSize() - 8;
  }

  /** @return the value of an occupied cell */
  long value(MemorySegment m, long c) {
    return (long) LONG.get(m, pair(c) + CELL_VALUE);
  }

  /** @return the key of a cell */
  long key(MemorySegment m, long c) {
    return (long) LONG.get(m, pair(c));
  }

  /**
   * Algorithm 1 lines 4–9 on a free cell, under the group lock: the fingerprint and hints (DRAM),
   * the pair, then the bit.
   *
   * @param home the key's level-1 cell ({@code c} itself, or the home whose overflow this is)
   */
  void insert(MemorySegment m, Persistence p, long c, long home, long key, long value, int fp) {
    occupy(c, home, fp);
    long pair = pair(c);
    LONG.set(m, pair, key);
    LONG.set(m, pair + CELL_VALUE, value);
    // PERSIST(§3.4 Alg. 1 lines 4-5): the pair is durable before the bit that publishes it, so
    // a durable bit never names a torn or stale pair (invariant I1)
    p.persist(pair, CELL_BYTES);
    long w = bitmapWord(c);
    LONG.setRelease(m, w, (long) LONG.get(m, w) | 1L << c);
    // PERSIST(§3.4 Alg. 1 lines 6-7): the bit, one aligned 8-byte store, commits the insert; it
    // is durable before put returns (a completed insert survives any crash)
    p.persist(w, 8);
  }

  /**
   * Algorithm 3 on an occupied cell, under the group lock: the bit first, then the pair.
   */
  void delete(MemorySegment m, Persistence p, long c) {
    long w = bitmapWord(c);
    LONG.setRelease(m, w, (long) LONG.get(m, w) & ~(1L << c));
    // PERSIST(§3.4 Alg. 3 lines 4-5): the cleared bit commits the delete before remove returns
    // (a removed key never comes back); nothing else needs to be durable
    p.persist(w, 8);
    setFp(c, 0);
    if (c >= cells) {
      lowerFreeFrom(c);
    }
    // Alg. 3 lines 6-7 without their persist: the pair of a cell whose bit is 0 is never read, and
    // recovery (Alg. 4) clears whatever of it is still durable
    long pair = pair(c);
    LONG.set(m, pair, 0L);
    LONG.set(m, pair + CELL_VALUE, 0L);
  }

  /** A level-2 cell was freed: the group's free-word hint goes down to its word if it was above. */
  private void lowerFreeFrom(long c) {
    long g = groupOf(c - cells);
    int w = (int) ((c - level2First(g)) >>> 3);
    if (w < freeFrom(g)) {
      setFreeFrom(g, w);
    }
  }

  /**
   * An update of a present key, under the group lock: the value in place, one aligned 8-byte store
   * (an extension: the paper has no update).
   */
  void update(MemorySegment m, Persistence p, long c, long value) {
    long v = pair(c) + CELL_VALUE;
    LONG.setRelease(m, v, value);
    // PERSIST(update): the 8-byte value is failure-atomic; durable before put returns
    p.persist(v, 8);
  }

  // ------------------------------------------------------------------ locks

  /**
   * Takes group {@code g}'s lock unless this table has been replaced.
   *
   * @param owner the table whose {@code current} is checked while the lock is held by another
   * @return true if the lock is held by the caller, false if the table was replaced meanwhile
   */
  boolean lock(GroupTable owner, long g) {
    long word = lockWordAt(g);
    for (;;) {
      if (VersionLock.tryLockAt(word)) {
        Reference.reachabilityFence(this);
        return true;
      }
      if (owner.current != this) {
        return false;
      }
      Thread.onSpinWait();
    }
  }

  void unlock(long g) {
    VersionLock.unlockAt(lockWordAt(g));
    Reference.reachabilityFence(this);
  }

  /** @return the address of group {@code g}'s lock word: the lock methods above, a reader's snapshot */
  long lockWordAt(long g) {
    return locksAddress + lockOffset(g);
  }

  /** Takes every group lock in ascending order (expansion, shrink); writers hold at most one. */
  void lockAll() {
    for (long g = 0; g < groups; g++) {
      VersionLock.lockAt(lockWordAt(g));
    }
    Reference.reachabilityFence(this);
  }

  /** Releases every group lock (a shrink that found no room). */
  void unlockAll() {
    for (long g = groups - 1; g >= 0; g--) {
      VersionLock.unlockAt(lockWordAt(g));
    }
    Reference.reachabilityFence(this);
  }
}
