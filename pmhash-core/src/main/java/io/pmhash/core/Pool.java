package io.pmhash.core;

import static io.pmhash.core.internal.PoolHeader.*;

import io.pmhash.core.alloc.Allocator;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.alloc.EpochDeferredFree;
import io.pmhash.core.concurrent.EpochReclaimer;
import io.pmhash.core.internal.Libc;
import io.pmhash.core.internal.NativeShim;
import io.pmhash.core.internal.OrderingPersistence;
import io.pmhash.core.internal.PersistenceChoice;
import io.pmhash.core.log.Lanes;
import io.pmhash.core.log.UndoLog;
import io.pmhash.core.spi.PoolBackend;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.Objects;
import java.util.ServiceLoader;
import jdk.nio.mapmode.ExtendedMapMode;

/**
 * A pool: one file mapped as a {@link MemorySegment} from one shared {@link Arena}, with a
 * validated header at offset 0 (see {@code docs/format/pool.md}). Everything persistent refers
 * to other things by 8-byte <em>offsets</em> from the pool base, never by address, so a pool
 * opens at any address.
 *
 * <h2>Lifecycle</h2>
 *
 * {@link #create} makes a new file, {@link #open} validates and maps an existing one (nothing in
 * a file is trusted; a failed open never modifies it), {@link #close} persists the clean-shutdown
 * marker and unmaps. One opener at a time: the file is locked for as long as it is open, also
 * against other processes ({@link PoolLockedException}).
 *
 * <h2>Growth</h2>
 *
 * The pool grows while open ({@link #ensureSize}): the file is extended with zeros ({@code
 * fallocate} where the file system has it, else written; either way so that a
 * full disk is reported as {@link PoolFullException} then, not as a SIGBUS later), then mapped
 * anew in the same arena, and the new mapping is published. Earlier mappings stay mapped until
 * close and show the same memory (the mapping is shared), so a reader holding one never sees an
 * unmapped region; an offset it reads that lies beyond its mapping was published after the
 * growth, so {@link #memory()} read after that offset covers it. Extending the file is most of a
 * growth's time (a quarter of the pool: about 15 ms at 200 MB on tmpfs), so once the heap is
 * within half a step of the pool's end, the next step is written ahead on a daemon thread
 * ({@link PoolOptions#withGrowAhead}, on by default) and the growth only maps it; {@link #close}
 * waits for that thread.
 *
 * <h2>Backends</h2>
 *
 * The default backend maps the file itself through the FFM API. A pool created with {@link
 * PoolOptions#withBackend}{@code ("llpl")} lives instead in a PMDK pool file, in one block that
 * PMDK's allocator holds ({@link PoolBackend}, module {@code pmhash-llpl}, {@code docs/llpl.md}):
 * the same header, lanes and heap, reached through a {@link MemorySegment} over PMDK's mapping,
 * so schemes run unchanged. {@link #open} recognises such a file by PMDK's signature and the
 * backend id in the header; such a pool keeps the size it was created with. The schemes that take
 * their blocks through {@link #schemeAllocator()} (every built-in scheme) get PMDK's allocator there: their
 * blocks are PMDK objects beside the pool's block.
 *
 * <h2>Thread safety</h2>
 *
 * All methods are thread-safe. {@link #close} must not race with operations on the pool.
 */
