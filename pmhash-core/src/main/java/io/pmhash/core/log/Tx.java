package io.pmhash.core.log;

import static io.pmhash.core.log.LaneLayout.UNDO_CLEAR_BITS;
import static io.pmhash.core.log.LaneLayout.UNDO_ENTRY_HEADER;
import static io.pmhash.core.log.LaneLayout.UNDO_GENERATION;
import static io.pmhash.core.log.LaneLayout.UNDO_RANGE;
import static io.pmhash.core.log.LaneLayout.UNDO_SET_BITS;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Persistence;
import io.pmhash.core.internal.Words;
import io.pmhash.core.spi.PoolBackend;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A failure-atomic transaction in one lane's undo section: every range snapshotted, every block
 * allocated and every block freed in it takes effect all or nothing with respect to a crash and
 * to an abort.
 *
 * <h2>Persist order</h2>
 *
 * <ol>
 *   <li>{@link #snapshot}: an entry (target, length, checksum, old bytes) is written and persisted
 *       before {@code snapshot} returns, so the old bytes are durable before the caller's first
 *       store to the range ({@link #snapshot(long[], long[], int)}: several entries, one
 *       flush call over them, one drain). The checksum covers the lane's undo generation, the
 *       entry's position and its bytes: the log is the chain of entries from the start of the
 *       section whose checksums hold, so a torn entry ends the chain (its range was not yet
 *       modified) and an entry of an earlier transaction never validates.
 *   <li>{@link #alloc} and {@link #free} write an entry naming the block's owned bit (flushed, not
 *       yet drained) and change nothing else persistent; the bit itself changes at commit.
 *   <li>{@link #commit}: (a) a drain, if step 2 left entries undrained, so that every bit's undo
 *       entry is durable before the bit changes; (b) the owned bits of allocated blocks are set
 *       and those of freed blocks cleared, atomically per bit ({@code getAndBitwiseOr/And}), and
 *       flushed, with every snapshotted range and every allocated block (whole); (c) one drain:
 *       all of it durable while the log is still valid; (d) the commit point: one release store
 *       that increments the lane's undo generation, persisted; every entry is invalid from here.
 * </ol>
 *
 * A commit costs two or three drains plus one per snapshot call. Freed blocks are reused only after
 * a grace period ({@link TxAllocator#retire}), except those freed by {@link #freeWithoutGrace}
 * ({@link TxAllocator#reuseNow}).
 *
 * <h2>In a backend's transactions (the llpl pool: PMDK's undo log and allocator)</h2>
 *
 * When the pool's region has {@link PoolBackend.Region#transactions() transactions} and an
 * {@link PoolBackend.Region#allocation() allocator} of its own (a backend has both or neither:
 * {@link UndoLog}), the same calls run inside one of the backend's transactions ({@link
 * UndoLog#backendTransactions()}), and the backend's commit is the one commit point; nothing is
 * written to the lane:
 *
 * <ol>
 *   <li>{@link UndoLog#begin()}: the backend's transaction begins on the calling thread.
 *   <li>{@link #snapshot}: the range goes to the backend's log ({@link
 *       PoolBackend.Transactions#addRange}, durable before it returns); the lane's capacity does
 *       not bound snapshots.
 *   <li>{@link #alloc} and {@link #free}: the backend's allocator, inside the backend's
 *       transaction ({@link PoolBackend.Allocation#txAlloc}, {@link PoolBackend.Allocation#txFree}:
 *       {@code pmemobj_tx_xalloc}/{@code _xfree}).
 *   <li>{@link #commit}: (a) the allocated blocks flushed whole and drained (the backend persists
 *       them too); (b) the backend commits: it makes every snapshotted range, link and allocation
 *       durable together, then invalidates its log. That is the commit point: a crash before it
 *       rolls the ranges, the allocations and the frees back (the backend, when it reopens the
 *       region), so nothing leaks; a crash after it finds all of them.
 * </ol>
 *
 * <p>A rollback aborts the backend's transaction (it restores the ranges and undoes the
 * allocations and frees). Such a commit costs pmhash one drain when the transaction allocated
 * and none otherwise, plus what the backend's commit costs (its own flushes, which {@link
 * Persistence#stats()} does not count). The backend's transaction is the calling thread's: begin,
 * use and close a {@code Tx} on one thread.
 *
 * <h2>Rollback</h2>
 *
 * Closing without {@link #commit} (an exception, or a deliberate abort) and recovery at open
 * undo the entries in reverse order: ranges get their old bytes back, allocated blocks' bits are
 * cleared and freed blocks' bits set again, each with one atomic bit operation, so a rollback
 * never restores a whole bitmap word that other threads changed meanwhile. Then the ranges are
 * persisted and the generation is incremented (persisted). Rollback is idempotent.
 *
 * <h2>The caller's duties</h2>
 *
 * It holds exclusive ownership (its own locks) of every snapshotted range from the snapshot
 * until {@link #close()}; it modifies only snapshotted ranges and blocks it allocated in the
 * transaction; it never snapshots allocator metadata (use {@link #alloc} and {@link #free}); and
 * it does not start another lane operation (a redo step, a publish, a nested transaction) from
 * inside a transaction, which could wait for a lane forever in a pool with one lane. A {@code
 * Tx} is its lane's object, reused by the next transaction: do not use it after {@code close}.
 *
 * <p>A transaction whose entries do not fit in the undo section ({@link
 * UndoLog#capacityBytes()}) fails with {@link LaneOverflowException} and stays open, to be rolled
 * back by {@code close}.
 */
public final class Tx implements AutoCloseable {
  private static final int IDLE = 0;
  private static final int ACTIVE = 1;
  private static final int COMMITTED = 2;

  private final Lanes lanes;
  private final Lane lane;
  private final TxAllocator allocator;
  /** The backend's transactions, or null: snapshots in the lane, the generation store commits. */
  private final PoolBackend.Transactions backend;
  /** The backend's allocator, non-null exactly when {@link #backend} is: its {@link #alloc} and {@link #free}. */
  private final PoolBackend.Allocation backendAlloc;
  private final long undoBase;
  private final long[] entryPos;
  private final long[] rangeOff;
  private final long[] rangeLen;
  private final long[] allocBlock;
  private final long[] allocWord;
  private final long[] allocMask;
  private final long[] freeBlock;
  private final long[] freeWord;
  private final long[] freeMask;
  /** Whether each free waits for a grace period ({@link #free}) or not ({@link #freeWithoutGrace}). */
  private final boolean[] freeGrace;
  private int state = IDLE;
  private long generation;
  private int used;
  private int entries;
  private int ranges;
  private int allocs;
  private int frees;
  private boolean undrained;
  /** Transactions begun in this lane: written by the lane's holder only, read by {@link UndoLog#begun()}. */
  long begun;

  Tx(Lanes lanes, Lane lane, TxAllocator allocator, PoolBackend.Transactions backend, PoolBackend.Allocation backendAlloc) {
    this.lanes = lanes;
    this.lane = lane;
    this.allocator = allocator;
    this.backend = backend;
    this.backendAlloc = backendAlloc;
    this.undoBase = lane.offset + lanes.undoStart;
    int max = lanes.undoBytes / (UNDO_ENTRY_HEADER + 8) + 1;
    this.entryPos = new long[max];
    this.rangeOff = new long[2 * max];
    this.rangeLen = new long[2 * max];
    this.allocBlock = new long[max];
    this.allocWord = new long[max];
    this.allocMask = new long[max];
    this.freeBlock = new long[max];
    this.freeWord = new long[max];
    this.freeMask = new long[max];
    this.freeGrace = new boolean[max];
  }

  void start() {
    if (backend != null) {
      backend.begin(); // (backend 1)
    }
    begun++; // lane-exclusive: only this lane's holder writes it
    generation = Words.getAcquire(lanes.pool.memory(), lane.offset + UNDO_GENERATION);
    used = 0;
    entries = 0;
    ranges = 0;
    allocs = 0;
    frees = 0;
    undrained = false;
    state = ACTIVE;
  }

  /** @return the index of the lane this transaction runs in */
  public int laneIndex() {
    return lane.index;
  }

  /** @return bytes of the undo section this transaction has used */
  public int bytesUsed() {
    return used;
  }

  /**
   * Records the current bytes of a range, durably, before the caller modifies it. Overlapping
   * snapshots are allowed (the oldest bytes win at rollback).
   *
   * @param offset pool offset of the range (heap, or the header's root words)
   * @param length bytes, at least one
   * @throws LaneOverflowException if the entry does not fit in the lane; nothing was logged
   */
  public void snapshot(long offset, long length) {
    checkActive();
    if (backend != null) {
      snapshotInBackend(offset, length);
      return;
    }
    int from = used;
    writeSnapshot(offset, length);
    persistEntries(from);
  }

  /**
   * {@link #snapshot(long, long)} of several ranges with one drain: every entry is written and
   * flushed, then one drain makes them all durable before this returns. For a caller that knows
   * every range it will change before its first store (NVLH's split): n snapshots cost one drain
   * instead of n.
   *
   * @param offsets pool offsets of the ranges, in {@code [0, count)}
   * @param lengths their lengths in bytes, each at least one
   * @param count how many ranges
   * @throws LaneOverflowException if the entries do not fit in the lane; the transaction stays
   *     open, to be rolled back by {@code close} (the caller has changed none of the ranges yet)
   */
  public void snapshot(long[] offsets, long[] lengths, int count) {
    checkActive();
    if (backend != null) {
      for (int i = 0; i < count; i++) {
        snapshotInBackend(offsets[i], lengths[i]);
      }
      return;
    }
    int from = used;
    for (int i = 0; i < count; i++) {
      writeSnapshot(offsets[i], lengths[i]);
    }
    persistEntries(from);
  }

  /**
   * PERSIST(tx 1): the entries written from lane position {@code from} on, contiguous, flushed in
   * one call and drained: every range's old bytes are durable before the caller's first store.
   */
  private void persistEntries(int from) {
    lanes.persistence.flush(undoBase + from, used - from);
    lanes.persistence.drain();
    undrained = false;
  }

  private void snapshotInBackend(long offset, long length) {
    lanes.checkRegionRange(offset, length, "snapshot range"); // blocks are anywhere in the region
    // PERSIST(backend 2): the backend's log holds the old bytes durably when this returns.
    backend.addRange(offset, length);
  }

  /** A range's undo entry written, not flushed; the range added to the commit's flushes. */
  private void writeSnapshot(long offset, long length) {
    lanes.checkRange(offset, length, "snapshot range");
    long need = LaneLayout.undoEntryBytes(length);
    reserveSpace(need, "a snapshot of " + length + " bytes");
    MemorySegment m = lanes.memoryCovering(offset + length);
    long at = undoBase + used;
    MemorySegment.copy(m, offset, m, at + UNDO_ENTRY_HEADER, length);
    for (long i = UNDO_ENTRY_HEADER + length; i < need; i++) {
      m.set(ValueLayout.JAVA_BYTE, at + i, (byte) 0);
    }
    writeEntryHeader(m, at, offset, UNDO_RANGE, length);
    addRange(offset, length);
  }

  /**
   * Allocates a block that becomes owned only if the transaction commits. The caller fills it;
   * commit flushes it whole.
   *
   * @param size bytes needed
   * @return the block's pool offset
   * @throws io.pmhash.core.PoolFullException if the pool cannot grow; the transaction is
   *     unchanged
   * @throws LaneOverflowException if the entry does not fit in the lane; nothing changed
   */
  public long alloc(long size) {
    checkActive();
    if (backend != null) {
      return allocInBackend(size);
    }
    TxAllocator a = requireAllocator();
    long need = LaneLayout.undoEntryBytes(8);
    reserveSpace(need, "an allocation");
    long block = a.reserveForTx(size);
    long word = a.ownedWord(block);
    long mask = a.ownedMask(block);
    writeBitsEntry(UNDO_CLEAR_BITS, word, mask, need);
    allocBlock[allocs] = block;
    allocWord[allocs] = word;
    allocMask[allocs] = mask;
    allocs++;
    addRange(block, a.blockSize(block));
    return block;
  }

  /**
   * Frees an owned block when the transaction commits (then it is reused only after a grace
   * period). Until then the block stays owned and readable.
   *
   * @param block the block's offset
   * @throws IllegalArgumentException if it is not an owned block
   * @throws LaneOverflowException if the entry does not fit in the lane; nothing changed
   */
  public void free(long block) {
    free(block, true);
  }

  /**
   * {@link #free}, for a block no thread can read once the transaction commits: every reader
   * that can reach it holds a lock the caller holds until then (NVLH's chains). After the commit
   * the block is handed out again at once, without the grace period, and so without the epoch
   * advance (a membarrier system call) that ends one.
   *
   * @param block the block's offset
   * @throws IllegalArgumentException if it is not an owned block
   * @throws LaneOverflowException if the entry does not fit in the lane; nothing changed
   */
  public void freeWithoutGrace(long block) {
    free(block, false);
  }

  private void free(long block, boolean grace) {
    checkActive();
    if (backend != null) {
      freeInBackend(block); // PMDK's transactional free is without a grace period (docs/llpl.md)
      return;
    }
    TxAllocator a = requireAllocator();
    long need = LaneLayout.undoEntryBytes(8);
    reserveSpace(need, "a free");
    a.checkFreeable(block);
    long word = a.ownedWord(block);
    long mask = a.ownedMask(block);
    writeBitsEntry(UNDO_SET_BITS, word, mask, need);
    freeBlock[frees] = block;
    freeWord[frees] = word;
    freeMask[frees] = mask;
    freeGrace[frees] = grace;
    frees++;
  }

  /** {@link #alloc} by the backend's allocator, inside its transaction (backend 3). */
  private long allocInBackend(long size) {
    if (allocs == allocBlock.length) {
      throw tooMany("allocations");
    }
    long block = backendAlloc.txAlloc(size);
    allocBlock[allocs++] = block;
    addRange(block, size); // flushed at commit, with the backend's own persist of it
    return block;
  }

  /** {@link #free} by the backend's allocator, inside its transaction (backend 3). */
  private void freeInBackend(long block) {
    if (frees == freeBlock.length) {
      throw tooMany("frees");
    }
    for (int i = 0; i < frees; i++) {
      if (freeBlock[i] == block) {
        throw new IllegalArgumentException("block " + block + " is freed twice in one transaction");
      }
    }
    backendAlloc.txFree(block);
    freeBlock[frees++] = block;
  }

  private LaneOverflowException tooMany(String what) {
    return new LaneOverflowException("a transaction holds at most " + allocBlock.length + " " + what + " (one per"
        + " 32 bytes of the lane's undo section); split the transaction or create the pool with larger lanes:"
        + " PoolOptions.withGeometry(lanes, laneBytes, chunkBytes)");
  }

  private void writeBitsEntry(int kind, long word, long mask, long need) {
    MemorySegment m = lanes.pool.memory();
    long at = undoBase + used;
    Words.set(m, at + UNDO_ENTRY_HEADER, mask);
    writeEntryHeader(m, at, word, kind, 8);
    // PERSIST(tx 2): flushed now, drained before the bit changes (commit step a).
    lanes.persistence.flush(at, need);
    undrained = true;
  }

  private void writeEntryHeader(MemorySegment m, long at, long target, int kind, long length) {
    long meta = ((long) kind << 56) | length;
    Words.set(m, at, target);
    Words.set(m, at + 8, meta);
    Words.set(m, at + 16, checksum(m, lane.index, generation, used, at, target, meta, length));
    entryPos[entries++] = used;
    used += (int) LaneLayout.undoEntryBytes(length);
  }

  private static long checksum(MemorySegment m, int lane, long gen, long pos, long at, long target, long meta, long length) {
    long h = Words.mix(Words.mix(Words.mix(Words.SEED, lane), gen), pos);
    h = Words.mix(Words.mix(h, target), meta);
    long end = at + LaneLayout.undoEntryBytes(length);
    for (long w = at + UNDO_ENTRY_HEADER; w < end; w += 8) {
      h = Words.mix(h, Words.get(m, w));
    }
    long c = Words.finish(h);
    return c == 0 ? 1 : c;
  }

  private void reserveSpace(long need, String what) {
    if (used + need > lanes.undoBytes) {
      throw new LaneOverflowException(
          what + " needs " + need + " bytes of undo log but the transaction has used " + used
              + " of the lane's " + lanes.undoBytes + " (lanes of " + lanes.laneSize
              + " bytes); split the transaction or create the pool with larger lanes:"
              + " PoolOptions.withGeometry(lanes, laneBytes, chunkBytes)");
    }
  }

  private void addRange(long offset, long length) {
    rangeOff[ranges] = offset;
    rangeLen[ranges] = length;
    ranges++;
  }

  private TxAllocator requireAllocator() {
    if (allocator == null) {
      throw new IllegalStateException("this undo log has no allocator");
    }
    return allocator;
  }

  private void checkActive() {
    if (state != ACTIVE) {
      throw new IllegalStateException(state == COMMITTED
          ? "the transaction is committed: begin a new one"
          : "the transaction is closed: begin a new one with UndoLog.begin()");
    }
  }

  /** Makes every change of the transaction durable and invalidates its log (see the class comment). */
  public void commit() {
    checkActive();
    boolean done = false;
    try {
      commitChanges();
      done = true;
    } finally {
      if (!done) {
        lane.poisoned = true; // the log stays valid: the next open rolls it back
      }
    }
    state = COMMITTED;
    if (backend != null) {
      backendAlloc.txEnded(true, allocBlock, allocs, freeBlock, frees);
      return;
    }
    for (int i = 0; i < frees; i++) {
      if (freeGrace[i]) {
        allocator.retire(freeBlock[i]);
      } else {
        allocator.reuseNow(freeBlock[i]);
      }
    }
  }

  private void commitChanges() {
    if (backend != null) {
      commitInBackend();
      return;
    }
    Persistence p = lanes.persistence;
    if (entries == 0) {
      return;
    }
    if (undrained) {
      // PERSIST(tx 3a): every bit's undo entry is durable before the bit changes.
      p.drain();
    }
    changeBits(p);
    for (int i = 0; i < ranges; i++) {
      p.flush(rangeOff[i], rangeLen[i]);
    }
    // PERSIST(tx 3c): everything the transaction changed is durable while its log is valid.
    p.drain();
    long genWord = lane.offset + UNDO_GENERATION;
    Words.setRelease(lanes.pool.memory(), genWord, generation + 1);
    // PERSIST(tx 3d): the commit point; every entry is invalid from here.
    p.persist(genWord, 8);
  }

  /** The commit inside the backend's transaction (see the class comment, step 4). */
  private void commitInBackend() {
    if (ranges > 0) {
      // PERSIST(backend 4a): the blocks the backend allocated, flushed whole before its commit
      // (the backend persists them too); their allocation commits with the transaction.
      Persistence p = lanes.persistence;
      for (int i = 0; i < ranges; i++) {
        p.flush(rangeOff[i], rangeLen[i]);
      }
      p.drain();
    }
    // PERSIST(backend 4b): the commit point: the backend persists every range, link and
    // allocation, then invalidates its log.
    backend.commit();
  }

  /** Commit step b: the owned bits set and cleared, one atomic bit operation each, and flushed. */
  private void changeBits(Persistence p) {
    for (int i = 0; i < allocs; i++) {
      MemorySegment m = lanes.memoryCovering(allocWord[i] + 8);
      Words.getAndOr(m, allocWord[i], allocMask[i]);
      p.flush(allocWord[i], 8);
    }
    for (int i = 0; i < frees; i++) {
      MemorySegment m = lanes.memoryCovering(freeWord[i] + 8);
      Words.getAndAndNot(m, freeWord[i], freeMask[i]);
      p.flush(freeWord[i], 8);
    }
  }

  /** Rolls back if not committed, then gives the lane back. */
  @Override
  public void close() {
    if (state == IDLE) {
      return;
    }
    boolean active = state == ACTIVE;
    state = IDLE;
    if (active) {
      boolean done = false;
      try {
        if (backend != null) {
          backend.abort(); // the ranges, the allocations and the frees
        } else if (entries > 0) {
          rollback(lanes, lane, entryPos, entries, generation);
        }
        done = true;
      } finally {
        if (!done) {
          lane.poisoned = true;
        }
      }
      if (backend != null) {
        backendAlloc.txEnded(false, allocBlock, allocs, freeBlock, frees);
      } else {
        for (int i = 0; i < allocs; i++) {
          allocator.abandon(allocBlock[i]);
        }
      }
    }
    lanes.release(lane);
  }

  /** Undoes entries [0, n) in reverse, persists, then invalidates the log. */
  private static void rollback(Lanes lanes, Lane lane, long[] pos, int n, long generation) {
    Persistence p = lanes.persistence;
    MemorySegment m = lanes.pool.memory();
    long base = lane.offset + lanes.undoStart;
    for (int i = n - 1; i >= 0; i--) {
      long at = base + pos[i];
      long target = Words.get(m, at);
      long meta = Words.get(m, at + 8);
      int kind = (int) (meta >>> 56);
      long length = meta & 0xFFFF_FFFFL;
      m = lanes.memoryCovering(target + length);
      switch (kind) {
        case UNDO_RANGE -> MemorySegment.copy(m, at + UNDO_ENTRY_HEADER, m, target, length);
        case UNDO_CLEAR_BITS -> Words.getAndAndNot(m, target, Words.get(m, at + UNDO_ENTRY_HEADER));
        case UNDO_SET_BITS -> Words.getAndOr(m, target, Words.get(m, at + UNDO_ENTRY_HEADER));
        default -> throw new IllegalStateException("undo kind " + kind);
      }
      p.flush(target, length);
    }
    // PERSIST(rollback 1): the old state is durable before the log is invalidated.
    p.drain();
    long genWord = lane.offset + UNDO_GENERATION;
    Words.setRelease(m, genWord, generation + 1);
    // PERSIST(rollback 2): invalidated; a crash before this rolls back again (idempotent).
    p.persist(genWord, 8);
  }

  /**
   * Rolls back a lane's valid undo log, if any; with {@code apply} false only validates it.
   *
   * @return true if there was one
   */
  static boolean recoverLane(Lanes lanes, Lane lane, boolean apply) throws CorruptPoolException {
    MemorySegment m = lanes.pool.memory();
    long size = m.byteSize();
    long generation = Words.getAcquire(m, lane.offset + UNDO_GENERATION);
    long base = lane.offset + lanes.undoStart;
    long[] pos = new long[lanes.undoBytes / (UNDO_ENTRY_HEADER + 8) + 1];
    int n = 0;
    long used = 0;
    while (used + UNDO_ENTRY_HEADER + 8 <= lanes.undoBytes) {
      long at = base + used;
      long target = Words.get(m, at);
      long meta = Words.get(m, at + 8);
      int kind = (int) (meta >>> 56);
      long length = meta & 0xFFFF_FFFFL;
      boolean shape = (meta & 0x00FF_FFFF_0000_0000L) == 0
          && (kind == UNDO_RANGE ? length > 0 : (kind == UNDO_CLEAR_BITS || kind == UNDO_SET_BITS) && length == 8)
          && used + LaneLayout.undoEntryBytes(length) <= lanes.undoBytes;
      if (!shape || Words.get(m, at + 16) != checksum(m, lane.index, generation, used, at, target, meta, length)) {
        break;
      }
      if (!lanes.inLoggable(target, length, size) || (kind != UNDO_RANGE && (target & 7) != 0)) {
        throw lanes.corrupt(lane, "undo entry " + n + " names [" + target + ", +" + length + "), outside the heap and the header's root words");
      }
      pos[n++] = used;
      used += LaneLayout.undoEntryBytes(length);
    }
    if (n == 0) {
      return false;
    }
    if (apply) {
      rollback(lanes, lane, pos, n, generation);
    }
    return true;
  }
}
