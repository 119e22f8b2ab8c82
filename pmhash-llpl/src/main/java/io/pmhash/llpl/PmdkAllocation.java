package io.pmhash.llpl;

import io.pmhash.core.BackendUnavailableException;
import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.PoolFullException;
import io.pmhash.core.alloc.DeferredFree;
import io.pmhash.core.alloc.GraceQueue;
import io.pmhash.core.spi.PoolBackend;
import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.SequenceLayout;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * PMDK's allocator behind pmhash's allocator seam ({@link
 * io.pmhash.core.alloc.SchemeAllocator}) on an llpl pool: the schemes' blocks are PMDK objects
 * of type {@link #TYPE_NUM}, anywhere in the PMDK pool beside the pmhash pool's block.
 *
 * <ul>
 *   <li><b>64-byte alignment.</b> PMDK's objects are 16-byte aligned. Each object is asked for
 *       {@link #PAD} bytes more than the block, and the block is the object's first 64-byte
 *       aligned byte: {@code block = align64(PMEMoid.off)}, a function of the object alone, so
 *       the walk at open finds every block again. {@link #owned}, {@link #blockSize} and the
 *       links the schemes store name the block; PMDK's calls take the object ({@code start}).
 *   <li>{@link #txAlloc}/{@link #txFree} are {@code pmemobj_tx_xalloc}/{@code pmemobj_tx_xfree}
 *       in the calling thread's PMDK transaction ({@link PmdkTransactions}), the one that links
 *       or unlinks the block: PMDK's commit is the one commit point for the bytes, the link and
 *       the allocation. A crash or an abort before it rolls the allocation and the free back.
 *       Such a free is immediate (PMDK may hand the block out again at once): only NVLH, whose
 *       readers hold the table's lock, frees in a transaction. So another thread may be handed
 *       the block, and report it ({@link #txEnded}), before the freeing transaction reports its
 *       end: the index applies a free only if the block was not allocated again since.
 *   <li>{@link #reserve} is {@code pmemobj_xreserve} (in memory only); {@link #publish}, {@link
 *       #publishUnlinked} and a {@link Step} are one {@code pmemobj_publish} of the reservations'
 *       actions, {@code pmemobj_set_value}s and the retire records below: PMDK's redo log
 *       applies them all or none. PMDK does not persist a reserved object's contents: the caller
 *       persists them before publishing (the seam's contract).
 *   <li><b>A step's free waits for a grace period</b>, as on pmhash's allocator, because an
 *       optimistic reader may still read the block. In PMDK the free is the reuse, so it is
 *       deferred, and a persistent <em>retire record</em> keeps the deferred free across a
 *       crash: {@link Step#deferFree} stores the object's offset into a free slot of a retire
 *       list ({@code pmemobj_set_value}) in the same {@code pmemobj_publish} as the step's
 *       unlink; after the grace period ({@link #useDeferredFree}: the pool's epochs) one
 *       {@code pmemobj_publish} of {@code pmemobj_defer_free(object)} and {@code
 *       pmemobj_set_value(slot, 0)} frees it; and {@link #recover} (at open, before any reader)
 *       frees every object a slot still names. Retire lists are PMDK objects of type {@link
 *       #RETIRE_TYPE} ({@link #RETIRE_LIST}), found by the same walk; a full set of lists grows
 *       by one more ({@code pmemobj_xalloc}, zeroed, atomic) instead of waiting, since the
 *       retiring thread may itself hold an epoch.
 *   <li>{@link #owned}, {@link #blockSize}, {@link #blocksOwned}: PMDK has no public query "is this
 *       offset an object" ({@code pmemobj_alloc_usable_size} of a non-object is undefined), so
 *       {@link #recover} (or the first query on a pool just created) builds an index of every
 *       block of type {@link #TYPE_NUM} by walking {@code pmemobj_first}/{@code pmemobj_next}
 *       (O(objects), once per open, after PMDK's recovery), and every commit of this allocator
 *       keeps it current. A retired block leaves the index when its step commits. Each answer is
 *       a hash lookup.
 * </ul>
 */
final class PmdkAllocation implements PoolBackend.Allocation {
  /** The PMDK type number of pmhash's scheme blocks: ASCII "pmhash". */
  static final long TYPE_NUM = 0x706D_6861_7368L;
  /** The PMDK type number of retire lists: ASCII "pmhret". */
  static final long RETIRE_TYPE = 0x706D_6872_6574L;
  /** Every block's alignment: a cache line. */
  static final long ALIGNMENT = 64;
  /**
   * Bytes an object is asked for beyond its block: PMDK's objects are 16-byte aligned, so the
   * first 64-byte aligned byte is at most 48 bytes in.
   */
  static final long PAD = ALIGNMENT - 16;
  /** Slots of one retire list. */
  static final int RETIRE_SLOTS = 512;
  /**
   * A retire list: {@link #RETIRE_SLOTS} u64 slots, slot i at byte 8·i; 0 = empty, else the
   * {@code PMEMoid.off} of an object of type {@link #TYPE_NUM} retired and not yet freed.
   */
  static final SequenceLayout RETIRE_LIST =
      MemoryLayout.sequenceLayout(RETIRE_SLOTS, ValueLayout.JAVA_LONG.withName("retired"));
  /** libpmemobj/base.h: POBJ_FLAG_TX_NO_ABORT = 1 &lt;&lt; 4 (POBJ_XALLOC_NO_ABORT, POBJ_XFREE_NO_ABORT). */
  private static final long NO_ABORT = 1L << 4;
  /** libpmemobj/base.h: POBJ_FLAG_ZERO = 1 (POBJ_XALLOC_ZERO). */
  private static final long ZERO = 1;
  /** Retire records freed per {@code pmemobj_publish} at open. */
  private static final int RECOVER_BATCH = 32;

  private static final int RESERVED = 0;
  private static final int PENDING = 1;
  private static final int PUBLISHED = 2;
  private static final int CANCELLED = 3;
  private static final String[] STATES = {"reserved", "in a step", "published", "cancelled"};

  private final Path path;
  private final long pool;
  private final MemorySegment pop;
  /** PMDK's whole mapping, for reading the retire lists. */
  private final MemorySegment memory;
  /** block → its object; null until {@link #recover} or the first query. Guarded by this. */
  private BlockIndex index;
  /** Blocks allocated in a running transaction → their object's start. Guarded by this. */
  private final Map<Long, Long> inTx = new HashMap<>();
  /**
   * Blocks freed in a transaction whose end is not reported yet → the transaction's thread.
   * PMDK may hand such a block out again as soon as the free commits, before {@link #txEnded}
   * reports it; the new owner's report takes the entry out, and the free's late report then
   * leaves the index alone. Guarded by this.
   */
  private final Map<Long, Thread> freeing = new HashMap<>();
  /** Retired blocks waiting for their grace period → object and slot. Guarded by this. */
  private final Map<Long, Retired> retired = new HashMap<>();
  /** Region offsets of the empty retire slots no step holds. Guarded by this. */
  private long[] freeSlots = new long[RETIRE_SLOTS];
  private int freeSlotCount;
  private final GraceQueue graceQueue = new GraceQueue();
  private volatile DeferredFree deferred = graceQueue;
  private final DeferredFree.BlockReuse afterGrace = this::graceFree;

  @SuppressWarnings("restricted") // PMDK's mapping of the region, valid until the region closes
  PmdkAllocation(Path path, long pool, long size) {
    this.path = path;
    this.pool = pool;
    this.pop = MemorySegment.ofAddress(pool);
    this.memory = MemorySegment.ofAddress(pool).reinterpret(size);
  }

  // ------------------------------------------------------------------ in a transaction

  @Override
  public long txAlloc(long size) {
    checkSize(size);
    PmdkTransactions.requireWork("allocate in");
    long start;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment oid = (MemorySegment) Pmemobj.TX_XALLOC.invokeExact((SegmentAllocator) a, size + PAD, TYPE_NUM, NO_ABORT);
      start = off(oid);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw PmdkTransactions.unexpected("pmemobj_tx_xalloc", t);
    }
    if (start == 0) {
      throw full("allocate", size, 0, "the transaction stays open and rolls back when closed");
    }
    long block = alignedBlock(start, size);
    synchronized (this) {
      inTx.put(block, start);
    }
    return block;
  }

  @Override
  public void txFree(long block) {
    PmdkTransactions.requireWork("free in");
    long start = requireOwned(block);
    int r;
    try (Arena a = Arena.ofConfined()) {
      r = (int) Pmemobj.TX_XFREE.invokeExact(oidOf(a, start), NO_ABORT);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw PmdkTransactions.unexpected("pmemobj_tx_xfree", t);
    }
    if (r != 0) {
      throw new IllegalStateException("PMDK could not free the block at " + block + " (" + PmdkTransactions.error(r)
          + "); the transaction stays open and rolls back when closed");
    }
    synchronized (this) {
      freeing.put(block, Thread.currentThread());
    }
  }

  /**
   * Brings the index up to date with a transaction PMDK has ended. Reports of different threads
   * arrive in any order, not in the order of their commits: a free is applied only if no other
   * transaction has been handed the block since ({@link #freeing}). An abort changed nothing; an
   * index not built yet is built later from PMDK's state.
   */
  @Override
  public synchronized void txEnded(boolean committed, long[] allocated, int allocs, long[] freed, int frees) {
    Thread self = Thread.currentThread();
    for (int i = 0; i < frees; i++) {
      if (freeing.remove(freed[i], self) && committed && index != null) {
        index.remove(freed[i]);
      }
    }
    for (int i = 0; i < allocs; i++) {
      Long start = inTx.remove(allocated[i]);
      if (committed) {
        allocatedAgain(allocated[i]);
        if (index != null) {
          index.put(allocated[i], start, usableSize(allocated[i], start));
        }
      }
    }
  }

  /**
   * A block just allocated may be one a transaction freed and has not reported yet: that
   * report must not drop it (see {@link #freeing}).
   */
  private void allocatedAgain(long block) {
    freeing.remove(block);
  }

  // ------------------------------------------------------------------ reserve and publish

  @Override
  public Reserved reserve(long size) {
    checkSize(size);
    Arena arena = Arena.ofAuto();
    MemorySegment act = arena.allocate(Pmemobj.ACTION_BYTES, 8);
    long start;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment oid = (MemorySegment) Pmemobj.XRESERVE.invokeExact((SegmentAllocator) a, pop, act, size + PAD, TYPE_NUM, 0L);
      start = off(oid);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw PmdkTransactions.unexpected("pmemobj_xreserve", t);
    }
    if (start == 0) {
      throw full("reserve", size, 0, "nothing was reserved");
    }
    return new PmdkReserved(alignedBlock(start, size), start, size, act, new AtomicInteger(RESERVED));
  }

  /** {@code pmemobj_cancel} of the reservation's action: PMDK may hand the object out again at once. */
  @Override
  public void cancel(Reserved r) {
    if (!(r instanceof PmdkReserved p)) {
      throw new IllegalArgumentException(r + " is not a reservation of PMDK's allocator: cancel it through the"
          + " allocator that reserved it");
    }
    if (!p.state.compareAndSet(RESERVED, CANCELLED)) {
      throw new IllegalStateException(p + " cannot be cancelled: it is not (only) reserved");
    }
    try {
      Pmemobj.CANCEL.invokeExact(pop, p.action, 1L);
    } catch (Throwable t) {
      throw PmdkTransactions.unexpected("pmemobj_cancel", t);
    }
  }

  @Override
  public void publishUnlinked(Reserved[] rs) {
    try (Step s = begin()) {
      for (Reserved r : rs) {
        s.publish(r);
      }
      s.commit();
    }
  }

  @Override
  public void publish(Reserved r, long destination) {
    try (Step s = begin()) {
      s.publish(r, destination);
      s.commit();
    }
  }

  @Override
  public Step begin() {
    return new PmdkStep();
  }

  /**
   * Frees now the blocks retired to the default {@link GraceQueue} (none once {@link
   * #useDeferredFree} replaced it, as on pmhash's allocator's seam).
   */
  @Override
  public void releaseRetired() {
    graceQueue.releaseRetired();
  }

  @Override
  public void useDeferredFree(DeferredFree d) {
    deferred = Objects.requireNonNull(d, "deferred free");
  }

  /**
   * Frees every block a retire list still names (retired before the last close or crash, its
   * grace period never ended; no reader exists yet), in {@code pmemobj_publish}es of {@code
   * pmemobj_defer_free} and {@code pmemobj_set_value(slot, 0)}, and builds the index.
   *
   * @throws CorruptPoolException if a slot names no object of pmhash's type; nothing was freed
   */
  @Override
  public synchronized void recover() throws CorruptPoolException {
    load(true);
  }

  // ------------------------------------------------------------------ validation

  @Override
  public synchronized boolean owned(long block) {
    return index().contains(block);
  }

  @Override
  public synchronized long blockSize(long block) {
    long size = index().size(block);
    if (size < 0) {
      throw new IllegalArgumentException("offset " + block + " is not a block PMDK allocated for pmhash in " + path);
    }
    return size;
  }

  @Override
  public synchronized long blocksOwned() {
    return index().size();
  }

  /**
   * Every block of type {@link #TYPE_NUM} in the PMDK pool, retired or not, by a fresh walk (for
   * tests and tools: it does not touch the index).
   *
   * @return block → usable size
   */
  Map<Long, Long> walk() {
    Map<Long, Long> found = new HashMap<>();
    walkObjects(null).forEach((block, start, size) -> found.put(block, size));
    return found;
  }

  /**
   * The retire records PMDK holds, by a fresh walk of the retire lists (for tests).
   *
   * @return the objects' offsets ({@code PMEMoid.off}) the non-empty slots name
   */
  List<Long> retireRecords() {
    List<Long> lists = new ArrayList<>();
    walkObjects(lists);
    List<Long> records = new ArrayList<>();
    for (long list : lists) {
      for (int i = 0; i < RETIRE_SLOTS; i++) {
        long v = slot(list, i);
        if (v != 0) {
          records.add(v);
        }
      }
    }
    return records;
  }

  /** @return the start of every retire list, by a fresh walk (for tests) */
  List<Long> retireLists() {
    List<Long> lists = new ArrayList<>();
    walkObjects(lists);
    return lists;
  }

  /** @return PMDK's transactions of this pool, used directly to order commits and reports (for tests) */
  PmdkTransactions transactionsForTests() {
    try {
      return PmdkTransactions.bind(path, pool);
    } catch (BackendUnavailableException e) {
      throw new IllegalStateException(e);
    }
  }

  /** @return the object start of a block's object (for tests) */
  synchronized long objectOf(long block) {
    return requireOwned(block);
  }

  /**
   * Walks PMDK's heap: every object of {@link #TYPE_NUM} by block, and (if {@code lists} is
   * given) the start of every retire list.
   */
  private BlockIndex walkObjects(List<Long> lists) {
    BlockIndex found = new BlockIndex();
    try (Arena a = Arena.ofConfined()) {
      // two PMEMoid buffers, each recycled for every other call, so that the walk allocates
      // nothing per object (one call's result is the next call's argument)
      SegmentAllocator even = SegmentAllocator.prefixAllocator(a.allocate(Pmemobj.OID));
      SegmentAllocator odd = SegmentAllocator.prefixAllocator(a.allocate(Pmemobj.OID));
      boolean flip = false;
      MemorySegment oid = (MemorySegment) Pmemobj.FIRST.invokeExact(even, pop);
      while (off(oid) != 0) {
        long type = (long) Pmemobj.TYPE_NUM.invokeExact(oid);
        long start = off(oid);
        if (type == TYPE_NUM) {
          long usable = (long) Pmemobj.USABLE_SIZE.invokeExact(oid);
          long block = align(start);
          found.put(block, start, usable - (block - start));
        } else if (type == RETIRE_TYPE && lists != null) {
          lists.add(start);
        }
        flip = !flip;
        SegmentAllocator result = flip ? odd : even;
        oid = (MemorySegment) Pmemobj.NEXT.invokeExact(result, oid);
      }
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw PmdkTransactions.unexpected("pmemobj_first/pmemobj_next", t);
    }
    return found;
  }

  private BlockIndex index() {
    if (index == null) {
      try {
        load(false); // a pool just created: recover() runs at every open
      } catch (CorruptPoolException e) {
        throw new IllegalStateException(e.getMessage(), e); // not thrown without freeing
      }
    }
    return index;
  }

  /**
   * Builds the index and the empty-slot list from a walk. With {@code free}, every object a slot
   * names is freed first (see {@link #recover}); without, such objects are left out of the index
   * and their slots stay taken.
   */
  private void load(boolean free) throws CorruptPoolException {
    List<Long> lists = new ArrayList<>();
    BlockIndex objects = walkObjects(lists);
    Map<Long, Long> byStart = null; // built at the first record found: most opens find none
    List<Long> slots = new ArrayList<>();
    List<Long> starts = new ArrayList<>();
    freeSlotCount = 0;
    for (long list : lists) {
      for (int i = 0; i < RETIRE_SLOTS; i++) {
        long slot = slotAt(list, i);
        long start = slot(list, i);
        if (start == 0) {
          addFreeSlot(slot);
          continue;
        }
        if (byStart == null) {
          Map<Long, Long> byObject = new HashMap<>();
          objects.forEach((b, st, size) -> byObject.put(st, b));
          byStart = byObject;
        }
        Long block = byStart.get(start);
        if (block == null) {
          if (free) {
            throw new CorruptPoolException(path + ": retire list at " + list + " slot " + i + " names " + start
                + ", which is not an object PMDK allocated for pmhash; the pool is damaged: restore it from a copy");
          }
          continue;
        }
        objects.remove(block);
        slots.add(slot);
        starts.add(start);
      }
    }
    if (free) {
      for (int i = 0; i < slots.size(); i += RECOVER_BATCH) {
        int n = Math.min(slots.size(), i + RECOVER_BATCH) - i;
        freeRetired(starts.subList(i, i + n), slots.subList(i, i + n));
      }
      for (long slot : slots) {
        addFreeSlot(slot);
      }
    }
    index = objects;
  }

  /** @return the value of slot {@code i} of the retire list at {@code list} */
  private long slot(long list, int i) {
    return memory.get(ValueLayout.JAVA_LONG, slotAt(list, i));
  }

  /** @return the region offset of slot {@code i} of the retire list at {@code list} */
  private static long slotAt(long list, int i) {
    return list + RETIRE_LIST.byteOffset(MemoryLayout.PathElement.sequenceElement(i));
  }

  private void addFreeSlot(long slot) {
    if (freeSlotCount == freeSlots.length) {
      freeSlots = Arrays.copyOf(freeSlots, freeSlotCount * 2);
    }
    freeSlots[freeSlotCount++] = slot;
  }

  /** Takes an empty retire slot, growing the lists by one if none is left. */
  private synchronized long takeSlot() {
    index();
    if (freeSlotCount == 0) {
      long list = newRetireList();
      for (int i = RETIRE_SLOTS - 1; i >= 0; i--) {
        addFreeSlot(slotAt(list, i));
      }
    }
    return freeSlots[--freeSlotCount];
  }

  private synchronized void giveSlot(long slot) {
    addFreeSlot(slot);
  }

  /** One more retire list: {@code pmemobj_xalloc}, zeroed, atomic; found by its type at open. */
  private long newRetireList() {
    int r;
    long list;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment oid = a.allocate(Pmemobj.OID);
      r = (int) Pmemobj.XALLOC.invokeExact(pop, oid, RETIRE_LIST.byteSize(), RETIRE_TYPE, ZERO, MemorySegment.NULL,
          MemorySegment.NULL);
      list = off(oid);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw PmdkTransactions.unexpected("pmemobj_xalloc", t);
    }
    if (r != 0 || list == 0) {
      throw full("allocate a retire list of", RETIRE_LIST.byteSize(), r, "nothing was freed");
    }
    return list;
  }

  /** The grace period of a retired block ended: free its object and empty its slot, in one publish. */
  private void graceFree(long block) {
    Retired r;
    synchronized (this) {
      r = retired.remove(block);
    }
    if (r == null) {
      throw new IllegalStateException("block " + block + " of " + path + " was not retired: it cannot be freed");
    }
    freeRetired(List.of(r.start), List.of(r.slot));
    giveSlot(r.slot);
  }

  /** One {@code pmemobj_publish}: each object freed and its slot emptied, all or none. */
  private void freeRetired(List<Long> starts, List<Long> slots) {
    int n = starts.size();
    int r;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment acts = a.allocate(Pmemobj.ACTION_BYTES * 2 * n, 8);
      for (int i = 0; i < n; i++) {
        Pmemobj.DEFER_FREE.invokeExact(pop, oidOf(a, starts.get(i)), acts.asSlice(Pmemobj.ACTION_BYTES * 2 * i));
        Pmemobj.SET_VALUE.invokeExact(pop, acts.asSlice(Pmemobj.ACTION_BYTES * (2 * i + 1)),
            MemorySegment.ofAddress(pool + slots.get(i)), 0L);
      }
      // The commit point of the frees: PMDK's redo log frees the objects and empties their
      // slots together; a crash before leaves the records, which the next open frees.
      r = (int) Pmemobj.PUBLISH.invokeExact(pop, acts, (long) (2 * n));
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw PmdkTransactions.unexpected("pmemobj_publish", t);
    }
    if (r != 0) {
      throw new IllegalStateException(path + ": PMDK could not free " + n + " retired blocks ("
          + PmdkTransactions.error(r) + "); their retire records stay and the next open frees them");
    }
  }

  /** @return the object start of {@code block}, an owned block */
  private synchronized long requireOwned(long block) {
    long start = index().start(block);
    if (start < 0) {
      throw new IllegalArgumentException("block " + block + " is not a block PMDK allocated for pmhash in " + path
          + ": it cannot be freed");
    }
    return start;
  }

  private synchronized void published(List<PmdkReserved> rs, List<Long> freed, List<Long> slots) {
    BlockIndex idx = index();
    for (int i = 0; i < freed.size(); i++) {
      long block = freed.get(i);
      retired.put(block, new Retired(idx.start(block), slots.get(i)));
      idx.remove(block);
    }
    for (PmdkReserved r : rs) {
      allocatedAgain(r.offset());
      idx.put(r.offset(), r.start, usableSize(r.offset(), r.start));
    }
  }

  /** @return the usable size of a block just allocated, from its object's start */
  private long usableSize(long block, long start) {
    try (Arena a = Arena.ofConfined()) {
      return (long) Pmemobj.USABLE_SIZE.invokeExact(oidOf(a, start)) - (block - start);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw PmdkTransactions.unexpected("pmemobj_alloc_usable_size", t);
    }
  }

  /** The block in a new object: its first 64-byte aligned byte; checks that {@code size} bytes fit. */
  private long alignedBlock(long start, long size) {
    long block = align(start);
    if (block - start > PAD) {
      throw new IllegalStateException("PMDK returned an object at " + start + " that is not 16-byte aligned: a "
          + size + "-byte block aligned to " + ALIGNMENT + " bytes does not fit in it (this PMDK is not supported)");
    }
    return block;
  }

  private static long align(long start) {
    return (start + ALIGNMENT - 1) & -ALIGNMENT;
  }

  /** The {@code PMEMoid} of the object that starts at a region offset ({@code pmemobj_oid}). */
  private MemorySegment oidOf(SegmentAllocator a, long start) throws Throwable {
    MemorySegment oid = (MemorySegment) Pmemobj.OID_OF.invokeExact(a, MemorySegment.ofAddress(pool + start));
    if (off(oid) != start) {
      throw new IllegalStateException("PMDK does not map region offset " + start + " to an object of " + path);
    }
    return oid;
  }

  /**
   * The refusal of an allocation PMDK cannot fit: what was asked, what the table's blocks hold
   * (the index, and the blocks waiting for their grace period), and what to set. An llpl pool does
   * not grow; its room is fixed at create ({@code docs/llpl.md}, Room, says what a size reaches per
   * scheme).
   */
  private PoolFullException full(String what, long size, int err, String state) {
    long held;
    int objects;
    int waiting;
    synchronized (this) {
      BlockIndex idx = index();
      held = idx.totalSize();
      objects = idx.size();
      waiting = retired.size();
    }
    return new PoolFullException(path + ": PMDK cannot " + what + " " + size + " bytes in its pool (" + PmdkTransactions.error(err)
        + "); " + state + "; the table's blocks hold " + held + " bytes in " + objects + " PMDK objects and " + waiting
        + " more wait for their grace period. An llpl pool does not grow: create it with a larger"
        + " PoolOptions.withInitialSize (its room for the table's blocks at their peak, a structural change's old and"
        + " new blocks together; docs/llpl.md, Room)", null);
  }

  private static long off(MemorySegment oid) {
    return oid.get(ValueLayout.JAVA_LONG, 8);
  }

  private static void checkSize(long size) {
    if (size <= 0) {
      throw new IllegalArgumentException("a block size must be positive, got " + size);
    }
  }


  /** A retired block's object and the retire slot that names it. */
  private record Retired(long start, long slot) {}

  /**
   * A PMDK reservation: the block, its object's start, its {@code pobj_action}, and its state
   * ({@link #RESERVED}, {@link #PENDING} in a step, {@link #PUBLISHED}).
   */
  private record PmdkReserved(long offset, long start, long size, MemorySegment action, AtomicInteger state)
      implements Reserved {
    @Override
    public String toString() {
      return "PMDK reservation[" + offset + ", " + size + " bytes, " + STATES[state.get()] + "]";
    }
  }

  /** One {@code pmemobj_publish}: the actions gathered, applied all or none by PMDK's redo log. */
  private final class PmdkStep implements Step {
    private final Arena arena = Arena.ofConfined();
    private final List<MemorySegment> actions = new ArrayList<>();
    /** Actions of this step's own (set_value), cancelled if it is not committed. */
    private final List<MemorySegment> own = new ArrayList<>();
    private final List<PmdkReserved> reservations = new ArrayList<>();
    private final List<Long> freed = new ArrayList<>();
    /** The retire slots of {@link #freed}, taken by this step; given back if it does not commit. */
    private final List<Long> slots = new ArrayList<>();
    private boolean open = true;

    @Override
    public Step publish(Reserved r, long destination) {
      publish(r);
      return set(destination, r.offset());
    }

    @Override
    public Step publish(Reserved r) {
      checkOpen();
      if (!(r instanceof PmdkReserved p)) {
        throw new IllegalArgumentException(r + " is not a reservation of PMDK's allocator: publish it through the"
            + " allocator that reserved it");
      }
      if (!p.state.compareAndSet(RESERVED, PENDING)) {
        throw new IllegalStateException(p + " cannot be published: it is not reserved any more");
      }
      reservations.add(p);
      actions.add(p.action);
      return this;
    }

    @Override
    public Step set(long offset, long value) {
      checkOpen();
      if ((offset & 7) != 0 || offset <= 0) {
        throw new IllegalArgumentException("offset " + offset + " is not an aligned word of the region");
      }
      MemorySegment act = arena.allocate(Pmemobj.ACTION_BYTES, 8);
      try {
        Pmemobj.SET_VALUE.invokeExact(pop, act, MemorySegment.ofAddress(pool + offset), value);
      } catch (Throwable t) {
        throw PmdkTransactions.unexpected("pmemobj_set_value", t);
      }
      own.add(act);
      actions.add(act);
      return this;
    }

    /**
     * Retires the block: its object's offset goes into an empty retire slot in this step's
     * publish, and once the step commits the block waits for its grace period ({@code
     * graceFree}).
     */
    @Override
    public Step deferFree(long block) {
      checkOpen();
      long start = requireOwned(block);
      if (freed.contains(block)) {
        throw new IllegalArgumentException("block " + block + " is freed twice in one step");
      }
      long slot = takeSlot();
      slots.add(slot);
      freed.add(block);
      set(slot, start);
      return this;
    }

    @Override
    public void commit() {
      checkOpen();
      MemorySegment all = contiguous(actions);
      int r;
      try {
        // The commit point: PMDK's redo log makes every reservation owned, every store (links
        // and retire records) durable together, or (a crash first) none of them.
        r = (int) Pmemobj.PUBLISH.invokeExact(pop, all, (long) actions.size());
      } catch (Throwable t) {
        throw PmdkTransactions.unexpected("pmemobj_publish", t);
      }
      if (r != 0) {
        throw new IllegalStateException("PMDK could not publish " + actions.size() + " actions ("
            + PmdkTransactions.error(r) + ")");
      }
      for (PmdkReserved p : reservations) {
        p.state.set(PUBLISHED);
      }
      published(reservations, freed, slots);
      DeferredFree d = deferred;
      for (long block : freed) {
        d.retire(block, afterGrace); // not under this allocator's lock: a reclaim may free at once
      }
      reservations.clear();
      actions.clear();
      own.clear();
      freed.clear();
      slots.clear();
    }

    @Override
    public void close() {
      if (!open) {
        return;
      }
      open = false;
      try {
        if (!own.isEmpty()) {
          Pmemobj.CANCEL.invokeExact(pop, contiguous(own), (long) own.size());
        }
      } catch (Throwable t) {
        throw PmdkTransactions.unexpected("pmemobj_cancel", t);
      } finally {
        for (PmdkReserved p : reservations) {
          p.state.compareAndSet(PENDING, RESERVED); // still reserved: publish it later
        }
        for (long slot : slots) {
          giveSlot(slot); // never written: the step did not commit
        }
        arena.close();
      }
    }

    private MemorySegment contiguous(List<MemorySegment> acts) {
      MemorySegment all = arena.allocate(Pmemobj.ACTION_BYTES * Math.max(1, acts.size()), 8);
      for (int i = 0; i < acts.size(); i++) {
        MemorySegment.copy(acts.get(i), 0, all, i * Pmemobj.ACTION_BYTES, Pmemobj.ACTION_BYTES);
      }
      return all;
    }

    private void checkOpen() {
      if (!open) {
        throw new IllegalStateException("this allocation step is closed: take a new one from begin()");
      }
    }
  }
}
