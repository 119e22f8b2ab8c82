package io.pmhash.llpl;

import com.intel.pmem.llpl.Heap;
import com.intel.pmem.llpl.HeapException;
import com.intel.pmem.llpl.MemoryBlock;
import io.pmhash.core.BackendUnavailableException;
import io.pmhash.core.NotAPoolException;
import io.pmhash.core.PoolException;
import io.pmhash.core.spi.PoolBackend;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * One pmhash pool inside an llpl {@link Heap} (a PMDK libpmemobj pool file):
 *
 * <pre>
 *  PMDK pool file (pmemobj_create through llpl's Heap.createHeap) = the region, offset 0 at base
 *  +-------------------+-----------------------------------------------------------+------+
 *  | PMDK pool header, | one llpl MemoryBlock (handle H = the heap's llpl root)    | free |
 *  | lanes, heap meta  | +----+-----+--------------------------------------------+ |      |
 *  | (PMDK's own)      | |size| pad | pmhash pool: header | lanes | heap chunks  | |      |
 *  |                   | | 8 B| to  | (docs/format/pool.md, backend id 3)        | |      |
 *  |                   | |    | 4 KiB                                            | |      |
 *  +-------------------+-----------------------------------------------------------+------+
 *  base = PMEMobjpool*        poolOffset = align4096(H + 8)              poolEnd     size = file size
 * </pre>
 *
 * <p>The region is PMDK's whole mapping of the file: {@code base} is the {@code PMEMobjpool*}
 * llpl keeps as the heap's pool handle (PMDK maps a pool at that address), so a region offset is
 * a PMDK offset (the {@code off} of a {@code PMEMoid}, an llpl handle): an object PMDK allocates
 * anywhere in its pool has a valid pmhash offset. pmhash's own pool (header, lanes, heap) is the
 * extent {@code [poolOffset, poolEnd)} inside the one block linked from the llpl root: {@code
 * base + H + 8} (llpl's 8-byte size word precedes a block's payload) rounded up to a page, so open
 * finds the header through the root. {@link io.pmhash.core.Pool} wraps the mapping in a {@link
 * java.lang.foreign.MemorySegment}, and every scheme's hot path is the FFM backend's, byte for
 * byte. llpl 1.2.0 exposes neither the pool handle nor a block's address publicly, nor a way to
 * close a heap: both are read through reflection of its package-private {@code
 * AnyHeap.poolHandle()} and {@code AnyHeap.close()}, pinned to this llpl version.
 *
 * <p>PMDK allocates the pool block once, at create; pmhash's own allocator, lanes and redo
 * records run inside it as in a file. Transactions are PMDK's ({@link #transactions()}, {@link
 * PmdkTransactions}): their snapshots live in PMDK's undo log, which PMDK grows into the pool's
 * free space beside the block. NVLH's and NVDH's blocks are PMDK objects beside the block too
 * ({@link #allocation()}, {@link PmdkAllocation}, 64-byte aligned, frees of a step deferred past a
 * grace period through persistent retire lists); the other schemes' come from pmhash's allocator
 * inside it.
 */
final class LlplRegion implements PoolBackend.Region {
  /** llpl's size word before a (non-compact) block's payload. */
  private static final long BLOCK_METADATA = 8;
  private static final long PAGE = 4096;
  /** What PMDK needs beside the block: its pool header, lanes and heap metadata (measured ~ 4 MiB at 64 MiB). */
  private static final long PMDK_OVERHEAD = 16L << 20;
  private static final String INSTALL =
      "install PMDK's libraries (Debian/Ubuntu: apt-get install libpmemobj1 libpmempool1; "
          + "Fedora: dnf install libpmemobj libpmempool) and keep com.intel.pmem:llpl 1.2.0 beside pmhash-llpl";

  private static volatile Throwable loadFailure;

  private final Heap heap;
  private final Path path;
  private final long handle;
  private final long base;
  private final long size;
  private final long poolOffset;
  private final long poolEnd;
  private final PmdkTransactions transactions;
  private final PmdkAllocation allocation;
  private boolean closed;

  private LlplRegion(Heap heap, Path path, long handle, long base, long size, long poolOffset, long poolEnd,
      PmdkTransactions transactions) {
    this.heap = heap;
    this.path = path;
    this.handle = handle;
    this.base = base;
    this.size = size;
    this.poolOffset = poolOffset;
    this.poolEnd = poolEnd;
    this.transactions = transactions;
    this.allocation = new PmdkAllocation(path, base, size);
  }

  /**
   * Creates the PMDK pool, its one block, zeroes the block and links it as the llpl root. The
   * PMDK pool gets {@code allocationRoom} bytes more, plus a quarter of them for PMDK's object
   * headers and the rounding of its size classes, for the objects {@link PmdkAllocation} hands out.
   */
  static LlplRegion create(Path path, long size, long allocationRoom) throws IOException {
    requireLoaded(path);
    long blockSize = size + PAGE;
    Heap heap;
    try {
      heap = Heap.createHeap(path.toString(), blockSize + blockSize / 32 + PMDK_OVERHEAD + allocationRoom + allocationRoom / 4);
    } catch (HeapException | IllegalArgumentException e) {
      Files.deleteIfExists(path);
      throw new PoolException("cannot create the PMDK pool " + path + " through llpl (" + e.getMessage()
          + "): check that the directory is writable and has " + (blockSize >> 20) + " MiB free", e);
    } catch (LinkageError e) {
      throw unavailable(path, e);
    }
    boolean done = false;
    try {
      // One atomic PMDK allocation, not linked yet: a crash before setRoot below leaves a PMDK
      // pool whose llpl root is 0, which open refuses as an interrupted create.
      MemoryBlock block = heap.allocateMemoryBlock(blockSize, false);
      block.setMemory((byte) 0, 0, blockSize);
      // PERSIST: the zeros are durable before the root links the block (llpl's flush is
      // pmemobj_persist: clwb/sfence on persistent memory, msync elsewhere).
      block.flush(0, blockSize);
      heap.setRoot(block.handle());
      LlplRegion r = at(heap, path, block.handle(), blockSize);
      done = true;
      return r;
    } catch (HeapException e) {
      throw new PoolException("cannot allocate the " + blockSize + "-byte pool block in the PMDK pool " + path
          + " (" + e.getMessage() + "): choose a smaller PoolOptions.withInitialSize", e);
    } finally {
      if (!done) {
        close(heap);
        Files.deleteIfExists(path);
      }
    }
  }

  /** Opens the PMDK pool and finds the block through the llpl root. */
  static LlplRegion open(Path path) throws IOException {
    requireLoaded(path);
    Heap heap;
    try {
      heap = Heap.openHeap(path.toString());
    } catch (HeapException | IllegalArgumentException e) {
      throw new NotAPoolException(path + " is a PMDK pool file, but llpl cannot open it as a heap (" + e.getMessage()
          + "): it was written by another PMDK program, is damaged, or is open elsewhere", e);
    } catch (LinkageError e) {
      throw unavailable(path, e);
    }
    boolean done = false;
    try {
      long root = heap.getRoot();
      if (root == 0) {
        throw new NotAPoolException(path + " is an llpl heap without a pmhash pool in it: a create was interrupted"
            + " before it linked the pool block, or another program made it; delete it and create the pool again");
      }
      MemoryBlock block;
      try {
        block = heap.memoryBlockFromHandle(root);
      } catch (HeapException | IllegalArgumentException | IndexOutOfBoundsException e) {
        throw new NotAPoolException(path + ": the llpl root " + root + " is not a block of this heap: not a pmhash pool", e);
      }
      LlplRegion r = at(heap, path, root, block.size());
      done = true;
      return r;
    } finally {
      if (!done) {
        close(heap);
      }
    }
  }

  private static LlplRegion at(Heap heap, Path path, long handle, long blockSize) throws IOException {
    long base = poolBase(heap);
    if ((base & (PAGE - 1)) != 0) {
      throw new PoolException(path + ": PMDK mapped the pool at " + Long.toHexString(base) + ", not at a page boundary:"
          + " pmhash-llpl needs llpl 1.2.0-release over PMDK 1.x, which maps pools page-aligned");
    }
    // A single-file PMDK pool is mapped whole, from base, for the file's length.
    long mapped = Files.size(path);
    long payload = handle + BLOCK_METADATA;
    long aligned = (payload + PAGE - 1) & -PAGE;
    long usable = (blockSize - (aligned - payload)) & -PAGE;
    if (usable < PAGE || aligned + usable > mapped) {
      throw new NotAPoolException(path + ": the llpl root block [" + handle + ", +" + blockSize + ") does not hold a"
          + " pmhash pool inside the " + mapped + "-byte PMDK pool");
    }
    return new LlplRegion(heap, path, handle, base, mapped, aligned, aligned + usable, PmdkTransactions.bind(path, base));
  }

  /** @return the {@code PMEMobjpool*}: region offset 0 is PMDK offset 0 */
  @Override
  public long address() {
    return base;
  }

  /** @return the PMDK pool file's length; PMDK maps its whole pages (not a partial last page) */
  @Override
  public long size() {
    return size;
  }

  /** @return the page-aligned start of the llpl root block's payload, where pmhash's header is */
  @Override
  public long poolOffset() {
    return poolOffset;
  }

  /** @return the end of the llpl root block's payload, rounded down to a page */
  @Override
  public long poolEnd() {
    return poolEnd;
  }

  @Override
  public String describe() {
    return "PMDK pool through llpl 1.2.0, " + size + " bytes, pmhash's pool in the block at handle " + handle
        + " as [" + poolOffset + ", " + poolEnd + ")";
  }

  /** @return PMDK's undo-log transactions over this region ({@link PmdkTransactions}) */
  @Override
  public Optional<PoolBackend.Transactions> transactions() {
    return Optional.of(transactions);
  }

  /** @return PMDK's allocator for the blocks of the schemes on the seam ({@link PmdkAllocation}) */
  @Override
  public Optional<PoolBackend.Allocation> allocation() {
    return Optional.of(allocation);
  }

  /** @return PMDK's allocator over this region, for tests */
  PmdkAllocation pmdkAllocation() {
    return allocation;
  }

  @Override
  public synchronized void close() throws IOException {
    if (!closed) {
      closed = true;
      close(heap);
    }
  }

  @Override
  public String toString() {
    return "LlplRegion[" + path + ", " + describe() + "]";
  }

  // ---------------------------------------------------------------- llpl's hidden parts

  private static final class Hidden {
    static final Method POOL_HANDLE;
    static final Method CLOSE;

    static {
      try {
        Class<?> anyHeap = Class.forName("com.intel.pmem.llpl.AnyHeap");
        POOL_HANDLE = anyHeap.getDeclaredMethod("poolHandle");
        POOL_HANDLE.setAccessible(true);
        CLOSE = anyHeap.getDeclaredMethod("close");
        CLOSE.setAccessible(true);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }
  }

  /** The heap's {@code PMEMobjpool*}: the address PMDK mapped the pool file at. */
  private static long poolBase(Heap heap) throws PoolException {
    try {
      return (long) Hidden.POOL_HANDLE.invoke(heap);
    } catch (IllegalAccessException | InvocationTargetException | LinkageError e) {
      throw new BackendUnavailableException("cannot read the PMDK pool address from llpl (" + e + "): pmhash-llpl"
          + " needs llpl 1.2.0-release, whose package-private AnyHeap.poolHandle() it uses", e);
    }
  }

  private static void close(Heap heap) throws IOException {
    try {
      Hidden.CLOSE.invoke(heap);
    } catch (IllegalAccessException | InvocationTargetException | LinkageError e) {
      throw new IOException("cannot close the llpl heap (" + e + "): pmhash-llpl needs llpl 1.2.0-release", e);
    }
  }

  private static void requireLoaded(Path path) throws BackendUnavailableException {
    Throwable failed = loadFailure;
    if (failed == null) {
      try {
        // llpl loads libllpl.so (and with it libpmemobj.so.1, libpmempool.so.1) in AnyHeap's initializer.
        Class.forName("com.intel.pmem.llpl.AnyHeap", true, LlplRegion.class.getClassLoader());
        Hidden.POOL_HANDLE.getName();
        return;
      } catch (ClassNotFoundException | LinkageError e) {
        loadFailure = failed = e;
      }
    }
    throw unavailable(path, failed);
  }

  private static BackendUnavailableException unavailable(Path path, Throwable cause) {
    return new BackendUnavailableException(path + ": the llpl backend cannot load llpl or its native library ("
        + cause + "): " + INSTALL + "; see docs/llpl.md", cause);
  }
}
