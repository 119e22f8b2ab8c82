package io.pmhash.core.spi;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A pool backend other than the built-in FFM file: it hosts the bytes of a pmhash pool (header,
 * lanes, heap: the same layout, {@code docs/format/pool.md}) in memory that another library
 * manages, and {@link io.pmhash.core.Pool} does everything else (validation, persistence,
 * allocation, logs, recovery) exactly as for a file, through a {@link
 * java.lang.foreign.MemorySegment} over the region. Found through {@link java.util.ServiceLoader}
 * by {@link #name()}; the {@code pmhash-llpl} module provides {@code "llpl"}.
 *
 * <p>The region is the backend's whole mapping; the pmhash pool is the extent {@link
 * Region#poolOffset() [poolOffset, poolEnd)} inside it, with its header at {@code poolOffset}.
 * Every pmhash offset (header fields, lanes, heap, roots, links between blocks) is an offset in
 * the region, so memory the backend's own allocator hands out anywhere in its mapping has a valid
 * pmhash offset too.
 *
 * <p>A backend must not load its library, or print anything, before {@link #create} or {@link
 * #open} is called: the FFM default never touches it.
 */
public interface PoolBackend {
  /** @return the name {@link io.pmhash.core.PoolOptions#withBackend} takes, e.g. {@code "llpl"} */
  String name();

  /**
   * Creates the backend's file at {@code path} with a zero-filled pool extent ({@link
   * Region#poolOffset()} to {@link Region#poolEnd()}) of at least {@code size} bytes, 4096-byte
   * aligned, for a new pool, and at least {@code allocationRoom} bytes more for its own {@link
   * Region#allocation() allocator}, if it has one.
   *
   * @param path the file to create; does not exist
   * @param size the region size the pool needs
   * @param allocationRoom bytes the backend's allocator should be able to hand out beside the pool
   *     ({@link io.pmhash.core.PoolOptions#backendAllocation()})
   * @return the open region
   * @throws io.pmhash.core.BackendUnavailableException if the backend's library cannot load
   * @throws IOException if the file cannot be created; it is deleted again
   */
  Region create(Path path, long size, long allocationRoom) throws IOException;

  /**
   * Opens the region of an existing file the backend created.
   *
   * @param path the file
   * @return the open region
   * @throws io.pmhash.core.BackendUnavailableException if the backend's library cannot load
   * @throws io.pmhash.core.NotAPoolException if the file holds no region (an interrupted create)
   * @throws IOException if the backend refuses the file
   */
  Region open(Path path) throws IOException;

  /**
   * The memory a backend hosts a pool in: fixed in place and size while open. Offset 0 is the
   * region's first byte; the pool occupies {@code [poolOffset(), poolEnd())} of it, and the rest
   * belongs to the backend (its own metadata, and memory its allocator may hand out).
   */
  interface Region extends AutoCloseable {
    /** @return the address of the region's first byte, 4096-byte aligned */
    long address();

    /** @return the region's size in bytes: everything a pool offset may address */
    long size();

    /**
     * Where the pool's header is, found again by every open of the same file.
     *
     * @return the region offset of the pool's first byte (its header), 4096-byte aligned; 0 when
     *     the pool starts the region
     */
    default long poolOffset() {
      return 0;
    }

    /**
     * The end of the bytes reserved for the pool; the pool's heap never goes past it.
     *
     * @return the region offset just past the pool's extent, at most {@link #size()}
     */
    default long poolEnd() {
      return size();
    }

    /** @return how the region is held, for the pool's log line */
    String describe();

    /**
     * The backend's own durable transactions over this region, if it has them. When present, the
     * pool's {@link io.pmhash.core.log.UndoLog} sends every snapshot to them instead of a lane,
     * and their commit is the transaction's one commit point ({@link io.pmhash.core.log.Tx}); a
     * transaction's allocations and frees are then the backend's {@link #allocation()}, which it
     * must have too (a backend has both or neither). Asked once, when the pool opens.
     *
     * @return the transactions, or empty for pmhash's own undo log in the lanes
     */
    default Optional<Transactions> transactions() {
      return Optional.empty();
    }

    /**
     * The backend's own allocator for the schemes that take blocks through the {@link
     * io.pmhash.core.alloc.SchemeAllocator} seam (every scheme), if it has one. When present, {@link
     * io.pmhash.core.Pool#schemeAllocator()} is this, and a transaction's {@code alloc} and {@code
     * free} ({@link io.pmhash.core.log.Tx}) are its {@link Allocation#txAlloc}/{@link
     * Allocation#txFree} inside the backend's {@link #transactions() transaction}, which it then
     * must have. Asked once, when the pool opens.
     *
     * @return the allocator, or empty for pmhash's own allocator in the pool's heap
     */
    default Optional<Allocation> allocation() {
      return Optional.empty();
    }

    /**
     * Releases the region; its memory must no longer be touched.
     *
     * @throws IOException if the backend cannot close it
     */
    @Override
    void close() throws IOException;
  }

  /**
   * A backend's undo-log transactions, one at a time per thread, over the bytes of its {@link
   * Region}: every call concerns the calling thread's transaction. {@link io.pmhash.core.log.Tx}
   * is the only caller; it calls {@link #begin}, then {@link #addRange} before the first store to
   * each range, then {@link #commit} or {@link #abort}, all on one thread, and never nests them.
   * A crash before {@link #commit} returns must leave every added range with the bytes it had
   * when it was added, once the backend has reopened the region; a crash after it, the bytes
   * stored since.
   */
  interface Transactions {
    /**
     * Starts the calling thread's transaction.
     *
     * @throws IllegalStateException if the thread already runs one, or cannot run one (the
     *     message says why); nothing started
     */
    void begin();

    /**
     * Records, durably, the current bytes of a range of the region before the caller's first
     * store to it (overlaps allowed: the oldest bytes win).
     *
     * @param offset region offset of the range
     * @param length bytes, at least one
     * @throws IllegalStateException if the backend cannot log it (its log is full); the
     *     transaction stays open, to be {@link #abort aborted}
     */
    void addRange(long offset, long length);

    /**
     * Makes every added range's current bytes durable and invalidates the log: the commit point.
     * Ends the transaction.
     *
     * @throws IllegalStateException if the backend failed to commit; the transaction is ended
     *     and rolled back
     */
    void commit();

    /** Restores every added range's old bytes (durably) and ends the transaction. Idempotent. */
    void abort();

    /** @return what runs the transactions, for logs and tests, e.g. {@code "PMDK libpmemobj 1.12"} */
    String describe();
  }

  /**
   * A backend's allocator over its region, for the {@link io.pmhash.core.alloc.SchemeAllocator}
   * seam, plus allocation and free inside the calling thread's {@link Transactions transaction},
   * whose commit is then the one commit point for the bytes, the links and the allocation. Blocks
   * are anywhere in the region, outside the pool's heap.
   */
  interface Allocation extends io.pmhash.core.alloc.SchemeAllocator {
    /**
     * Allocates a block in the calling thread's transaction: owned if it commits, never owned
     * (nothing leaked) if it aborts or a crash comes first. Its bytes are not initialized.
     *
     * @param size bytes needed, at least 1
     * @return the block's region offset
     * @throws io.pmhash.core.PoolFullException if there is no room; the transaction stays open
     */
    long txAlloc(long size);

    /**
     * Frees an owned block in the calling thread's transaction: free if it commits, still owned
     * if it aborts or a crash comes first. The block stays readable until the commit.
     *
     * @param block an owned block's region offset
     * @throws IllegalArgumentException if it is not an owned block; nothing changed
     */
    void txFree(long block);

    /**
     * The calling thread's transaction ended: tells the allocator which of its {@link #txAlloc}s
     * and {@link #txFree}s took effect (all if it committed, none if it aborted).
     *
     * @param committed whether the transaction committed
     * @param allocated blocks allocated in it, in {@code [0, allocs)}
     * @param allocs how many
     * @param freed blocks freed in it, in {@code [0, frees)}
     * @param frees how many
     */
    void txEnded(boolean committed, long[] allocated, int allocs, long[] freed, int frees);

    /**
     * Where a {@link io.pmhash.core.alloc.SchemeAllocator.Step#deferFree retired} block waits
     * until no reader can still hold it; the pool sets its epochs' ({@link
     * io.pmhash.core.alloc.EpochDeferredFree}) when it opens, as for its own allocator.
     *
     * @param d the grace-period policy
     */
    void useDeferredFree(io.pmhash.core.alloc.DeferredFree d);

    /**
     * Frees every block that was retired and whose grace period a crash or a close cut short (no
     * reader exists yet), and loads what {@link #owned} needs. The pool calls it once per open,
     * after its lane recovery and before anything reads the pool.
     *
     * @throws io.pmhash.core.CorruptPoolException if the allocator's records are damaged
     */
    void recover() throws io.pmhash.core.CorruptPoolException;
  }
}
