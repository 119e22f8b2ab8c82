package io.pmhash.core.alloc;

import static io.pmhash.core.alloc.HeapLayout.CHUNK_HEADER_BYTES;
import static io.pmhash.core.alloc.HeapLayout.KIND_RUN;
import static io.pmhash.core.alloc.HeapLayout.KIND_SPAN;
import static io.pmhash.core.alloc.HeapLayout.SPAN_OWNED;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolFullException;
import io.pmhash.core.internal.Words;
import io.pmhash.core.log.Lanes;
import io.pmhash.core.log.Redo;
import io.pmhash.core.log.TxAllocator;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The pool's allocator: PMDK's reserve/publish model over a heap of chunks (layout: {@link
 * HeapLayout}, {@code docs/allocator.md}).
 *
 * <ul>
 *   <li>{@link #reserve} hands out a block that is not yet owned: in-memory bookkeeping only, so a
 *       crash before the publish leaks nothing;
 *   <li>{@link #publish(Reservation, long)} makes it owned and stores its offset into a
 *       destination word, atomically with respect to a crash (one lane redo step: an OR of the
 *       block's owned bit and a SET of the destination); {@link #begin()} builds a larger step
 *       (several publishes, extra SETs, frees);
 *   <li>{@link #cancel} gives a reservation back;
 *   <li>{@link #free} (or {@link Publication#deferFree} inside a step) makes a block free
 *       persistently at once and reusable after a grace period ({@link DeferredFree}).
 * </ul>
 *
 * <h2>Blocks</h2>
 *
 * Sizes up to {@link #maxRunBlockSize()} (C / 8, 32 KiB with the default 256 KiB chunk) come
 * from size classes: 16, 32, 48 and 64 bytes, then multiples of 64 spaced at most a quarter
 * (from 1 KiB an eighth) of a power of two apart; each class is served from runs, chunks holding
 * blocks of one size with a persistent bitmap (bit = owned). Blocks of 64 bytes and more are
 * 64-byte aligned, smaller ones 16-byte aligned. Larger sizes are huge blocks: a span of whole
 * chunks, the block starting 64 bytes into the first. Owned/free state lives only in run bitmaps
 * and span headers, so every publish and free is a single-bit action.
 *
 * <h2>Recovery and its cost</h2>
 *
 * Opening a pool replays the lanes only: O(lanes), independent of the heap's size. The
 * in-memory free-space index is then rebuilt lazily, chunk by chunk, as allocation needs space:
 * the first allocations after open read chunk headers (one word per run or span, never the
 * blocks) and the bitmaps of the runs they load, until they find room; a free of a block in a
 * chunk not yet loaded loads the chunks up to it. Over the life of an open pool each chunk is
 * loaded once. A chunk header that is neither a run of a size class nor a span inside the high
 * water is damage: whichever call loads that chunk ({@link #reserve}, {@link #owned}, {@link
 * #free}, ...) throws an {@link UncheckedIOException} wrapping a {@link CorruptPoolException}.
 *
 * <h2>Concurrency</h2>
 *
 * Thread-safe. Each size class has a striped set of current runs (threads pick a stripe by
 * thread id, so they rarely share a lock); a run's bitmap copy has its own lock; formatting and
 * loading chunks and huge blocks take one heap lock, once per chunk. Publishing takes a lane,
 * never an allocator lock. A run stays a run of its block size once formatted; the chunks of
 * huge blocks are reused for anything, and adjacent free spans are merged.
 */
public final class Allocator implements TxAllocator {
  private static final int MIN_BLOCK = 16;

  private final Pool pool;
  private final Lanes lanes;
  private final Persistence persistence;
  private final long heap;
  private final long chunkSize;
  private final int chunkShift;
  private final long[] classSizes;
  private final int[] classBlocks;
  private final ClassState[] classes;
  private final int stripeMask;
  private final long maxRun;
  private final Publication[] publications;
  private final DeferredFree.BlockReuse reuser = this::reuse;
  private volatile DeferredFree deferred;
  private final GraceQueue graceQueue = new GraceQueue();

  private final Object heapLock = new Object();
  // guarded by heapLock; published to lock-free readers through the volatile fields
  private long highWater = -1;
  private volatile int scanned;
  private volatile Run[] runs = new Run[64];
  private volatile int[] spanLength = new int[64];
  private final AllocatorSeam seam;
  private final TreeMap<Integer, Integer> freeSpans = new TreeMap<>();

  private static final class ClassState {
    final ConcurrentLinkedQueue<Run> available = new ConcurrentLinkedQueue<>();
    final Stripe[] stripes;

    ClassState(int n) {
      stripes = new Stripe[n];
      for (int i = 0; i < n; i++) {
        stripes[i] = new Stripe();
      }
    }
  }

  private static final class Stripe {
    Run current;
  }

  /**
   * Binds the allocator to a pool; the pool does this when it opens ({@link Pool#allocator()}).
   *
   * @param pool the pool
   * @param lanes its lanes
   */
  public Allocator(Pool pool, Lanes lanes) {
    this.seam = new AllocatorSeam(this);
    this.pool = pool;
    this.lanes = lanes;
    this.persistence = pool.persistence();
    this.heap = pool.heapOffset();
    this.chunkSize = pool.chunkSize();
    this.chunkShift = Long.numberOfTrailingZeros(chunkSize);
    this.classSizes = sizeClasses(chunkSize);
    this.maxRun = classSizes[classSizes.length - 1];
    this.classBlocks = new int[classSizes.length];
    int stripes = Integer.highestOneBit(Math.min(16, Math.max(1, Runtime.getRuntime().availableProcessors())) * 2 - 1);
    this.stripeMask = stripes - 1;
    this.classes = new ClassState[classSizes.length];
    for (int i = 0; i < classSizes.length; i++) {
      classBlocks[i] = HeapLayout.runBlocks(chunkSize, classSizes[i]);
      classes[i] = new ClassState(stripes);
    }
    this.publications = new Publication[lanes.count()];
    for (int i = 0; i < publications.length; i++) {
      publications[i] = new Publication(this, lanes.redoCapacity());
    }
    this.deferred = graceQueue;
  }

  static long[] sizeClasses(long chunkSize) {
    long limit = chunkSize / 8;
    List<Long> sizes = new ArrayList<>(List.of(16L, 32L, 48L, 64L, 128L, 192L, 256L));
    long s = 256;
    while (true) {
      long p = Long.highestOneBit(s);
      s += p >= 1024 ? p / 8 : p / 4;
      if (s > limit) {
        break;
      }
      sizes.add(s);
    }
    long[] out = new long[sizes.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = sizes.get(i);
    }
    return out;
  }

  // ---------------------------------------------------------------- public API

  /** @return the largest block size served from runs; larger blocks are huge (whole chunks) */
  public long maxRunBlockSize() {
    return maxRun;
  }

  /** @return the block sizes of the size classes, ascending */
  public long[] sizeClasses() {
    return classSizes.clone();
  }

  /**
   * Hands out a block of at least {@code size} bytes that is not yet owned. Nothing persistent
   * changes (except, when the heap needs a new chunk, that chunk's header and the high water).
   *
   * @param size bytes needed, at least 1
   * @return the reservation
   * @throws PoolFullException if the pool cannot grow to hold it; nothing changed
   */
  public Reservation reserve(long size) {
    if (size <= 0) {
      throw new IllegalArgumentException("a block size must be positive, got " + size);
    }
    if (size > maxRun) {
      int first = reserveSpan(size);
      long base = chunkBase(first);
      return new Reservation(this, base + CHUNK_HEADER_BYTES, ((long) spanLength[first] << chunkShift) - CHUNK_HEADER_BYTES, base, SPAN_OWNED);
    }
    int cls = classOf(size);
    ClassState cs = classes[cls];
    Stripe s = cs.stripes[(int) Thread.currentThread().threadId() & stripeMask];
    synchronized (s) {
      for (;;) {
        Run r = s.current;
        if (r != null) {
          int idx = r.take();
          if (idx >= 0) {
            return new Reservation(this, r.blockOffset(idx), r.blockSize, r.bitmapWord(idx), 1L << idx);
          }
          s.current = null;
        }
        r = cs.available.poll();
        if (r == null) {
          r = refill(cls);
        }
        s.current = r;
      }
    }
  }

  /**
   * Gives back a reservation that was not published: the block is reusable at once.
   *
   * @param r the reservation
   */
  public void cancel(Reservation r) {
    Objects.requireNonNull(r, "reservation");
    if (r.allocator != this) {
      throw new IllegalArgumentException(r + " is not from this pool's allocator");
    }
    if (r.state != Reservation.RESERVED || r.pending) {
      throw new IllegalStateException(r + " cannot be cancelled: " + (r.pending ? "it is in a publication step" : "it is not reserved any more"));
    }
    r.state = Reservation.CANCELLED;
    reuse(r.offset);
  }

  /**
   * Makes every reservation of {@code rs} owned, without destinations, in as many redo steps as a
   * lane holds: each step is atomic, the whole is not. Only for blocks nothing reaches yet (a new
   * table's segments before the step that links its root): a crash between steps leaves owned
   * but unreachable blocks, which is why the caller links them last. Flush their contents first.
   *
   * @param rs the reservations, none published yet
   */
  public void publishUnlinked(Reservation[] rs) {
    int batch = Math.max(1, lanes.redoCapacity() - 4);
    for (int i = 0; i < rs.length; i += batch) {
      try (Publication pub = begin()) {
        for (int j = i; j < Math.min(rs.length, i + batch); j++) {
          pub.publish(rs[j]);
        }
        pub.commit();
      }
    }
  }

  /**
   * Publishes a reservation into a destination word, atomically with respect to a crash (four
   * drains; flush the block's contents before: see {@link Redo}).
   *
   * @param r the reservation
   * @param destination aligned pool offset of the word that will hold {@code r.offset()}; the
   *     caller owns it exclusively until this returns
   */
  public void publish(Reservation r, long destination) {
    try (Publication p = begin()) {
      p.publish(r, destination);
      p.commit();
    }
  }

  /**
   * Frees an owned block at once (persistently) in its own atomic step; it is reused after a grace
   * period.
   *
   * @param block the block's offset
   */
  public void free(long block) {
    try (Publication p = begin()) {
      p.deferFree(block);
      p.commit();
    }
  }

  /**
   * Takes a lane for an atomic step of several publishes, SETs and frees.
   *
   * @return the step (the lane's own object)
   */
  public Publication begin() {
    Redo redo = lanes.beginRedo();
    Publication p = publications[redo.laneIndex()];
    p.start(redo);
    return p;
  }

  /**
   * This allocator behind the {@link SchemeAllocator} seam (what every scheme uses); the same
   * object every time.
   *
   * @return the seam, whose every call is this allocator's
   */
  public SchemeAllocator schemeAllocator() {
    return seam;
  }

  /** @return the default deferred-free queue (in use unless {@link #useDeferredFree} replaced it) */
  public GraceQueue graceQueue() {
    return graceQueue;
  }

  /**
   * Replaces the grace-period policy, e.g. with the epoch reclaimer. Set it before the first free.
   *
   * @param d the policy
   */
  public void useDeferredFree(DeferredFree d) {
    deferred = Objects.requireNonNull(d, "deferred free");
  }

  /**
   * Whether a block is owned persistently.
   *
   * @param block a pool offset
   * @return true if a block starts there and is owned
   */
  public boolean owned(long block) {
    if (!isBlockStart(block)) {
      return false;
    }
    long word = ownedWord(block);
    return (Words.getAcquire(memoryFor(word), word) & ownedMask(block)) != 0;
  }

  /**
   * Walks every owned block (persistent state; for tests and tools, not atomic with concurrent
   * publishes). Loads every chunk.
   *
   * @param visitor receives each block
   */
  public void forEachOwned(BlockVisitor visitor) {
    synchronized (heapLock) {
      scanUpTo(highWater() - 1);
      MemorySegment m = pool.memory();
      for (int c = 0; c < highWater; ) {
        long base = chunkBase(c);
        long h = Words.getAcquire(m, base);
        if (HeapLayout.kind(h) == KIND_RUN) {
          Run r = runs[c];
          for (int i = 0; i < r.blocks; i++) {
            long w = r.bitmapWord(i);
            if ((Words.getAcquire(m, w) & (1L << i)) != 0) {
              visitor.visit(r.blockOffset(i), r.blockSize);
            }
          }
          c++;
        } else {
          int n = (int) HeapLayout.field(h);
          if ((h & SPAN_OWNED) != 0) {
            visitor.visit(base + CHUNK_HEADER_BYTES, ((long) n << chunkShift) - CHUNK_HEADER_BYTES);
          }
          c += n;
        }
      }
    }
  }

  /**
   * What the heap holds persistently (a walk of every chunk header and bitmap; loads every chunk).
   *
   * @return the statistics
   */
  public AllocatorStats stats() {
    synchronized (heapLock) {
      scanUpTo(highWater() - 1);
      MemorySegment m = pool.memory();
      long runChunks = 0;
      long hugeChunks = 0;
      long freeChunks = 0;
      long blocks = 0;
      long bytes = 0;
      long huge = 0;
      TreeMap<Long, long[]> perSize = new TreeMap<>();
      for (int c = 0; c < highWater; ) {
        long base = chunkBase(c);
        long h = Words.getAcquire(m, base);
        if (HeapLayout.kind(h) == KIND_RUN) {
          Run r = runs[c];
          long owned = 0;
          for (int w = 0; w < (r.blocks + 63) >>> 6; w++) {
            owned += Long.bitCount(Words.getAcquire(m, base + CHUNK_HEADER_BYTES + 8L * w));
          }
          long[] cs = perSize.computeIfAbsent(r.blockSize, k -> new long[2]);
          cs[0]++;
          cs[1] += owned;
          runChunks++;
          blocks += owned;
          bytes += owned * r.blockSize;
          c++;
        } else {
          int n = (int) HeapLayout.field(h);
          if ((h & SPAN_OWNED) != 0) {
            hugeChunks += n;
            huge++;
            blocks++;
            bytes += ((long) n << chunkShift) - CHUNK_HEADER_BYTES;
          } else {
            freeChunks += n;
          }
          c += n;
        }
      }
      List<AllocatorStats.ClassStats> list = new ArrayList<>();
      for (Map.Entry<Long, long[]> e : perSize.entrySet()) {
        list.add(new AllocatorStats.ClassStats(e.getKey(), (int) e.getValue()[0], e.getValue()[1], e.getValue()[1] * e.getKey()));
      }
      return new AllocatorStats(highWater, runChunks, hugeChunks, freeChunks, blocks, bytes, huge, List.copyOf(list));
    }
  }

  /**
   * Checks the allocator's header word against the file; {@link Pool#open} calls it after lane
   * recovery.
   *
   * @throws CorruptPoolException if the high water lies beyond the file
   */
  public void checkHighWater() throws CorruptPoolException {
    long hw = Words.getAcquire(pool.memory(), pool.allocatorWord(HeapLayout.HIGH_WATER_WORD));
    if (hw < 0 || hw > (pool.size() - heap) >>> chunkShift) {
      throw new CorruptPoolException(pool.path() + ": the allocator's high water (" + hw + " chunks of " + chunkSize + " bytes from " + heap + ") lies beyond the file's " + pool.size() + " bytes; the file was damaged or truncated");
    }
  }

  // ---------------------------------------------------------------- TxAllocator

  @Override
  public long reserveForTx(long size) {
    Reservation r = reserve(size);
    r.state = Reservation.PUBLISHED; // owned (or abandoned) through the transaction's undo log
    return r.offset;
  }

  @Override
  public long ownedWord(long block) {
    int c = loadedChunk(block);
    Run r = runs[c];
    if (r != null) {
      return r.bitmapWord(runIndex(r, block));
    }
    checkSpanBlock(c, block);
    return chunkBase(c);
  }

  @Override
  public long ownedMask(long block) {
    int c = loadedChunk(block);
    Run r = runs[c];
    if (r != null) {
      return 1L << runIndex(r, block);
    }
    checkSpanBlock(c, block);
    return SPAN_OWNED;
  }

  @Override
  public long blockSize(long block) {
    int c = loadedChunk(block);
    Run r = runs[c];
    if (r != null) {
      runIndex(r, block);
      return r.blockSize;
    }
    checkSpanBlock(c, block);
    return ((long) spanLength[c] << chunkShift) - CHUNK_HEADER_BYTES;
  }

  @Override
  public void checkFreeable(long block) {
    if (!owned(block)) {
      throw new IllegalArgumentException("block " + block + " is not an owned block of this pool: it cannot be freed");
    }
  }

  @Override
  public void retire(long block) {
    deferred.retire(block, reuser);
  }

  @Override
  public void reuseNow(long block) {
    reuse(block);
  }

  @Override
  public void abandon(long block) {
    deferred.retire(block, reuser);
  }

  // ---------------------------------------------------------------- internals

  private boolean isBlockStart(long block) {
    if (block < heap) {
      return false;
    }
    long chunk = (block - heap) >>> chunkShift;
    if (chunk >= scanned) {
      synchronized (heapLock) {
        if (chunk >= highWater()) {
          return false;
        }
        scanUpTo((int) chunk);
      }
    }
    int c = (int) chunk;
    Run r = runs[c];
    if (r != null) {
      long rel = block - r.dataStart;
      return rel >= 0 && rel % r.blockSize == 0 && rel / r.blockSize < r.blocks;
    }
    return spanLength[c] > 0 && block == chunkBase(c) + CHUNK_HEADER_BYTES;
  }

  /** Makes a block reusable (after its grace period, or a cancel). */
  private void reuse(long block) {
    int c = loadedChunk(block);
    Run r = runs[c];
    if (r != null) {
      if (r.release(runIndex(r, block)) && r.cls >= 0) {
        classes[r.cls].available.add(r);
      }
      return;
    }
    checkSpanBlock(c, block);
    synchronized (heapLock) {
      addFreeSpan(c, spanLength[c]);
    }
  }

  private int runIndex(Run r, long block) {
    long rel = block - r.dataStart;
    if (rel < 0 || rel % r.blockSize != 0 || rel / r.blockSize >= r.blocks) {
      throw new IllegalArgumentException("offset " + block + " is not the start of a block (the run at " + r.base + " holds " + r.blocks + " blocks of " + r.blockSize + " bytes from " + r.dataStart + ")");
    }
    return (int) (rel / r.blockSize);
  }

  private void checkSpanBlock(int c, long block) {
    if (spanLength[c] == 0 || block != chunkBase(c) + CHUNK_HEADER_BYTES) {
      throw new IllegalArgumentException("offset " + block + " is not the start of a block");
    }
  }

  /** The chunk of a heap offset, loaded (scanned) before this returns. */
  private int loadedChunk(long block) {
    if (block < heap) {
      throw new IllegalArgumentException("offset " + block + " is below the heap (" + heap + ")");
    }
    long c = (block - heap) >>> chunkShift;
    if (c >= scanned) {
      synchronized (heapLock) {
        if (c >= highWater()) {
          throw new IllegalArgumentException("offset " + block + " lies beyond the formatted heap");
        }
        scanUpTo((int) c);
      }
    }
    return (int) c;
  }

  private long chunkBase(long chunk) {
    return heap + (chunk << chunkShift);
  }

  private int classOf(long size) {
    long[] sizes = classSizes;
    int lo = 0;
    int hi = sizes.length - 1;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (sizes[mid] >= size) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  }

  private int exactClass(long blockSize) {
    int c = classOf(blockSize);
    return classSizes[c] == blockSize ? c : -1;
  }

  private MemorySegment memoryFor(long offset) {
    MemorySegment m = pool.memory();
    return m.byteSize() >= offset + 8 ? m : pool.memory();
  }

  // -------------------------------------------------- heap lock: scanning and formatting

  /** Reads the high water once. Caller holds heapLock. */
  private long highWater() {
    if (highWater < 0) {
      highWater = Words.getAcquire(pool.memory(), pool.allocatorWord(HeapLayout.HIGH_WATER_WORD));
    }
    return highWater;
  }

  /** Loads chunks until chunk {@code c} is scanned. Caller holds heapLock. */
  private void scanUpTo(long c) {
    while (scanned <= c && scanned < highWater()) {
      loadChunk(scanned);
    }
  }

  /** Loads the chunk at the scan cursor and advances it. Caller holds heapLock. */
  private void loadChunk(int c) {
    MemorySegment m = pool.memory();
    long base = chunkBase(c);
    long h = Words.getAcquire(m, base);
    long kind = HeapLayout.kind(h);
    long field = HeapLayout.field(h);
    if (kind == KIND_RUN && (h >>> 40) == 0 && field >= MIN_BLOCK && field <= chunkSize / 2) {
      int blocks = HeapLayout.runBlocks(chunkSize, field);
      long[] owned = new long[(blocks + 63) >>> 6];
      for (int w = 0; w < owned.length; w++) {
        owned[w] = Words.getAcquire(m, base + CHUNK_HEADER_BYTES + 8L * w);
      }
      Run r = new Run(c, exactClass(field), base, field, blocks, owned);
      ensureCapacity(c + 1);
      runs[c] = r;
      if (r.cls >= 0 && r.freeBlocks() > 0) {
        classes[r.cls].available.add(r);
      } else {
        r.markDetached();
      }
      scanned = c + 1;
    } else if (kind == KIND_SPAN && ((h >>> 40) & 0x7F_FFFFL) == 0 && field >= 1 && c + field <= highWater()) {
      ensureCapacity(c + 1);
      spanLength[c] = (int) field;
      if ((h & SPAN_OWNED) == 0) {
        freeSpans.put(c, (int) field);
      }
      scanned = (int) (c + field);
    } else {
      // Damage, not a bug: typed, so that a caller tells it from a programming error (issue 9).
      throw new UncheckedIOException(new CorruptPoolException(pool.path() + ": heap chunk " + c + " at offset " + base
          + " has an invalid header 0x" + Long.toHexString(h) + " (neither a run of a size class nor a span inside the"
          + " high water): the pool was damaged; restore it from a copy"));
    }
  }

  private void ensureCapacity(int chunks) {
    if (chunks > runs.length) {
      int n = Math.max(chunks, runs.length * 2);
      Run[] r = Arrays.copyOf(runs, n);
      int[] s = Arrays.copyOf(spanLength, n);
      runs = r;
      spanLength = s;
    }
  }

  /** A run of class {@code cls} with a free block. Called with the stripe lock held. */
  private Run refill(int cls) {
    synchronized (heapLock) {
      ClassState cs = classes[cls];
      for (;;) {
        Run r = cs.available.poll();
        if (r != null) {
          return r;
        }
        if (!freeSpans.isEmpty()) {
          Map.Entry<Integer, Integer> e = freeSpans.firstEntry();
          return formatRun(cls, e.getKey(), e.getValue());
        }
        if (scanned < highWater()) {
          loadChunk(scanned);
          continue;
        }
        return formatRun(cls, -1, 0);
      }
    }
  }

  /**
   * Formats a run in free span {@code first} of {@code length} chunks, or at the high water when
   * {@code first} is -1. Caller holds heapLock.
   */
  private Run formatRun(int cls, int first, int length) {
    long bs = classSizes[cls];
    int blocks = classBlocks[cls];
    int c = first >= 0 ? first : (int) highWater();
    if (first < 0) {
      growTo(c + 1L); // may throw PoolFullException: nothing changed
    }
    MemorySegment m = pool.memory();
    long base = chunkBase(c);
    int words = (blocks + 63) >>> 6;
    for (int w = 0; w < words; w++) {
      Words.set(m, base + CHUNK_HEADER_BYTES + 8L * w, 0);
    }
    persistence.flush(base + CHUNK_HEADER_BYTES, 8L * words);
    if (first >= 0 && length > 1) {
      Words.setRelease(m, chunkBase(c + 1L), HeapLayout.spanHeader(length - 1, false));
      persistence.flush(chunkBase(c + 1L), 8);
    }
    // PERSIST(format run 1): a zero bitmap (and the rest of a split span) durable before the
    // header that makes the chunk a run.
    persistence.drain();
    Words.setRelease(m, base, HeapLayout.runHeader(bs));
    // PERSIST(format run 2): the run exists (at the high water: before the high water counts it).
    persistence.persist(base, 8);
    ensureCapacity(c + 2);
    if (first >= 0) {
      freeSpans.remove(first);
      spanLength[c] = 0;
      if (length > 1) {
        spanLength[c + 1] = length - 1;
        freeSpans.put(c + 1, length - 1);
      }
    } else {
      raiseHighWater(c + 1L);
      scanned = c + 1;
    }
    Run r = new Run(c, cls, base, bs, blocks, null);
    runs[c] = r;
    return r;
  }

  /** Reserves a span for a huge block and returns its first chunk. */
  private int reserveSpan(long size) {
    long need = (size + CHUNK_HEADER_BYTES + chunkSize - 1) >>> chunkShift;
    if (need > Integer.MAX_VALUE / 2) {
      throw new PoolFullException("a block of " + size + " bytes is larger than any pool can hold", null);
    }
    int n = (int) need;
    synchronized (heapLock) {
      for (;;) {
        for (Map.Entry<Integer, Integer> e : freeSpans.entrySet()) {
          if (e.getValue() >= n) {
            return takeSpan(e.getKey(), e.getValue(), n);
          }
        }
        if (scanned < highWater()) {
          loadChunk(scanned);
          continue;
        }
        break;
      }
      // A free span at the end of the heap is extended rather than left behind: a new free span
      // is formatted at the high water, then merged with it (each step one durable store).
      Map.Entry<Integer, Integer> last = freeSpans.lastEntry();
      int c = (int) highWater();
      int add = n;
      if (last != null && last.getKey() + last.getValue() == c) {
        add = n - last.getValue();
      }
      growTo((long) c + add); // may throw PoolFullException: nothing changed
      MemorySegment m = pool.memory();
      Words.setRelease(m, chunkBase(c), HeapLayout.spanHeader(add, false));
      // PERSIST(format span): the span's header durable before the high water counts it.
      persistence.persist(chunkBase(c), 8);
      raiseHighWater((long) c + add);
      ensureCapacity(c + add);
      scanned = c + add;
      spanLength[c] = add;
      addFreeSpan(c, add);
      Map.Entry<Integer, Integer> merged = freeSpans.lastEntry();
      return takeSpan(merged.getKey(), merged.getValue(), n);
    }
  }

  /** Takes the first {@code n} chunks of free span {@code first}. Caller holds heapLock. */
  private int takeSpan(int first, int length, int n) {
    MemorySegment m = pool.memory();
    if (length > n) {
      Words.setRelease(m, chunkBase((long) first + n), HeapLayout.spanHeader(length - n, false));
      // PERSIST(split span 1): the rest's header durable before the first part stops covering it.
      persistence.persist(chunkBase((long) first + n), 8);
      Words.setRelease(m, chunkBase(first), HeapLayout.spanHeader(n, false));
      // PERSIST(split span 2): two free spans now.
      persistence.persist(chunkBase(first), 8);
      spanLength[first + n] = length - n;
      freeSpans.put(first + n, length - n);
    }
    freeSpans.remove(first);
    spanLength[first] = n;
    return first;
  }

  /** Adds a free span, merging it with free neighbours. Caller holds heapLock. */
  private void addFreeSpan(int first, int n) {
    MemorySegment m = pool.memory();
    Integer next = freeSpans.get(first + n);
    if (next != null) {
      Words.setRelease(m, chunkBase(first), HeapLayout.spanHeader(n + next, false));
      // PERSIST(merge): one store makes two free spans one.
      persistence.persist(chunkBase(first), 8);
      freeSpans.remove(first + n);
      spanLength[first + n] = 0;
      n += next;
      spanLength[first] = n;
    }
    Map.Entry<Integer, Integer> prev = freeSpans.lowerEntry(first);
    if (prev != null && prev.getKey() + prev.getValue() == first) {
      int p = prev.getKey();
      Words.setRelease(m, chunkBase(p), HeapLayout.spanHeader(prev.getValue() + n, false));
      // PERSIST(merge): one store makes two free spans one.
      persistence.persist(chunkBase(p), 8);
      spanLength[first] = 0;
      spanLength[p] = prev.getValue() + n;
      freeSpans.put(p, prev.getValue() + n);
      return;
    }
    freeSpans.put(first, n);
  }

  private void growTo(long chunks) {
    pool.ensureSize(heap + (chunks << chunkShift));
  }

  private void raiseHighWater(long chunks) {
    long word = pool.allocatorWord(HeapLayout.HIGH_WATER_WORD);
    Words.setRelease(pool.memory(), word, chunks);
    // PERSIST(high water): raised only after the new chunks' headers are durable.
    persistence.persist(word, 8);
    highWater = chunks;
  }
}
