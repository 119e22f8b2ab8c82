package io.pmhash.core;

import java.util.Arrays;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * How to create or open a pool. Immutable; every {@code withX} returns a copy. The defaults are
 * safe for production: {@link Durability#AUTO}, 64 MiB initial size, growth without a limit
 * other than the file system's.
 *
 * <pre>{@code
 * PoolOptions options = PoolOptions.defaults()
 *     .withScheme("dash-eh", 1)
 *     .withDurability(Durability.PMEM_EMULATED)
 *     .withInitialSize(256L << 20);
 * }</pre>
 */
public final class PoolOptions {
  /** Default initial size of a new pool: 64 MiB. */
  public static final long DEFAULT_INITIAL_SIZE = 64L << 20;

  /** Default number of logging lanes: concurrent publishes and transactions in flight. */
  public static final int DEFAULT_LANE_COUNT = 64;

  /** Default bytes per lane (redo and undo records of one operation). */
  public static final int DEFAULT_LANE_SIZE = 4096;

  /** Default allocator chunk: the unit in which the heap is carved into runs and huge blocks. */
  public static final long DEFAULT_CHUNK_SIZE = 256L << 10;

  /** Most scheme parameters a header records. */
  public static final int MAX_SCHEME_PARAMS = 8;

  private static final long[] NO_PARAMS = new long[0];
  private static final PoolOptions DEFAULTS =
      new PoolOptions(
          Durability.AUTO,
          DEFAULT_INITIAL_SIZE,
          Long.MAX_VALUE,
          null,
          0,
          NO_PARAMS,
          DEFAULT_LANE_COUNT,
          DEFAULT_LANE_SIZE,
          DEFAULT_CHUNK_SIZE,
          null,
          null,
          0,
          !"false".equals(System.getProperty("pmhash.pool.growAhead")));

  /** The built-in backend: a file mapped through the FFM API (the default). */
  public static final String BACKEND_FFM = "ffm";

  /**
   * The llpl backend: the pool lives in a PMDK (libpmemobj) pool file, inside one block that
   * PMDK's allocator holds. Needs the {@code pmhash-llpl} module and PMDK's native libraries;
   * see {@code docs/llpl.md}.
   */
  public static final String BACKEND_LLPL = "llpl";

  private final Durability durability;
  private final long initialSize;
  private final long maxSize;
  private final String scheme;
  private final int schemeVersion;
  private final long[] schemeParams;
  private final int laneCount;
  private final int laneSize;
  private final long chunkSize;
  private final Supplier<? extends Persistence> persistence;
  private final String backend;
  private final long backendAllocation;
  private final boolean growAhead;

  private PoolOptions(
      Durability durability,
      long initialSize,
      long maxSize,
      String scheme,
      int schemeVersion,
      long[] schemeParams,
      int laneCount,
      int laneSize,
      long chunkSize,
      Supplier<? extends Persistence> persistence,
      String backend,
      long backendAllocation,
      boolean growAhead) {
    this.durability = durability;
    this.initialSize = initialSize;
    this.maxSize = maxSize;
    this.scheme = scheme;
    this.schemeVersion = schemeVersion;
    this.schemeParams = schemeParams;
    this.laneCount = laneCount;
    this.laneSize = laneSize;
    this.chunkSize = chunkSize;
    this.persistence = persistence;
    this.backend = backend;
    this.backendAllocation = backendAllocation;
    this.growAhead = growAhead;
  }

  /**
   * The defaults: {@link Durability#AUTO}, {@value #DEFAULT_INITIAL_SIZE} bytes, no size limit,
   * no scheme.
   *
   * @return the default options
   */
  public static PoolOptions defaults() {
    return DEFAULTS;
  }

  private PoolOptions copy(
      Durability d,
      long initial,
      long max,
      String s,
      int sv,
      long[] sp,
      int lanes,
      int laneBytes,
      long chunk,
      Supplier<? extends Persistence> p) {
    return new PoolOptions(d, initial, max, s, sv, sp, lanes, laneBytes, chunk, p, backend, backendAllocation, growAhead);
  }

  /**
   * @param mode the durability mode; {@link Durability#AUTO} picks one at open
   * @return a copy with this mode
   */
  public PoolOptions withDurability(Durability mode) {
    Objects.requireNonNull(mode, "durability");
    return copy(mode, initialSize, maxSize, scheme, schemeVersion, schemeParams, laneCount,
        laneSize, chunkSize, persistence);
  }

  /**
   * @param bytes the size a new pool file starts with; rounded up to whole chunks, at least
   *     the header, the lanes and one chunk
   * @return a copy with this initial size
   */
  public PoolOptions withInitialSize(long bytes) {
    if (bytes <= 0) {
      throw new IllegalArgumentException("initial size must be positive, got " + bytes);
    }
    return copy(durability, bytes, maxSize, scheme, schemeVersion, schemeParams, laneCount,
        laneSize, chunkSize, persistence);
  }

  /**
   * @param bytes the largest the pool may grow to; past it allocation throws {@link
   *     PoolFullException}. {@link Long#MAX_VALUE} (the default) means the file system's limit.
   * @return a copy with this maximum size
   */
  public PoolOptions withMaxSize(long bytes) {
    if (bytes <= 0) {
      throw new IllegalArgumentException("max size must be positive, got " + bytes);
    }
    return copy(durability, initialSize, bytes, scheme, schemeVersion, schemeParams, laneCount,
        laneSize, chunkSize, persistence);
  }

  /**
   * Names the scheme a new pool holds (recorded in the header) or, for open, the scheme the pool
   * must hold.
   *
   * @param name 1 to 16 printable ASCII characters, e.g. {@code "dash-eh"}
   * @param version the scheme's own layout version, recorded and checked on open
   * @param params up to {@value #MAX_SCHEME_PARAMS} layout parameters, recorded in the header
   * @return a copy naming this scheme
   */
  public PoolOptions withScheme(String name, int version, long... params) {
    checkSchemeName(name);
    if (params.length > MAX_SCHEME_PARAMS) {
      throw new IllegalArgumentException(
          "a header records at most " + MAX_SCHEME_PARAMS + " scheme parameters, got "
              + params.length);
    }
    return copy(durability, initialSize, maxSize, name, version, params.clone(), laneCount,
        laneSize, chunkSize, persistence);
  }

  /**
   * Allocator and log geometry of a new pool; the defaults suit every scheme, change them only
   * for tests or very small pools.
   *
   * @param lanes concurrent logged operations, 1 to 1024
   * @param laneBytes bytes per lane, a multiple of 64 from 512 to 1 MiB
   * @param chunkBytes allocator chunk, a power of two from 64 KiB to 64 MiB
   * @return a copy with this geometry
   */
  public PoolOptions withGeometry(int lanes, int laneBytes, long chunkBytes) {
    if (lanes < 1 || lanes > 1024) {
      throw new IllegalArgumentException("lane count must be 1..1024, got " + lanes);
    }
    if (laneBytes < 512 || laneBytes > (1 << 20) || laneBytes % 64 != 0) {
      throw new IllegalArgumentException(
          "lane size must be a multiple of 64 from 512 to 1 MiB, got " + laneBytes);
    }
    if (chunkBytes < (64 << 10) || chunkBytes > (64L << 20) || Long.bitCount(chunkBytes) != 1) {
      throw new IllegalArgumentException(
          "chunk size must be a power of two from 64 KiB to 64 MiB, got " + chunkBytes);
    }
    return copy(durability, initialSize, maxSize, scheme, schemeVersion, schemeParams, lanes,
        laneBytes, chunkBytes, persistence);
  }

  /**
   * Replaces the persistence the durability mode would choose, for the crash simulator and for
   * tests. The file is then mapped as for {@link Durability#PROCESS}.
   *
   * @param factory makes the pool's persistence; called once per open
   * @return a copy that uses it
   */
  public PoolOptions withPersistence(Supplier<? extends Persistence> factory) {
    Objects.requireNonNull(factory, "persistence factory");
    return copy(durability, initialSize, maxSize, scheme, schemeVersion, schemeParams, laneCount,
        laneSize, chunkSize, factory);
  }

  /**
   * Chooses the pool backend. A new pool is created with it ({@link #BACKEND_FFM} when none is
   * chosen) and records it in its file; an open finds the backend in the file, and refuses with
   * a {@link BackendMismatchException} when one was chosen here and the file holds another.
   *
   * @param name {@link #BACKEND_FFM} or {@link #BACKEND_LLPL}
   * @return a copy that uses it
   * @throws IllegalArgumentException if the name is neither
   */
  public PoolOptions withBackend(String name) {
    Objects.requireNonNull(name, "backend name");
    if (!name.equals(BACKEND_FFM) && !name.equals(BACKEND_LLPL)) {
      throw new IllegalArgumentException("unknown pool backend '" + name + "': use '" + BACKEND_FFM
          + "' (a file mapped through the FFM API, the default) or '" + BACKEND_LLPL + "' (a PMDK pool through llpl)");
    }
    return new PoolOptions(durability, initialSize, maxSize, scheme, schemeVersion, schemeParams,
        laneCount, laneSize, chunkSize, persistence, name, backendAllocation, growAhead);
  }

  /**
   * Room for a backend's own allocator ({@link io.pmhash.core.spi.PoolBackend.Region#allocation()}),
   * beside the pool, when the backend has one: on the llpl backend, bytes of the PMDK pool outside
   * the pmhash pool's block, where PMDK allocates the blocks of every scheme ({@code
   * docs/llpl.md}). {@link io.pmhash.map.PmHash} sets it for those schemes; FFM pools ignore it.
   *
   * @param bytes the room, 0 (the default) for none beyond the backend's fixed overhead
   * @return a copy with this room
   */
  public PoolOptions withBackendAllocation(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("backend allocation room must not be negative, got " + bytes);
    }
    return new PoolOptions(durability, initialSize, maxSize, scheme, schemeVersion, schemeParams,
        laneCount, laneSize, chunkSize, persistence, backend, bytes, growAhead);
  }

  /**
   * Whether a pool file's next growth step is written in the background before the pool needs
   * it. A growth extends the file with zeros, a quarter of the pool's size ({@code fallocate}, so
   * that a full file system is reported then, as {@link PoolFullException}, and not as a fault on a
   * later store; zeros written where the file system has no {@code fallocate}): on tmpfs about
   * 15 ms at 200 MB and 55 ms at 1 GB (the kernel clears the pages), all of it inside the one
   * operation that needed the room; on ext4 well under a millisecond. With this on (the
   * default), once the heap is within half a step of the pool's end a daemon thread extends the
   * file by the step, and the growth finds it done and takes only the mapping. The cost: from then
   * until that growth the file is one step (a quarter) longer than the pool, and a reopen in
   * between maps the whole file. Off, every growth extends the file in the thread that needs it,
   * and the file is never longer than the pool. Ignored by pools without a file of their own
   * ({@link Durability#VOLATILE}, the llpl backend). The default is on unless the system property
   * {@code pmhash.pool.growAhead} is {@code false}.
   *
   * @param on whether to extend ahead
   * @return a copy with this setting
   */
  public PoolOptions withGrowAhead(boolean on) {
    return new PoolOptions(durability, initialSize, maxSize, scheme, schemeVersion, schemeParams,
        laneCount, laneSize, chunkSize, persistence, backend, backendAllocation, on);
  }

  /** @return whether a growing pool file is extended ahead in the background ({@link #withGrowAhead}) */
  public boolean growAhead() {
    return growAhead;
  }

  /** @return the room for the backend's own allocator ({@link #withBackendAllocation}) */
  public long backendAllocation() {
    return backendAllocation;
  }

  /** @return the backend chosen with {@link #withBackend}, or null when none was (FFM at create, the file's at open) */
  public String backend() {
    return backend;
  }

  static void checkSchemeName(String name) {
    Objects.requireNonNull(name, "scheme name");
    if (name.isEmpty() || name.length() > 16 || !name.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
      throw new IllegalArgumentException(
          "a scheme name is 1 to 16 printable ASCII characters without spaces, got '" + name + "'");
    }
  }

  /** @return the durability mode asked for */
  public Durability durability() {
    return durability;
  }

  /** @return the initial size of a new pool */
  public long initialSize() {
    return initialSize;
  }

  /** @return the maximum size the pool may grow to */
  public long maxSize() {
    return maxSize;
  }

  /** @return the scheme name, or null when none was given */
  public String scheme() {
    return scheme;
  }

  /** @return the scheme's layout version */
  public int schemeVersion() {
    return schemeVersion;
  }

  /** @return a copy of the scheme parameters */
  public long[] schemeParams() {
    return schemeParams.clone();
  }

  /** @return the lane count of a new pool */
  public int laneCount() {
    return laneCount;
  }

  /** @return bytes per lane of a new pool */
  public int laneSize() {
    return laneSize;
  }

  /** @return the allocator chunk size of a new pool */
  public long chunkSize() {
    return chunkSize;
  }

  /** @return the persistence factory that replaces the durability mode's, or null */
  public Supplier<? extends Persistence> persistenceFactory() {
    return persistence;
  }

  @Override
  public String toString() {
    return "PoolOptions[durability=" + durability + ", initialSize=" + initialSize
        + ", maxSize=" + (maxSize == Long.MAX_VALUE ? "unlimited" : maxSize)
        + ", scheme=" + scheme + " v" + schemeVersion + " " + Arrays.toString(schemeParams)
        + ", lanes=" + laneCount + "x" + laneSize + ", chunk=" + chunkSize
        + (persistence != null ? ", custom persistence" : "")
        + (backend != null ? ", backend=" + backend : "")
        + (backendAllocation > 0 ? ", backendAllocation=" + backendAllocation : "")
        + (growAhead ? "" : ", growAhead=false") + "]";
  }
}