public final class Pool implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("io.pmhash.pool");
  private static final int ZERO_FILL_CHUNK = 1 << 20;
  private static final long VOLATILE_RESERVATION = 1L << 40;
  /** The start of a volatile pool kept in 4 KiB pages (see {@link #createVolatile}). */
  private static final long VOLATILE_SMALL_PAGES = 16L << 20;

  private final Path path;
  private final FileChannel channel;
  private final FileLock lock;
  private final Arena arena;
  private final Durability durability;
  private final Persistence persistence;
  private final boolean lastShutdownClean;
  private final long maxSize;
  private final long anonymousBase;
  private final long anonymousReservation;
  private final long heapOffset;
  /** Growth adds {@code 1 / GROWTH_DIVISOR} of the current size. */
  private static final long GROWTH_DIVISOR = 4;

  /** How long a close waits for threads inside an epoch critical section before it unmaps anyway. */
  private static final long QUIESCE_NANOS = 10_000_000_000L;

  private final long chunkSize;
  private final long lanesOffset;
  private final int laneCount;
  private final int laneSize;
  private final String scheme;
  private final int schemeVersion;
  private final long[] schemeParams;
  private final long poolId;
  private final Lanes lanes;
  private final Allocator allocator;
  /** The allocator every scheme uses: the backend's, or {@link #allocator}'s seam. */
  private final SchemeAllocator schemeAllocator;
  /** The backend's allocator ({@link PoolBackend.Region#allocation()}), or null. */
  private final PoolBackend.Allocation hostAllocation;
  private final UndoLog undoLog;
  private final EpochReclaimer epochs;
  private final PoolBackend.Region host;
  /** Where the header is: 0, except in a hosted region, where the pool is one extent of the backend's mapping. */
  private final long origin;
  /** A hosted pool's fixed end (its recorded size); unused (0) for FFM and volatile pools, whose end is the mapping's. */
  private final long hostedEnd;

  private volatile MemorySegment memory;
  private volatile boolean closed;
  /**
   * The header words {@link #markOpen} overwrote (file size, clean-shutdown marker, recovery
   * epoch), for {@link #closeRefused}; null for a pool that was created, not opened.
   */
  private long[] wordsBeforeOpen;
  private System.Logger.Level openLogLevel = System.Logger.Level.INFO;
  /** Whether the file's next growth step is written ahead on a daemon thread ({@link PoolOptions#withGrowAhead}); FFM file pools only. */
  private boolean growAhead;
  /** Guards {@link #fileExtent} and every change of the file's length after create. */
  private final Object extension = new Object();
  /** The file's device and inode ({@link #fileIdentity}), for {@link Libc#allocateFileSpace}; null where unknown. */
  private long[] fileIdentity;
  /** How far the file is extended with zeros (and forced, in the modes that force) for growth: at least {@link #size()}. Guarded by {@link #extension}. */
  private long fileExtent;
  /** The background extension started last ({@link #extendAhead}), or null. Guarded by this pool's monitor. */
  private Thread extender;
  /**
   * The size asked of {@link #ensureSize} past which it starts the next step's extension ahead
   * (half a step before the end of the pool); {@link Long#MAX_VALUE} when growing ahead is off or
   * this step's extension has started. Written under this pool's monitor.
   */
  private volatile long aheadFrom = Long.MAX_VALUE;

  private Pool(
      Path path, FileChannel channel, FileLock lock, Arena arena, Durability durability,
      Persistence persistence, MemorySegment memory, boolean lastShutdownClean, long maxSize,
      long anonymousBase, long anonymousReservation, PoolBackend.Region host, long origin, long hostedEnd) {
    this.path = path;
    this.channel = channel;
    this.lock = lock;
    this.arena = arena;
    this.durability = durability;
    this.persistence = persistence;
    this.memory = memory;
    this.lastShutdownClean = lastShutdownClean;
    this.maxSize = maxSize;
    this.anonymousBase = anonymousBase;
    this.anonymousReservation = anonymousReservation;
    this.host = host;
    this.origin = origin;
    this.hostedEnd = hostedEnd;
    MemorySegment header = memory.asSlice(origin, HEADER_SIZE);
    this.heapOffset = u64(header, HEAP_OFFSET_OFFSET);
    this.chunkSize = u64(header, CHUNK_SIZE_OFFSET);
    this.lanesOffset = u64(header, LANES_OFFSET_OFFSET);
    this.laneCount = u32(header, LANE_COUNT_OFFSET);
    this.laneSize = u32(header, LANE_SIZE_OFFSET);
    this.scheme = schemeName(header);
    this.schemeVersion = u32(header, SCHEME_VERSION_OFFSET);
    int n = u32(header, SCHEME_PARAM_COUNT_OFFSET);
    this.schemeParams = new long[n];
    for (int i = 0; i < n; i++) {
      schemeParams[i] = u64(header, SCHEME_PARAMS_OFFSET + 8L * i);
    }
    this.poolId = u64(header, POOL_ID_OFFSET);
    persistence.mapped(memory);
    // Pool is final and these constructors only record the reference.
    this.lanes = new Lanes(this);
    this.allocator = new Allocator(this, lanes);
    this.hostAllocation = host == null ? null : host.allocation().orElse(null);
    this.schemeAllocator = hostAllocation != null ? hostAllocation : allocator.schemeAllocator();
    this.undoLog = new UndoLog(lanes, allocator, host == null ? null : host.transactions().orElse(null), hostAllocation);
    this.epochs = new EpochReclaimer();
    EpochDeferredFree grace = new EpochDeferredFree(epochs);
    allocator.useDeferredFree(grace);
    if (hostAllocation != null) {
      hostAllocation.useDeferredFree(grace); // its retired blocks wait for the same readers
    }
  }

  // ---------------------------------------------------------------- create

  /**
   * Creates a new pool file. The options must name a scheme ({@link
   * PoolOptions#withScheme}). The file is zero-filled to its initial size and its header is
   * written last and forced, so an interrupted create leaves a file that {@link #open} refuses
   * as not a pool.
   *
   * @param path the file to create; must not exist
   * @param options durability, sizes, scheme
   * @return the open pool
   * @throws FileAlreadyExistsException if the file exists
   * @throws DurabilityUnsupportedException if {@link Durability#PMEM} was asked for and the file
   *     system cannot map the file with MAP_SYNC (the file is deleted again)
   * @throws IOException if the file cannot be created or filled (the file is deleted again)
   */
  public static Pool create(Path path, PoolOptions options) throws IOException {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(options, "options");
    if (options.durability() == Durability.VOLATILE) {
      throw new IllegalArgumentException(
          "a VOLATILE pool has no file: use Pool.createVolatile(options)");
    }
    requireScheme(options);
    Geometry g = Geometry.of(options, 0);
    if (PoolOptions.BACKEND_LLPL.equals(options.backend())) {
      return createHosted(path, options, g);
    }
    if (Files.isDirectory(path)) {
      throw new FileAlreadyExistsException(path.toString(), null, "a directory is there: give the path of the pool file to create inside it");
    }
    FileChannel channel =
        FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
    boolean done = false;
    try {
      FileLock lock = lockOrThrow(channel, path);
      zeroFill(channel, fileIdentity(path), path, 0, g.size);
      MemorySegment header = MemorySegment.ofArray(new byte[HEADER_SIZE]);
      writeHeader(header, options, g, BACKEND_FFM_FILE, 0);
      setU64(header, FILE_SIZE_OFFSET, g.size);
      writeFully(channel, header.asByteBuffer(), 0);
      channel.force(true);
      Pool pool = map(path, channel, lock, options, g.size, true);
      done = true;
      return pool;
    } finally {
      if (!done) {
        channel.close();
        Files.deleteIfExists(path);
      }
    }
  }

  /**
   * Creates a pool in anonymous memory ({@link Durability#VOLATILE}): the same layout as a file
   * pool, survives nothing. On Linux it reserves address space for growth up to {@link
   * PoolOptions#maxSize()} (at most 1 TiB) and commits pages as they are touched; elsewhere it
   * cannot grow past its initial size. The reservation starts on a 2 MiB boundary and all of it
   * but its first 16 MiB is advised {@code MADV_HUGEPAGE}: where the kernel's transparent huge
   * pages are in {@code madvise} or {@code always} mode, a pool larger than 16 MiB is backed by 2
   * MiB pages from there on (fewer TLB misses on random accesses, docs/persistence.md "Huge
   * pages"; that memory is committed 2 MiB at a time), while a smaller pool commits 4 KiB pages
   * as before.
   *
   * @param options sizes and scheme; the durability option is ignored
   * @return the pool
   */
  @SuppressWarnings("restricted") // views of our own mmap reservation, released with the arena
  public static Pool createVolatile(PoolOptions options) {
    requireScheme(options);
    Geometry g = Geometry.of(options, 0);
    Arena arena = Arena.ofShared();
    long reservation = 0;
    long base = 0;
    MemorySegment whole;
    if (Libc.available()) {
      reservation = Math.max(g.size, Math.min(options.maxSize(), VOLATILE_RESERVATION));
      reservation = (reservation + g.chunk - 1) & -g.chunk;
      base = Libc.reserveHugePageAligned(reservation);
      if (reservation > VOLATILE_SMALL_PAGES) {
        // 2 MiB pages past the first 16 MiB: a large pool's random accesses miss the TLB far
        // less; a small one stays in 4 KiB pages and commits no more memory than before
        Libc.adviseHugePages(base + VOLATILE_SMALL_PAGES, reservation - VOLATILE_SMALL_PAGES);
      }
      final long b = base;
      final long r = reservation;
      whole = MemorySegment.ofAddress(base).reinterpret(reservation, arena, ignored -> Libc.release(b, r));
    } else {
      whole = arena.allocate(g.size, 4096);
    }
    MemorySegment memory = whole.asSlice(0, g.size);
    writeHeader(memory, options, g, BACKEND_VOLATILE, 0);
    setU64(memory, FILE_SIZE_OFFSET, g.size);
    Persistence p = options.persistenceFactory() != null
        ? options.persistenceFactory().get()
        : new OrderingPersistence("none (VOLATILE: anonymous memory)");
    long max = reservation != 0 ? reservation : g.size;
    Pool pool = new Pool(null, null, null, arena, Durability.VOLATILE, p, memory, true, max, base, reservation, null, 0, 0);
    LOG.log(System.Logger.Level.INFO, "pmhash pool (anonymous) created: VOLATILE, " + g.size + " bytes");
    return pool;
  }

  private static void requireScheme(PoolOptions options) {
    if (options.scheme() == null) {
      throw new IllegalArgumentException(
          "a new pool must name its scheme: options.withScheme(name, version, params...)");
    }
  }

  /** Writes a new header into {@code h}; {@code origin} is the header's own pool offset (the lanes follow it). */
  private static void writeHeader(MemorySegment h, PoolOptions o, Geometry g, int backend, long origin) {
    setU64(h, MAGIC_OFFSET, MAGIC);
    setU32(h, FORMAT_VERSION_OFFSET, FORMAT_VERSION);
    setU32(h, HEADER_SIZE_OFFSET, HEADER_SIZE);
    setU32(h, PAGE_SIZE_OFFSET, 4096);
    setU32(h, BACKEND_OFFSET, backend);
    long id;
    do {
      id = new SecureRandom().nextLong();
    } while (id == 0);
    setU64(h, POOL_ID_OFFSET, id);
    setSchemeName(h, o.scheme());
    setU32(h, SCHEME_VERSION_OFFSET, o.schemeVersion());
    long[] params = o.schemeParams();
    setU32(h, SCHEME_PARAM_COUNT_OFFSET, params.length);
    for (int i = 0; i < params.length; i++) {
      setU64(h, SCHEME_PARAMS_OFFSET + 8L * i, params[i]);
    }
    setU32(h, LANE_COUNT_OFFSET, o.laneCount());
    setU32(h, LANE_SIZE_OFFSET, o.laneSize());
    setU64(h, LANES_OFFSET_OFFSET, origin + HEADER_SIZE);
    setU64(h, HEAP_OFFSET_OFFSET, g.heap);
    setU64(h, CHUNK_SIZE_OFFSET, g.chunk);
    setU32(h, CRC_OFFSET, checksum(h));
    setU64(h, CLEAN_SHUTDOWN_OFFSET, 0);
    setU64(h, RECOVERY_EPOCH_OFFSET, 1);
  }

  /**
   * Where the heap starts and where a new pool ends, for a header at pool offset {@code origin}
   * (0 but in a hosted region): the heap starts at the first chunk boundary after the lanes, and
   * the pool ends {@code initialSize} past the header, at least one chunk past the heap, in whole
   * chunks.
   */
  private record Geometry(long heap, long chunk, long size) {
    static Geometry of(PoolOptions o, long origin) {
      long chunk = o.chunkSize();
      long lanesEnd = origin + HEADER_SIZE + (long) o.laneCount() * o.laneSize();
      long heap = (lanesEnd + chunk - 1) & -chunk;
      long size = Math.max(origin + o.initialSize(), heap + chunk);
      size = (size + chunk - 1) & -chunk;
      if (size - origin > o.maxSize()) {
        throw new IllegalArgumentException(
            "the pool needs at least " + (size - origin) + " bytes (header, " + o.laneCount()
                + " lanes and one chunk, rounded to chunks) but maxSize is " + o.maxSize());
      }
      return new Geometry(heap, chunk, size);
    }
  }

  // ---------------------------------------------------------------- open

  /**
   * Opens an existing pool. Every header field is validated before anything is written; then
   * the clean-shutdown marker is cleared and the recovery epoch incremented (both persisted),
   * so that a crash from here on is seen by the next open.
   *
   * @param path the pool file
   * @param options the durability mode, and the scheme the pool must hold if one is named
   * @return the open pool; {@link #lastShutdownClean()} tells whether recovery is needed
   * @throws NotAPoolException if the file is not a pmhash pool
   * @throws FormatVersionException if it has another format version
   * @throws CorruptPoolException if its header checksum or a field is invalid
   * @throws TruncatedPoolException if it is shorter than its header says
   * @throws SchemeMismatchException if it holds another scheme than the options name
   * @throws PoolLockedException if another opener holds it
   * @throws DurabilityUnsupportedException if the durability mode cannot be provided
   * @throws IOException if the file cannot be read, written or mapped
   */
  public static Pool open(Path path, PoolOptions options) throws IOException {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(options, "options");
    if (options.durability() == Durability.VOLATILE) {
      throw new DurabilityUnsupportedException(
          "VOLATILE pools have no file to open; open " + path + " with PMEM, PMEM_EMULATED,"
              + " MSYNC, PROCESS or AUTO");
    }
    if (Files.isDirectory(path)) {
      throw new PoolException(path + " is a directory, not a pool file: give the path of the pool file itself");
    }
    FileChannel channel;
    try {
      channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
    } catch (NoSuchFileException e) {
      throw new NoSuchFileException(path.toString(), null, "no pool file here; create it with Pool.create");
    } catch (FileSystemException e) {
      // AccessDeniedException (permissions), and EROFS (a read-only mount), which has no subclass
      throw new PoolException(
          "cannot open " + path + " for reading and writing (" + e.getMessage() + "): a pool is"
              + " always opened read-write, so check the file's permissions and the mount", e);
    }
    boolean done = false;
    try {
      FileLock lock = lockOrThrow(channel, path);
      long actual = channel.size();
      if (firstWord(channel, actual) == PMDK_OBJ_SIGNATURE) {
        Pool pool = openHosted(path, channel, lock, options);
        done = true;
        return pool;
      }
      requireBackend(options, PoolOptions.BACKEND_FFM, path);
      MemorySegment header = readHeader(channel, path, actual);
      long expected = validateHeader(header, path, actual, BACKEND_FFM_FILE, 0, 0);
      checkScheme(header, path, options);
      boolean clean = u64(header, CLEAN_SHUTDOWN_OFFSET) == 1;
      // The file may be longer than the header says if a growth was interrupted after the
      // file was extended and before the new size was persisted: the tail is zeros, unused.
      Pool pool = map(path, channel, lock, options, Math.max(expected, actual - actual % u64(header, CHUNK_SIZE_OFFSET)), false);
      pool.recoverAtOpen(clean);
      done = true;
      return pool;
    } finally {
      if (!done) {
        channel.close();
      }
    }
  }

  /**
   * Reads and validates a pool's header without opening the pool: nothing is mapped, locked or
   * written. For tools, and for choosing a scheme before {@link #open}.
   *
   * @param path the pool file
   * @return what the header says
   * @throws PoolException as {@link #open} would for the same header
   * @throws IOException if the file cannot be read
   */
  public static PoolInfo inspect(Path path) throws IOException {
    Objects.requireNonNull(path, "path");
    try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
      long actual = channel.size();
      MemorySegment header;
      long expected;
      if (firstWord(channel, actual) == PMDK_OBJ_SIGNATURE) {
        try (PoolBackend.Region region = backend(PoolOptions.BACKEND_LLPL, path).open(path);
            Arena arena = Arena.ofConfined()) {
          actual = region.poolEnd();
          header = hostedHeader(region, arena, path);
          expected = validateHeader(header, path, actual, BACKEND_LLPL, region.poolOffset(), region.size());
        }
      } else {
        header = readHeader(channel, path, actual);
        expected = validateHeader(header, path, actual, BACKEND_FFM_FILE, 0, 0);
      }
      int n = u32(header, SCHEME_PARAM_COUNT_OFFSET);
      long[] params = new long[n];
      for (int i = 0; i < n; i++) {
        params[i] = u64(header, SCHEME_PARAMS_OFFSET + 8L * i);
      }
      return new PoolInfo(schemeName(header), u32(header, SCHEME_VERSION_OFFSET), params,
          u64(header, CLEAN_SHUTDOWN_OFFSET) == 1, u64(header, RECOVERY_EPOCH_OFFSET), expected, actual);
    } catch (NoSuchFileException e) {
      throw new NoSuchFileException(path.toString(), null, "no pool file here");
    }
  }

  private static MemorySegment readHeader(FileChannel channel, Path path, long actual) throws IOException {
    if (actual < 8) {
      throw new NotAPoolException(path + " is " + actual + " bytes long: not a pmhash pool (a pool starts with a " + HEADER_SIZE + "-byte header)");
    }
    ByteBuffer buf = ByteBuffer.allocate((int) Math.min(actual, HEADER_SIZE)).order(ByteOrder.LITTLE_ENDIAN);
    while (buf.hasRemaining()) {
      if (channel.read(buf, buf.position()) < 0) {
        break;
      }
    }
    buf.flip();
    return checkedHeader(buf, path, actual);
  }

  /** The magic, version and length checks of a header's first bytes in {@code buf}; a copy of it. */
  private static MemorySegment checkedHeader(ByteBuffer buf, Path path, long actual) throws PoolException {
    long magic = buf.getLong(0);
    if (magic != MAGIC) {
      if (magic == 0 && allZero(buf)) {
        throw new NotAPoolException(path + " starts with zeros, not the pmhash magic: an empty file, or a create that was interrupted before it wrote the header");
      }
      throw new NotAPoolException(String.format("%s is not a pmhash pool: its first 8 bytes are %016x, not the magic %016x (\"PMHASH\\r\\n\")", path, magic, MAGIC));
    }
    if (buf.limit() >= 12) {
      int version = buf.getInt((int) FORMAT_VERSION_OFFSET);
      if (version != FORMAT_VERSION) {
        throw new FormatVersionException(path + " has pool format version " + version + "; this pmhash reads version " + FORMAT_VERSION + ": open it with the pmhash release that wrote it");
      }
    }
    if (actual < HEADER_SIZE) {
      throw new TruncatedPoolException(path + " is " + actual + " bytes long, shorter than the " + HEADER_SIZE + "-byte header: the file was truncated");
    }
    byte[] copy = new byte[HEADER_SIZE];
    buf.get(0, copy);
    return MemorySegment.ofArray(copy);
  }

  private static boolean allZero(ByteBuffer buf) {
    for (int i = 0; i < buf.limit(); i++) {
      if (buf.get(i) != 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * Validates every header field of a header found at pool offset {@code origin} (0 but in a
   * hosted region), whose pool may extend to {@code actual}; a hosted region's roots may point
   * anywhere in its {@code regionSize} bytes (0: only into the heap). Returns the recorded size
   * (the offset where the pool ends).
   */
  private static long validateHeader(MemorySegment h, Path path, long actual, int expectedBackend, long origin, long regionSize) throws PoolException {
    int stored = u32(h, CRC_OFFSET);
    int computed = checksum(h);
    if (stored != computed) {
      throw new CorruptPoolException(String.format("%s: header checksum mismatch (stored %08x, computed %08x): the header was damaged; restore the pool from a copy", path, stored, computed));
    }
    check(u32(h, HEADER_SIZE_OFFSET) == HEADER_SIZE, path, "header size " + u32(h, HEADER_SIZE_OFFSET) + " is not " + HEADER_SIZE);
    int page = u32(h, PAGE_SIZE_OFFSET);
    check(page >= 4096 && page <= (1 << 21) && Integer.bitCount(page) == 1, path, "page size " + page + " is not a power of two from 4096 to 2 MiB");
    int backend = u32(h, BACKEND_OFFSET);
    check(backend == expectedBackend, path, backend == BACKEND_VOLATILE ? "it is marked as an anonymous (VOLATILE) pool image"
        : backend == BACKEND_LLPL ? "it is marked as hosted in a PMDK pool (llpl backend) but is not inside one"
        : backend == BACKEND_FFM_FILE ? "it is marked as an FFM file pool but was found inside a PMDK pool"
        : "unknown backend id " + backend);
    check(u64(h, POOL_ID_OFFSET) != 0, path, "pool id is zero");
    String scheme = schemeName(h);
    check(!scheme.isEmpty() && scheme.chars().allMatch(c -> c > 0x20 && c < 0x7f), path, "scheme name is not printable ASCII");
    for (long i = SCHEME_NAME_OFFSET + scheme.length(); i < SCHEME_NAME_OFFSET + 16; i++) {
      check(h.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) == 0, path, "scheme name is not NUL-padded");
    }
    int params = u32(h, SCHEME_PARAM_COUNT_OFFSET);
    check(params >= 0 && params <= PoolOptions.MAX_SCHEME_PARAMS, path, "scheme parameter count " + params + " is not 0.." + PoolOptions.MAX_SCHEME_PARAMS);
    for (int i = params; i < PoolOptions.MAX_SCHEME_PARAMS; i++) {
      check(u64(h, SCHEME_PARAMS_OFFSET + 8L * i) == 0, path, "unused scheme parameter " + i + " is not zero");
    }
    int lanes = u32(h, LANE_COUNT_OFFSET);
    int laneSize = u32(h, LANE_SIZE_OFFSET);
    check(lanes >= 1 && lanes <= 1024, path, "lane count " + lanes + " is not 1..1024");
    check(laneSize >= 512 && laneSize <= (1 << 20) && laneSize % 64 == 0, path, "lane size " + laneSize + " is not a multiple of 64 from 512 to 1 MiB");
    long lanesAt = u64(h, LANES_OFFSET_OFFSET);
    check(lanesAt == origin + HEADER_SIZE, path, "lanes offset " + lanesAt + " is not " + (origin + HEADER_SIZE)
        + (backend == BACKEND_LLPL && origin != 0 && lanesAt == HEADER_SIZE
            ? " (offsets relative to the pool block: an llpl pool made by a pmhash before offsets became offsets in the"
                + " whole PMDK pool; this version cannot read it: recreate the pool and load the data again)"
            : ""));
    long chunk = u64(h, CHUNK_SIZE_OFFSET);
    check(chunk >= (64 << 10) && chunk <= (64L << 20) && Long.bitCount(chunk) == 1, path, "chunk size " + chunk + " is not a power of two from 64 KiB to 64 MiB");
    long heap = u64(h, HEAP_OFFSET_OFFSET);
    long lanesEnd = origin + HEADER_SIZE + (long) lanes * laneSize;
    check(heap == ((lanesEnd + chunk - 1) & -chunk), path, "heap offset " + heap + " does not follow the lanes");
    for (long i = RESERVED_IMMUTABLE_OFFSET; i < CRC_OFFSET; i++) {
      check(h.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) == 0, path, "reserved byte " + i + " is not zero");
    }
    // mutable words: each is range-checked, since no checksum can cover them
    long fileSize = u64(h, FILE_SIZE_OFFSET);
    check(fileSize >= heap + chunk && fileSize % chunk == 0, path, "recorded file size " + fileSize + " is not a whole number of chunks past the heap start");
    if (actual < fileSize) {
      throw new TruncatedPoolException(path + " is " + actual + " bytes long but its header records " + fileSize + ": the file was truncated (or copied in part); restore it from a copy");
    }
    long clean = u64(h, CLEAN_SHUTDOWN_OFFSET);
    check(clean == 0 || clean == 1, path, "clean-shutdown marker is " + clean + ", not 0 or 1");
    check(u64(h, RECOVERY_EPOCH_OFFSET) > 0, path, "recovery epoch is not positive");
    check(u64(h, RESERVED_MUTABLE_OFFSET) == 0, path, "reserved word is not zero");
    for (int i = 0; i < ROOT_COUNT; i++) {
      long root = u64(h, rootOffset(i));
      // A hosted pool's roots may also name blocks its backend allocated (Region.allocation()), anywhere in the region.
      boolean inRegion = regionSize > 0 && root > 0 && root < regionSize;
      check(root == 0 || ((inRegion || (root >= heap && root < fileSize)) && (root & 7) == 0), path, "root " + i + " = " + root
          + " does not point into the heap [" + heap + ", " + fileSize + ")" + (regionSize > 0 ? " or the region [0, " + regionSize + ")" : ""));
    }
    for (long i = RESERVED_TAIL_OFFSET; i < HEADER_SIZE; i += 8) {
      check(u64(h, i) == 0, path, "reserved header bytes at " + i + " are not zero");
    }
    return fileSize;
  }

  private static void check(boolean ok, Path path, String what) throws CorruptPoolException {
    if (!ok) {
      throw new CorruptPoolException(path + ": invalid pool header: " + what + "; the file was damaged or was not written by pmhash");
    }
  }

  private static FileLock lockOrThrow(FileChannel channel, Path path) throws IOException {
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (OverlappingFileLockException e) {
      throw new PoolLockedException(path + " is already open in this JVM: close that Pool first (one opener at a time)");
    }
    if (lock == null) {
      throw new PoolLockedException(path + " is locked by another process: one opener at a time; close it there first");
    }
    return lock;
  }

  /** Maps [0, size) of an open, locked, validated file and picks the persistence. */
  private static Pool map(Path path, FileChannel channel, FileLock lock, PoolOptions options, long size, boolean created) throws IOException {
    Durability asked = options.durability();
    Arena arena = Arena.ofShared();
    boolean done = false;
    try {
      MemorySegment memory;
      Durability mode;
      Persistence persistence;
      if (options.persistenceFactory() != null) {
        memory = channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
        persistence = options.persistenceFactory().get();
        mode = asked == Durability.AUTO ? Durability.PROCESS : asked;
      } else if (asked == Durability.PMEM || asked == Durability.AUTO) {
        MemorySegment synced = mapSync(channel, size, arena);
        if (synced != null) {
          memory = synced;
          mode = Durability.PMEM;
        } else if (asked == Durability.PMEM) {
          throw new DurabilityUnsupportedException(path + " cannot be mapped with MAP_SYNC: its file system is not a DAX mount of persistent memory. Use PMEM_EMULATED (the same flush instructions, survives a process crash), MSYNC (survives power loss through msync) or PROCESS (the AUTO choice on such files)");
        } else {
          memory = channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
          mode = Durability.PROCESS;
        }
        persistence = persistenceFor(mode);
      } else {
        memory = channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
        mode = asked;
        persistence = persistenceFor(mode);
      }
      Pool pool = new Pool(path, channel, lock, arena, mode, persistence, memory, created || u64(memory, CLEAN_SHUTDOWN_OFFSET) == 1, options.maxSize(), 0, 0, null, 0, 0);
      pool.openLogLevel = openLogLevel(options);
      pool.growAhead = options.growAhead();
      pool.fileExtent = size; // a longer file's tail (an interrupted growth's) is written over again
      pool.fileIdentity = fileIdentity(path);
      pool.aheadFrom = pool.aheadThreshold(size);
      LOG.log(pool.openLogLevel, "pmhash pool " + path + (created ? " created" : " opened") + ": durability " + mode + (asked == Durability.AUTO ? " (AUTO)" : "") + ", persistence " + persistence.describe() + ", " + size + " bytes, scheme " + pool.scheme);
      done = true;
      return pool;
    } finally {
      if (!done) {
        arena.close();
      }
    }
  }

  /** Opens with a replaced persistence are the crash simulator's (thousands per test): quiet. */
  private static System.Logger.Level openLogLevel(PoolOptions options) {
    return options.persistenceFactory() != null ? System.Logger.Level.DEBUG : System.Logger.Level.INFO;
  }

  private static MemorySegment mapSync(FileChannel channel, long size, Arena arena) {
    try {
      return channel.map(ExtendedMapMode.READ_WRITE_SYNC, 0, size, arena);
    } catch (IOException | UnsupportedOperationException e) {
      return null;
    }
  }

  private static Persistence persistenceFor(Durability mode) {
    return PersistenceChoice.forMode(mode, NativeShim.available());
  }

  private void markOpen(boolean clean) {
    MemorySegment m = memory;
    long o = origin;
    wordsBeforeOpen = new long[] {u64(m, o + FILE_SIZE_OFFSET), u64(m, o + CLEAN_SHUTDOWN_OFFSET), u64(m, o + RECOVERY_EPOCH_OFFSET)};
    // PERSIST: cleared before anything else is written, so a crash from now on is visible.
    setWordRelease(m, o + CLEAN_SHUTDOWN_OFFSET, 0);
    setWordRelease(m, o + RECOVERY_EPOCH_OFFSET, u64(m, o + RECOVERY_EPOCH_OFFSET) + 1);
    setWordRelease(m, o + FILE_SIZE_OFFSET, size());
    persistence.persist(o + FILE_SIZE_OFFSET, 24);
    LOG.log(openLogLevel, "pmhash pool " + path + ": last shutdown " + (clean ? "clean" : "NOT clean (recovery needed)") + ", recovery epoch " + recoveryEpoch());
  }

  /** The steps of every open after mapping: validate the logs (read-only), mark open, recover the lanes. */
  private void recoverAtOpen(boolean clean) throws IOException {
    checkLogs();
    markOpen(clean);
    recover();
  }

  /** Validates the lanes and the allocator word, read-only: a refused pool is not modified. */
  private void checkLogs() throws IOException {
    boolean ok = false;
    try {
      allocator.checkHighWater();
      lanes.check();
      ok = true;
    } finally {
      if (!ok) {
        arena.close();
      }
    }
  }

  /**
   * Lane recovery, before the pool is returned: per lane, a valid undo log is rolled back, then a
   * valid redo record replayed (see {@link Lanes#recover()}). O(lanes): nothing else of the heap
   * is read. Then a backend's allocator frees the blocks whose grace period a crash or close cut
   * short ({@link PoolBackend.Allocation#recover()}; the llpl pool: O(PMDK objects)).
   */
  private void recover() throws IOException {
    boolean ok = false;
    try {
      Lanes.Recovery r = lanes.recover();
      if (r.rolledBack() + r.replayed() + r.discarded() > 0) {
        LOG.log(System.Logger.Level.INFO, "pmhash pool " + path + ": lane recovery rolled back " + r.rolledBack() + " transactions, replayed " + r.replayed() + " redo records, discarded " + r.discarded() + " incomplete ones");
      }
      if (hostAllocation != null) {
        hostAllocation.recover();
      }
      ok = true;
    } finally {
      if (!ok) {
        arena.close();
      }
    }
  }

  // ---------------------------------------------------------------- hosted (llpl) pools

  private static void checkScheme(MemorySegment header, Path path, PoolOptions options) throws SchemeMismatchException {
    if (options.scheme() != null) {
      String found = schemeName(header);
      int version = u32(header, SCHEME_VERSION_OFFSET);
      if (!found.equals(options.scheme()) || version != options.schemeVersion()) {
        throw new SchemeMismatchException(
            path + " holds scheme '" + found + "' layout version " + version + ", not '"
                + options.scheme() + "' version " + options.schemeVersion()
                + ": open it with the scheme it was created with");
      }
    }
  }

  /** The file's first 8 bytes as a little-endian u64, or 0 when it is shorter. */
  private static long firstWord(FileChannel channel, long actual) throws IOException {
    if (actual < 8) {
      return 0;
    }
    ByteBuffer buf = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    while (buf.hasRemaining() && channel.read(buf, buf.position()) >= 0) {
      // read on
    }
    return buf.getLong(0);
  }

  private static void requireBackend(PoolOptions options, String found, Path path) throws BackendMismatchException {
    if (options.backend() != null && !options.backend().equals(found)) {
      throw new BackendMismatchException(path + " holds a pool of the '" + found + "' backend"
          + (found.equals(PoolOptions.BACKEND_LLPL) ? " (a PMDK pool file)" : " (a pmhash file)")
          + ", not of the '" + options.backend() + "' backend the options name: open it without"
          + " PoolOptions.withBackend, or with withBackend(\"" + found + "\")");
    }
  }

  /** The installed backend called {@code name} ({@link ServiceLoader}), or a typed refusal naming what to install. */
  private static PoolBackend backend(String name, Path path) throws BackendUnavailableException {
    for (PoolBackend b : ServiceLoader.load(PoolBackend.class, Pool.class.getClassLoader())) {
      if (b.name().equals(name)) {
        return b;
      }
    }
    throw new BackendUnavailableException(path + ": the '" + name + "' pool backend is not installed:"
        + " put the io.pmhash:pmhash-llpl module (with its dependency com.intel.pmem:llpl) on the class"
        + " or module path, and install PMDK's libraries (Debian/Ubuntu: apt-get install libpmemobj1"
        + " libpmempool1); see docs/llpl.md");
  }

  /**
   * The durability mode of a hosted pool. Its memory is PMDK's mapping, not a file mapping of
   * ours: PROCESS (ordering only) and PMEM_EMULATED (the native shim's clwb/sfence on PMDK's
   * addresses) work; MSYNC and PMEM are refused (see docs/llpl.md).
   */
  private static Durability hostedMode(PoolOptions o, Path path) throws DurabilityUnsupportedException {
    Durability asked = o.durability();
    if (asked == Durability.AUTO || asked == Durability.PROCESS) {
      return Durability.PROCESS;
    }
    if (o.persistenceFactory() != null) {
      return asked;
    }
    if (asked == Durability.PMEM_EMULATED && NativeShim.available()) {
      return asked;
    }
    throw new DurabilityUnsupportedException(path + ": durability " + asked + " is not available on the"
        + " llpl backend" + (asked == Durability.PMEM_EMULATED ? " without the native flush shim (" + NativeShim.unavailableReason() + ")" : "")
        + ": its memory is PMDK's mapping, which pmhash neither maps with MAP_SYNC nor msyncs; use"
        + " PMEM_EMULATED (clwb/sfence on the same lines) or PROCESS, or the FFM backend for " + asked);
  }

  private static Persistence hostedPersistence(PoolOptions o, Durability mode) {
    return o.persistenceFactory() != null ? o.persistenceFactory().get() : persistenceFor(mode);
  }

  @SuppressWarnings("restricted") // PMDK's mapping of the region, valid until the region closes (after the arena)
  private static MemorySegment hostedMemory(PoolBackend.Region region, long size, Arena arena) {
    return MemorySegment.ofAddress(region.address()).reinterpret(size, arena, null);
  }

  /** A checked copy of the header at the start of a hosted region's pool extent. */
  private static MemorySegment hostedHeader(PoolBackend.Region region, Arena arena, Path path) throws PoolException {
    long at = region.poolOffset();
    long extent = region.poolEnd() - at;
    if (at < 0 || (at & 4095) != 0 || extent < 0 || region.poolEnd() > region.size()) {
      throw new CorruptPoolException(path + ": the backend places the pool at [" + at + ", " + region.poolEnd()
          + ") of a " + region.size() + "-byte region, not a page-aligned extent inside it: the file was damaged");
    }
    MemorySegment whole = hostedMemory(region, region.size(), arena);
    byte[] copy = new byte[(int) Math.min(extent, HEADER_SIZE)];
    MemorySegment.copy(whole, at, MemorySegment.ofArray(copy), 0, copy.length);
    return checkedHeader(ByteBuffer.wrap(copy).order(ByteOrder.LITTLE_ENDIAN), path, extent);
  }

  /**
   * Creates a pool hosted by the llpl backend: the backend creates the PMDK file with a zeroed
   * pool extent, then the header is written at the extent's start and persisted, last, as a file
   * pool's is. The memory is the backend's whole region, so every offset of the pool is an offset
   * in it; the extent gets one chunk more than {@code g} needs, so that the heap, which starts at
   * a chunk boundary of the region, has at least {@code g}'s chunks.
   */
  private static Pool createHosted(Path path, PoolOptions options, Geometry g) throws IOException {
    Durability mode = hostedMode(options, path);
    if (Files.exists(path)) {
      throw new FileAlreadyExistsException(path.toString(), null, Files.isDirectory(path)
          ? "a directory is there: give the path of the pool file to create inside it" : "a pool is created in a new file");
    }
    PoolBackend.Region region = backend(PoolOptions.BACKEND_LLPL, path).create(path, g.size + g.chunk, options.backendAllocation());
    Arena arena = Arena.ofShared();
    FileChannel channel = null;
    boolean done = false;
    try {
      channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
      FileLock lock = lockOrThrow(channel, path);
      long origin = region.poolOffset();
      Geometry at = Geometry.of(options, origin);
      long size = region.poolEnd() & -g.chunk;
      if (size < at.size) {
        throw new PoolException("the llpl backend gave " + path + " a pool extent [" + origin + ", " + region.poolEnd()
            + ") too small for the " + (at.size - origin) + " bytes the pool needs: the backend is broken");
      }
      MemorySegment memory = hostedMemory(region, region.size(), arena);
      MemorySegment header = memory.asSlice(origin, HEADER_SIZE);
      writeHeader(header, options, at, BACKEND_LLPL, origin);
      setU64(header, FILE_SIZE_OFFSET, size);
      Persistence p = hostedPersistence(options, mode);
      Pool pool = new Pool(path, channel, lock, arena, mode, p, memory, true, size, 0, 0, region, origin, size);
      // PERSIST: the header is the last thing create writes (the extent is zero): a create
      // interrupted before this point leaves a region whose header open refuses.
      p.persist(origin, HEADER_SIZE);
      pool.openLogLevel = openLogLevel(options);
      LOG.log(pool.openLogLevel, "pmhash pool " + path + " created: backend llpl (" + region.describe() + "), durability " + mode + ", persistence " + p.describe() + ", " + size + " bytes, scheme " + pool.scheme);
      done = true;
      return pool;
    } finally {
      if (!done) {
        try {
          arena.close();
          region.close();
          if (channel != null) {
            channel.close();
          }
        } finally {
          Files.deleteIfExists(path);
        }
      }
    }
  }

  /** Opens a pool hosted by the llpl backend; the file is locked, and recognised by PMDK's signature. */
  private static Pool openHosted(Path path, FileChannel channel, FileLock lock, PoolOptions options) throws IOException {
    requireBackend(options, PoolOptions.BACKEND_LLPL, path);
    Durability mode = hostedMode(options, path);
    PoolBackend.Region region = backend(PoolOptions.BACKEND_LLPL, path).open(path);
    Arena arena = Arena.ofShared();
    boolean done = false;
    try {
      MemorySegment header = hostedHeader(region, arena, path);
      long origin = region.poolOffset();
      validateHeader(header, path, region.poolEnd(), BACKEND_LLPL, origin, region.size());
      checkScheme(header, path, options);
      boolean clean = u64(header, CLEAN_SHUTDOWN_OFFSET) == 1;
      long size = region.poolEnd() - region.poolEnd() % u64(header, CHUNK_SIZE_OFFSET);
      Persistence p = hostedPersistence(options, mode);
      Pool pool = new Pool(path, channel, lock, arena, mode, p, hostedMemory(region, region.size(), arena), clean, size, 0, 0, region, origin, size);
      pool.openLogLevel = openLogLevel(options);
      LOG.log(pool.openLogLevel, "pmhash pool " + path + " opened: backend llpl (" + region.describe() + "), durability " + mode + ", persistence " + p.describe() + ", " + size + " bytes, scheme " + pool.scheme);
      pool.recoverAtOpen(clean);
      done = true;
      return pool;
    } finally {
      if (!done) {
        try {
          if (arena.scope().isAlive()) {
            arena.close();
          }
        } finally {
          region.close();
        }
      }
    }
  }

  // ---------------------------------------------------------------- accessors

  /** @return the lanes: redo steps and the region transactions run in */
  public Lanes lanes() {
    return lanes;
  }

  /** @return the allocator of this pool's heap */
  public Allocator allocator() {
    return allocator;
  }

  /**
   * The allocator of the schemes whose readers and writers all hold the table's lock (NVLH,
   * NVDH): on a backend with an allocator of its own (the llpl pool: PMDK), that allocator, whose
   * blocks are outside the pool's heap; otherwise this pool's {@link #allocator()} behind the
   * seam. Transactions' {@code alloc} and {@code free} use the same one.
   *
   * @return the seam
   */
  public SchemeAllocator schemeAllocator() {
    return schemeAllocator;
  }

  /** @return failure-atomic transactions over this pool */
  public UndoLog undoLog() {
    return undoLog;
  }

  /**
   * The pool's epoch-based reclamation. Lock-free readers of a scheme {@link
   * EpochReclaimer#enter() enter} it around every access to memory that a concurrent writer may
   * free; blocks freed through the allocator are reused only after every such reader has left.
   *
   * @return the reclaimer
   */
  public EpochReclaimer epochs() {
    return epochs;
  }

  /**
   * The current mapping: offset 0 is the pool base, and it covers every offset published before
   * this call. Read it after reading an offset you will dereference (or re-read it when an offset
   * lies beyond {@code byteSize()}): growth publishes larger mappings. On the llpl backend it is
   * PMDK's whole mapping, of which the pool's header, lanes and heap are one extent ({@link
   * #headerOffset()} to {@link #size()}), so it may be larger than {@link #size()}.
   *
   * @return the mapping
   */
  public MemorySegment memory() {
    return memory;
  }

  /**
   * The pool's end: the offset just past its heap, which the allocator does not pass. The mapped
   * size for FFM and volatile pools; on the llpl backend the end of the pool's extent in PMDK's
   * mapping ({@link #memory()} covers the rest of the mapping too).
   *
   * @return the end offset in bytes
   */
  public long size() {
    return host == null ? memory.byteSize() : hostedEnd;
  }

  /**
   * @return the pool offset of the header: 0, except on the llpl backend, where it is the offset
   *     of pmhash's pool extent in PMDK's mapping (see {@code docs/llpl.md})
   */
  public long headerOffset() {
    return origin;
  }

  /** @return the persistence seam of this pool */
  public Persistence persistence() {
    return persistence;
  }

  /** @return the durability mode in force (never {@link Durability#AUTO}) */
  public Durability durability() {
    return durability;
  }

  /** @return true when the previous opener closed the pool cleanly (no recovery needed) */
  public boolean lastShutdownClean() {
    return lastShutdownClean;
  }

  /** @return the recovery epoch: incremented at every open (Dash §4.8's global version) */
  public long recoveryEpoch() {
    return wordAcquire(memory, origin + RECOVERY_EPOCH_OFFSET);
  }

  /** @return the file, or null for a volatile pool */
  public Path path() {
    return path;
  }

  /** @return the scheme name recorded in the header */
  public String scheme() {
    return scheme;
  }

  /** @return the scheme's layout version recorded in the header */
  public int schemeVersion() {
    return schemeVersion;
  }

  /** @return a copy of the scheme parameters recorded in the header */
  public long[] schemeParams() {
    return schemeParams.clone();
  }

  /** @return a random id given to the pool at create, the same in every copy of the file */
  public long poolId() {
    return poolId;
  }

  /** @return where the heap (allocator chunks) starts */
  public long heapOffset() {
    return heapOffset;
  }

  /** @return the allocator chunk size */
  public long chunkSize() {
    return chunkSize;
  }

  /** @return where the lanes start */
  public long lanesOffset() {
    return lanesOffset;
  }

  /** @return the number of lanes */
  public int laneCount() {
    return laneCount;
  }

  /** @return bytes per lane */
  public int laneSize() {
    return laneSize;
  }

  /** @return the maximum size this pool may grow to */
  public long maxSize() {
    return maxSize;
  }

  /**
   * Reads a scheme root (acquire).
   *
   * @param index 0 .. 15
   * @return the offset stored there, 0 when none
   */
  public long root(int index) {
    Objects.checkIndex(index, ROOT_COUNT);
    return wordAcquire(memory, origin + rootOffset(index));
  }

  /**
   * Stores a scheme root with one atomic 8-byte release store and persists it.
   *
   * @param index 0 .. 15
   * @param offset a heap offset or 0
   */
  public void setRoot(int index, long offset) {
    Objects.checkIndex(index, ROOT_COUNT);
    if (offset != 0 && (offset < heapOffset || offset >= size() || (offset & 7) != 0)) {
      throw new IllegalArgumentException("root " + index + " = " + offset + " is not an aligned heap offset");
    }
    setWordRelease(memory, origin + rootOffset(index), offset);
    persistence.persist(origin + rootOffset(index), 8);
  }

  /**
   * The pool offset of the allocator's header word {@code index} (0..7), which the allocator
   * owns.
   *
   * @param index 0 .. 7
   * @return its offset
   */
  public long allocatorWord(int index) {
    Objects.checkIndex(index, ALLOCATOR_WORD_COUNT);
    return origin + allocatorWordOffset(index);
  }

  /**
   * The pool offset of scheme root word {@code index}, for schemes that publish a root with CAS
   * or through a log rather than with {@link #setRoot}.
   *
   * @param index 0 .. 15
   * @return its offset
   */
  public long rootWord(int index) {
    Objects.checkIndex(index, ROOT_COUNT);
    return origin + rootOffset(index);
  }

  // ---------------------------------------------------------------- growth

  /**
   * Grows the pool so that it is at least {@code minSize} bytes: by a quarter of its size (at
   * least one chunk; more, if asked), within {@link #maxSize()}, in whole chunks; if the file
   * system cannot hold that, only to {@code minSize} rounded up to a chunk. Does nothing if it is
   * already that large.
   *
   * @param minSize the size needed
   * @throws PoolFullException if the pool may not or cannot grow that far; nothing changed
   */
  public void ensureSize(long minSize) {
    long size = size();
    if (size >= minSize) {
      if (minSize > aheadFrom) {
        extendAhead(size);
      }
      return;
    }
    grow(minSize);
  }

  @SuppressWarnings("restricted") // a larger view of our own anonymous reservation
  private synchronized void grow(long minSize) {
    long oldSize = size();
    if (oldSize >= minSize) {
      return;
    }
    if (closed) {
      throw new IllegalStateException("pool is closed");
    }
    if (host != null) {
      throw new PoolFullException("pool " + describeWhere() + " (llpl backend) is full: it needs " + minSize + " bytes and an llpl pool keeps the size it was created with, " + oldSize + " bytes; create it with a larger PoolOptions.withInitialSize", null);
    }
    if (minSize > maxSize) {
      throw new PoolFullException("pool " + describeWhere() + " is full: it needs " + minSize + " bytes and its maximum size is " + maxSize + "; create it with a larger PoolOptions.withMaxSize", null);
    }
    long target = Math.min(maxSize, (Math.max(minSize, nextSize(oldSize)) + chunkSize - 1) & -chunkSize);
    if (target < minSize) {
      throw new PoolFullException("pool " + describeWhere() + " is full: it needs " + minSize + " bytes, more than whole chunks below its maximum size " + maxSize, null);
    }
    MemorySegment grown;
    if (channel == null) {
      if (anonymousReservation == 0 || target > anonymousReservation) {
        throw new PoolFullException("volatile pool is full: it needs " + minSize + " bytes and its reservation is " + Math.max(anonymousReservation, oldSize) + "; create it with a larger initial or maximum size", null);
      }
      grown = MemorySegment.ofAddress(anonymousBase).reinterpret(target, arena, null);
    } else {
      long needed = Math.min(maxSize, (minSize + chunkSize - 1) & -chunkSize);
      try {
        grown = extendAndMap(target);
      } catch (IOException e) {
        if (needed >= target) {
          throw notGrown(oldSize, target, e);
        }
        // the step did not fit (a full file system): take only what this request needs
        try {
          grown = extendAndMap(needed);
          target = needed;
        } catch (IOException e2) {
          e2.addSuppressed(e);
          throw notGrown(oldSize, needed, e2);
        }
      }
    }
    persistence.mapped(grown);
    memory = grown;
    // PERSIST: the new size is recorded only once the file holds it (zero-filled above);
    // a crash before this leaves a longer file, which open accepts.
    setWordRelease(grown, origin + FILE_SIZE_OFFSET, target);
    persistence.persist(origin + FILE_SIZE_OFFSET, 8);
    LOG.log(System.Logger.Level.DEBUG, "pmhash pool " + describeWhere() + " grew from " + oldSize + " to " + target + " bytes");
    aheadFrom = aheadThreshold(target);
  }

  /**
   * The size one growth step takes a pool of {@code size} bytes to: a quarter more (at least a
   * chunk; the file stays within 25 % of what the heap uses, where doubling left up to half of it
   * unused), in whole chunks, at most {@link #maxSize}.
   */
  private long nextSize(long size) {
    long step = Math.max(size / GROWTH_DIVISOR, chunkSize);
    long next = size > maxSize - step ? maxSize : size + step;
    return Math.min(maxSize, (next + chunkSize - 1) & -chunkSize);
  }

  /** Extends the file to {@code target} ({@link #extendFile}) and maps it. */
  private MemorySegment extendAndMap(long target) throws IOException {
    extendFile(target);
    return durability == Durability.PMEM
        ? channel.map(ExtendedMapMode.READ_WRITE_SYNC, 0, target, arena)
        : channel.map(FileChannel.MapMode.READ_WRITE, 0, target, arena);
  }

  /**
   * Makes the file at least {@code target} bytes long, zeros from {@link #fileExtent} on ({@link
   * #zeroFill}; forced in the modes that force), unless a background extension did it already;
   * waits for one in flight (it holds the lock). On failure truncates the file back to the extent
   * it had, which no mapping passes: nothing mapped is cut off.
   */
  private void extendFile(long target) throws IOException {
    synchronized (extension) {
      long from = fileExtent;
      if (from >= target) {
        return;
      }
      try {
        zeroFill(channel, fileIdentity, path, from, target);
        if (durability == Durability.PMEM || durability == Durability.MSYNC) {
          channel.force(true);
        }
      } catch (IOException e) {
        try {
          channel.truncate(from);
        } catch (IOException suppressed) {
          e.addSuppressed(suppressed);
        }
        throw e;
      }
      fileExtent = target;
    }
  }

  /**
   * {@link #aheadFrom} for a pool of {@code size} bytes: half a step before its end, so that the
   * step is written while the heap still has half a step of room (writing it takes about 0.3 ms
   * per MB on tmpfs, nearly nothing on ext4; filling half a step with records takes about 40 times
   * longer). Where the pool ends the file (it is at {@link #maxSize}, or it is not a file of its
   * own), never.
   */
  private long aheadThreshold(long size) {
    long next = nextSize(size);
    return growAhead && channel != null && next > size ? size - (next - size) / 2 : Long.MAX_VALUE;
  }

  /**
   * When the heap needs more than {@link #aheadFrom} of a pool of {@code size} bytes ({@link
   * PoolOptions#withGrowAhead}): writes the file's next step on a daemon thread, so that the growth
   * that needs it finds it written and only maps it. Once per step, one thread at a time. Nothing
   * here is published: the pool's size changes only in {@link #grow}, and a crash during the
   * extension leaves a longer file with a tail of zeros, which {@link #open} accepts (as after a
   * growth interrupted before its size was recorded). A failure (a full file system) is left for
   * that growth to meet and report, in its own thread. {@link #close} waits for the thread.
   */
  private synchronized void extendAhead(long size) {
    if (closed || size != size() || aheadFrom == Long.MAX_VALUE) {
      return; // grown or closed meanwhile, or started by another thread
    }
    aheadFrom = Long.MAX_VALUE;
    long target = nextSize(size);
    if (extender != null && extender.isAlive()) {
      return; // the last step's, still writing: this step's growth writes in its own thread
    }
    // a class, not a lambda: the first lambda of a call site costs its bootstrap (milliseconds),
    // and this runs inside the operation that crossed the threshold
    extender = Thread.ofPlatform().daemon().name("pmhash-pool-extend").start(new Extension(this, target));
  }

  /** The body of {@link #extendAhead}'s thread. */
  private record Extension(Pool pool, long target) implements Runnable {
    @Override
    public void run() {
      try {
        pool.extendFile(target);
      } catch (IOException | RuntimeException e) {
        LOG.log(System.Logger.Level.DEBUG, "pmhash pool " + pool.describeWhere() + ": extending ahead to " + target + " bytes failed (the next growth retries in its own thread): " + e);
      }
    }
  }

  /** Waits for a background extension to finish before the file is closed under it. Caller holds this pool's monitor. */
  private void awaitExtender() {
    Thread t = extender;
    if (t == null) {
      return;
    }
    boolean interrupted = false;
    for (;;) {
      try {
        t.join();
        break;
      } catch (InterruptedException e) {
        interrupted = true; // the extension is short and the channel must not be closed under it
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private PoolFullException notGrown(long oldSize, long target, IOException e) {
    return new PoolFullException("pool " + describeWhere() + " could not grow from " + oldSize + " to " + target + " bytes (" + e.getMessage() + "): free space on its file system or move it", e);
  }

  private String describeWhere() {
    return path == null ? "(anonymous)" : path.toString();
  }

  /**
   * Makes {@code [from, to)} of the file read as zeros: the bytes the file has already are
   * overwritten; the rest is allocated with {@code fallocate} where the file system has it
   * ({@link Libc#allocateFileSpace}: blocks reserved, no zeros written, so ext4 and xfs write
   * nothing and tmpfs clears pages in the kernel), else written as zeros. Either way a full file
   * system is an {@link IOException} here.
   *
   * @param identity the file's {@link #fileIdentity}, or null to write zeros
   */
  private static void zeroFill(FileChannel channel, long[] identity, Path path, long from, long to) throws IOException {
    long existing = Math.min(Math.max(channel.size(), from), to);
    writeZeros(channel, from, existing);
    if (existing < to && (identity == null || !Libc.allocateFileSpace(path, identity[0], identity[1], existing, to - existing))) {
      writeZeros(channel, existing, to);
    }
  }

  /**
   * The device and inode of the file at {@code path}, read right after the caller opened it: what
   * {@link Libc#allocateFileSpace} checks that the file it opens by path is still this one; null
   * where the platform does not give them.
   */
  private static long[] fileIdentity(Path path) {
    try {
      return new long[] {((Number) Files.getAttribute(path, "unix:dev")).longValue(), ((Number) Files.getAttribute(path, "unix:ino")).longValue()};
    } catch (UnsupportedOperationException | IllegalArgumentException | IOException e) {
      return null;
    }
  }

  private static void writeZeros(FileChannel channel, long from, long to) throws IOException {
    if (from >= to) {
      return;
    }
    ByteBuffer zeros = ByteBuffer.allocateDirect(ZERO_FILL_CHUNK);
    for (long pos = from; pos < to; ) {
      zeros.clear();
      zeros.limit((int) Math.min(ZERO_FILL_CHUNK, to - pos));
      pos += writeFully(channel, zeros, pos);
    }
  }

  private static int writeFully(FileChannel channel, ByteBuffer buf, long position) throws IOException {
    int written = 0;
    while (buf.hasRemaining()) {
      written += channel.write(buf, position + written);
    }
    return written;
  }

  // ---------------------------------------------------------------- close

  /** @return true until {@link #close()} */
  public boolean isOpen() {
    return !closed;
  }

  /**
   * Persists the clean-shutdown marker, unmaps the file and releases the lock. Operations should
   * have finished; one still running in another thread inside the pool's {@linkplain #epochs()
   * epoch section} is waited for (up to 10 s) before the memory is unmapped, and from the start of
   * the wait {@link #memory()} gives a segment whose accesses throw, so such an operation either
   * completes or throws {@link IllegalStateException}. Using the pool's memory afterwards throws
   * {@link IllegalStateException}.
   *
   * @throws IOException if the file cannot be forced or closed
   */
  @Override
  public synchronized void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try {
      MemorySegment m = memory;
      if (channel != null) {
        // PERSIST(clean shutdown): every byte of the mapping is written back and drained before
        // the marker says the shutdown was clean. An open after a clean shutdown trusts what it
        // finds without recovery, and the structures leave in the caches what only a recovery
        // would repair: lock words stored while held, metadata a recovery rebuilds, words
        // written without a persist of their own. (The marker used to come first and the
        // write-back after it: a power loss between the two left a pool that opened clean with
        // a bucket lock still held, found by the crash tests' clean-close images.) One flush of
        // the whole mapping: a cache-line write-back loop (PMEM, PMEM_EMULATED), an msync
        // (MSYNC), nothing but the drain's fence (PROCESS). On the llpl backend the mapping is
        // PMDK's whole region, the schemes' PMDK objects included, less the file's partial last
        // page, which PMDK does not map.
        persistence.flush(0, host == null ? m.byteSize() : m.byteSize() & -4096L);
        persistence.drain();
        setWordRelease(m, origin + CLEAN_SHUTDOWN_OFFSET, 1);
        persistence.persist(origin + CLEAN_SHUTDOWN_OFFSET, 8);
      }
    } finally {
      release();
    }
  }

  /**
   * Closes a pool whose table was refused right after this open (a scheme found the table
   * damaged, or in another mode): the header words the open wrote (file size, clean-shutdown
   * marker, recovery epoch) get their values back and no clean shutdown is recorded, so the
   * refused file is left as it was found (issue 9: "a failed open never modifies the file"). The
   * scheme must refuse before it writes anything itself. Not undone: lane recovery, which writes
   * only if a crash left a log step in flight, and a backend allocator's freeing of blocks left
   * retired (llpl); each is a repair every open makes, idempotent, and the restored marker makes
   * the next open repeat the lanes'. On a pool that was created, not opened,
   * this is {@link #close()}.
   *
   * @throws IOException if the file cannot be forced or closed
   */
  public synchronized void closeRefused() throws IOException {
    long[] before = wordsBeforeOpen;
    if (closed || before == null || channel == null) {
      close();
      return;
    }
    closed = true;
    try {
      MemorySegment m = memory;
      setWordRelease(m, origin + FILE_SIZE_OFFSET, before[0]);
      setWordRelease(m, origin + CLEAN_SHUTDOWN_OFFSET, before[1]);
      setWordRelease(m, origin + RECOVERY_EPOCH_OFFSET, before[2]);
      // PERSIST: the words markOpen persisted, restored (the marker as found: a refused open
      // records no shutdown, clean or not)
      persistence.persist(origin + FILE_SIZE_OFFSET, 24);
      if (durability == Durability.MSYNC || durability == Durability.PMEM) {
        m.force();
      }
    } finally {
      release();
    }
  }

  /**
   * What {@link #memory()} returns while a close waits for the threads inside: the mapping's
   * address and size in an arena already closed, so every access passes the bounds check a
   * scheme makes and then throws {@link IllegalStateException} (from any thread), as the closed
   * mapping's do afterwards; a size check never sends a writer into a retry loop.
   */
  @SuppressWarnings("restricted") // a dead view of our own mapping: nothing can be read through it
  private static MemorySegment deadView(MemorySegment mapping) {
    Arena dead = Arena.ofShared();
    MemorySegment view = MemorySegment.ofAddress(mapping.address()).reinterpret(mapping.byteSize(), dead, null);
    dead.close();
    return view;
  }

  /**
   * Unmaps and unlocks; the caller has set {@link #closed}. Before unmapping, {@link #memory()}
   * returns a segment whose every access throws {@link IllegalStateException} (as the closed
   * mapping's do afterwards), and the threads already inside an epoch critical section, which may
   * be reading the mapping by address ({@link io.pmhash.core.concurrent.UncheckedMemory}), are
   * waited for: a racing {@code get} ends or fails with that exception, never reads unmapped memory.
   */
  private void release() throws IOException {
    awaitExtender();
    MemorySegment mapping = memory;
    try {
      memory = deadView(mapping);
      int inside = epochs.awaitOthersOutside(QUIESCE_NANOS);
      if (inside != 0) {
        LOG.log(System.Logger.Level.WARNING, "pmhash pool " + describeWhere() + ": closing while " + inside
            + " thread(s) still use it after " + QUIESCE_NANOS / 1_000_000_000 + " s; their next access throws IllegalStateException");
      }
      arena.close();
    } finally {
      memory = mapping; // closed now: its accesses throw, its size is the pool's
      try {
        if (host != null) {
          host.close();
        }
      } finally {
        if (channel != null) {
          try {
            lock.release();
          } finally {
            channel.close();
          }
        }
      }
    }
  }

  @Override
  public String toString() {
    return "Pool[" + describeWhere() + ", " + durability + ", " + size() + " bytes, scheme " + scheme + "]";
  }
}
