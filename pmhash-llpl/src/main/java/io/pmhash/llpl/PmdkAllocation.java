package io.pmhash.llpl;

import io.pmhash.core.PoolFullException;
import io.pmhash.core.spi.PoolBackend;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * PMDK's allocator behind pmhash's allocator seam ({@link
 * io.pmhash.core.alloc.SchemeAllocator}) on an llpl pool: the blocks of NVLH and NVDH are PMDK
 * objects of type {@link #TYPE_NUM}, anywhere in the PMDK pool beside the pmhash pool's block,
 * addressed by their {@code PMEMoid.off} (a region offset).
 *
 * <ul>
 *   <li>{@link #txAlloc}/{@link #txFree} are {@code pmemobj_tx_xalloc}/{@code pmemobj_tx_xfree}
 *       in the calling thread's PMDK transaction ({@link PmdkTransactions}), the one that links
 *       or unlinks the block: PMDK's commit is the one commit point for the bytes, the link and
 *       the allocation. A crash or an abort before it rolls the allocation and the free back.
 *   <li>{@link #reserve} is {@code pmemobj_xreserve} (in memory only); {@link #publish}, {@link
 *       #publishUnlinked} and a {@link Step} are one {@code pmemobj_publish} of the reservations'
 *       actions, {@code pmemobj_set_value}s and {@code pmemobj_defer_free}s: PMDK's redo log
 *       applies them all or none. PMDK does not persist a reserved object's contents: the caller
 *       persists them before publishing (the seam's contract).
 *   <li>{@link #owned}, {@link #blockSize}, {@link #blocksOwned}: PMDK has no public query "is this
 *       offset an object" ({@code pmemobj_alloc_usable_size} of a non-object is undefined), so the
 *       first query builds an index of every object of type {@link #TYPE_NUM} by walking {@code
 *       pmemobj_first}/{@code pmemobj_next} (O(objects), once per open, after PMDK's recovery),
 *       and every commit of this allocator keeps it current. Each answer is then a hash lookup.
 *   <li>A free is immediate: PMDK may hand the block out again at once, so {@link
 *       #releaseRetired} has nothing to wait for. Only schemes whose readers hold the table's lock
 *       use this allocator.
 * </ul>
 */
final class PmdkAllocation implements PoolBackend.Allocation {
  /** The PMDK type number of pmhash's scheme blocks: ASCII "pmhash". */
  static final long TYPE_NUM = 0x706D_6861_7368L;
  /** libpmemobj/base.h: POBJ_FLAG_TX_NO_ABORT = 1 &lt;&lt; 4 (POBJ_XALLOC_NO_ABORT, POBJ_XFREE_NO_ABORT). */
  private static final long NO_ABORT = 1L << 4;

  private static final int RESERVED = 0;
  private static final int PENDING = 1;
  private static final int PUBLISHED = 2;
  private static final String[] STATES = {"reserved", "in a step", "published"};

  private final Path path;
  private final long pool;
  private final MemorySegment pop;
  /** offset → usable size of every object of {@link #TYPE_NUM}; null until the first query. */
  private Map<Long, Long> index;

  PmdkAllocation(Path path, long pool) {
    this.path = path;
    this.pool = pool;
    this.pop = MemorySegment.ofAddress(pool);
  }

  // ------------------------------------------------------------------ in a transaction

  @Override
  public long txAlloc(long size) {
    checkSize(size);
    PmdkTransactions.requireWork("allocate in");
    try (Arena a = Arena.ofConfined()) {
      MemorySegment oid = (MemorySegment) Pmemobj.TX_XALLOC.invokeExact((SegmentAllocator) a, size, TYPE_NUM, NO_ABORT);
      long off = off(oid);
      if (off == 0) {
        throw new PoolFullException(path + ": PMDK cannot allocate " + size + " bytes in its pool ("
            + PmdkTransactions.error(0) + "); the transaction stays open and rolls back when closed; create the"
            + " llpl pool larger (PoolOptions.withInitialSize)", null);
      }
      return off;
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw PmdkTransactions.unexpected("pmemobj_tx_xalloc", t);
    }
  }

  @Override
  public void txFree(long block) {
    PmdkTransactions.requireWork("free in");
    requireOwned(block);
    int r;
    try (Arena a = Arena.ofConfined()) {
      r = (int) Pmemobj.TX_XFREE.invokeExact(oidOf(a, block), NO_ABORT);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw PmdkTransactions.unexpected("pmemobj_tx_xfree", t);
    }
    if (r != 0) {
      throw new IllegalStateException("PMDK could not free the block at " + block + " (" + PmdkTransactions.error(r)
          + "); the transaction stays open and rolls back when closed");
    }
  }

  @Override
  public synchronized void txEnded(boolean committed, long[] allocated, int allocs, long[] freed, int frees) {
    if (!committed || index == null) {
      return; // an abort changed nothing; an index not built yet is built from PMDK's state
    }
    for (int i = 0; i < allocs; i++) {
      index.put(allocated[i], usableSize(allocated[i]));
    }
    for (int i = 0; i < frees; i++) {
      index.remove(freed[i]);
    }
  }

  // ------------------------------------------------------------------ reserve and publish

  @Override
  public Reserved reserve(long size) {
    checkSize(size);
    Arena arena = Arena.ofAuto();
    MemorySegment act = arena.allocate(Pmemobj.ACTION_BYTES, 8);
    long off;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment oid = (MemorySegment) Pmemobj.XRESERVE.invokeExact((SegmentAllocator) a, pop, act, size, TYPE_NUM, 0L);
      off = off(oid);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw PmdkTransactions.unexpected("pmemobj_xreserve", t);
    }
    if (off == 0) {
      throw new PoolFullException(path + ": PMDK cannot reserve " + size + " bytes in its pool ("
          + PmdkTransactions.error(0) + "); create the llpl pool larger (PoolOptions.withInitialSize)", null);
    }
    return new PmdkReserved(off, size, act, new AtomicInteger(RESERVED));
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

  /** Nothing waits: PMDK's free makes the block reusable when it commits. */
  @Override
  public void releaseRetired() {}

  // ------------------------------------------------------------------ validation

  @Override
  public synchronized boolean owned(long block) {
    return index().containsKey(block);
  }

  @Override
  public synchronized long blockSize(long block) {
    Long size = index().get(block);
    if (size == null) {
      throw new IllegalArgumentException("offset " + block + " is not a block PMDK allocated for pmhash in " + path);
    }
    return size;
  }

  @Override
  public synchronized long blocksOwned() {
    return index().size();
  }

  /**
   * Every object of {@link #TYPE_NUM} in the PMDK pool, by a fresh walk (for tests and tools: it
   * does not touch the index).
   *
   * @return offset → usable size
   */
  Map<Long, Long> walk() {
    Map<Long, Long> found = new HashMap<>();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment oid = (MemorySegment) Pmemobj.FIRST.invokeExact((SegmentAllocator) a, pop);
      while (off(oid) != 0) {
        long type = (long) Pmemobj.TYPE_NUM.invokeExact(oid);
        if (type == TYPE_NUM) {
          found.put(off(oid), (long) Pmemobj.USABLE_SIZE.invokeExact(oid));
        }
        oid = (MemorySegment) Pmemobj.NEXT.invokeExact((SegmentAllocator) a, oid);
      }
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw PmdkTransactions.unexpected("pmemobj_first/pmemobj_next", t);
    }
    return found;
  }

  private Map<Long, Long> index() {
    if (index == null) {
      index = walk();
    }
    return index;
  }

  private void requireOwned(long block) {
    if (!owned(block)) {
      throw new IllegalArgumentException("block " + block + " is not a block PMDK allocated for pmhash in " + path
          + ": it cannot be freed");
    }
  }

  private synchronized void published(List<PmdkReserved> rs, List<Long> freed) {
    if (index == null) {
      return;
    }
    for (PmdkReserved r : rs) {
      index.put(r.offset(), usableSize(r.offset()));
    }
    for (long b : freed) {
      index.remove(b);
    }
  }

  private long usableSize(long block) {
    try (Arena a = Arena.ofConfined()) {
      return (long) Pmemobj.USABLE_SIZE.invokeExact(oidOf(a, block));
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw PmdkTransactions.unexpected("pmemobj_alloc_usable_size", t);
    }
  }

  /** The {@code PMEMoid} of the object at a region offset ({@code pmemobj_oid}). */
  private MemorySegment oidOf(SegmentAllocator a, long block) throws Throwable {
    MemorySegment oid = (MemorySegment) Pmemobj.OID_OF.invokeExact(a, MemorySegment.ofAddress(pool + block));
    if (off(oid) != block) {
      throw new IllegalStateException("PMDK does not map region offset " + block + " to an object of " + path);
    }
    return oid;
  }

  private static long off(MemorySegment oid) {
    return oid.get(ValueLayout.JAVA_LONG, 8);
  }

  private static void checkSize(long size) {
    if (size <= 0) {
      throw new IllegalArgumentException("a block size must be positive, got " + size);
    }
  }

  /**
   * A PMDK reservation: the block, its {@code pobj_action}, and its state ({@link #RESERVED},
   * {@link #PENDING} in a step, {@link #PUBLISHED}).
   */
  private record PmdkReserved(long offset, long size, MemorySegment action, AtomicInteger state) implements Reserved {
    @Override
    public String toString() {
      return "PMDK reservation[" + offset + ", " + size + " bytes, " + STATES[state.get()] + "]";
    }
  }

  /** One {@code pmemobj_publish}: the actions gathered, applied all or none by PMDK's redo log. */
  private final class PmdkStep implements Step {
    private final Arena arena = Arena.ofConfined();
    private final List<MemorySegment> actions = new ArrayList<>();
    /** Actions of this step's own (set_value, defer_free), cancelled if it is not committed. */
    private final List<MemorySegment> own = new ArrayList<>();
    private final List<PmdkReserved> reservations = new ArrayList<>();
    private final List<Long> freed = new ArrayList<>();
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

    @Override
    public Step deferFree(long block) {
      checkOpen();
      requireOwned(block);
      if (freed.contains(block)) {
        throw new IllegalArgumentException("block " + block + " is freed twice in one step");
      }
      MemorySegment act = arena.allocate(Pmemobj.ACTION_BYTES, 8);
      try (Arena a = Arena.ofConfined()) {
        Pmemobj.DEFER_FREE.invokeExact(pop, oidOf(a, block), act);
      } catch (RuntimeException | Error e) {
        throw e;
      } catch (Throwable t) {
        throw PmdkTransactions.unexpected("pmemobj_defer_free", t);
      }
      own.add(act);
      actions.add(act);
      freed.add(block);
      return this;
    }

    @Override
    public void commit() {
      checkOpen();
      MemorySegment all = contiguous(actions);
      int r;
      try {
        // The commit point: PMDK's redo log makes every reservation owned, every store and free
        // durable together, or (a crash first) none of them.
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
      published(reservations, freed);
      reservations.clear();
      actions.clear();
      own.clear();
      freed.clear();
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
