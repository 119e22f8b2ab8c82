package io.pmhash.jmh;

import io.pmhash.jmh.workload.Keys;
import io.pmhash.jmh.workload.Zipfian;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * The operations of the Dash benchmark (Dash §6.2–6.4) on any {@link Store}: insert, positive
 * search, negative search, delete, update, a mixed 20 % insert / 80 % search workload, and a
 * thread group of one updater beside one reader. Subclasses choose the store (a pmhash scheme in
 * {@link TableBenchmark}, the JVM's alternatives in {@link ConcurrentHashMapBenchmark}, {@link
 * ChronicleMapBenchmark}, {@link MapDbBenchmark}, {@link RocksDbBenchmark}, {@link
 * LlplHeapBenchmark}); every store runs the
 * same methods over the same keys, those of the workload command ({@link Keys}).
 *
 * <h2>What is measured, and why the table size stays put</h2>
 *
 * The store is preloaded with {@code records} keys (indexes {@code 0..records-1}, value = index)
 * once per trial, outside the measured region. Each measured call runs a batch of {@link #BATCH}
 * operations over precomputed keys; the result is throughput in operations per microsecond
 * (Mops/s), summed over threads. Inserts and deletes would change the table under later
 * iterations, so each is undone by a per-invocation teardown that JMH does not time: a batch of
 * inserts puts {@code BATCH} new keys that the teardown removes again; a batch of deletes removes
 * {@code BATCH} loaded keys that the teardown puts back. The table therefore stays within {@code
 * records .. records + BATCH × threads} for the whole run, and every iteration measures the same
 * table. Successive batches use different keys (a window rotating over {@link #WINDOWS} batches
 * per thread), so a batch does not find its keys' buckets warm in the cache. The cost of growth
 * (segment splits, resizes) is therefore <em>not</em> in these numbers; the workload command's
 * insert phase measures inserts into a growing table, as Dash §6.2 does.
 *
 * <p>Searches and updates draw present keys by rank from a precomputed probe sequence: uniform,
 * or Zipfian with YCSB's skew 0.99 ({@code keys=zipfian}; rank r is key {@code Keys.key(seed,
 * r)}, so hot keys are spread over the table). Negative searches use keys never inserted;
 * inserted keys are new by definition, so the key distribution applies to searches, updates and
 * the search part of the mixed workload.
 *
 * <p>At the end of each trial the setup's check runs again: the store must hold exactly {@code
 * records} records (where the store can count them exactly) and every sampled key its value,
 * or the trial fails.
 *
 * <p>Files live in {@code -Dpmhash.jmh.dir} (default the temp directory; {@code /dev/shm} is
 * tmpfs, and DRAM or tmpfs numbers are not persistent-memory numbers). Threads: {@code -t N}
 * for every method except the group, which runs one updater and one reader ({@code -tg 1,1}).
 * Table sizes from 1M to 50M records: {@code -p records=50000000}, with a heap large enough for
 * the precomputed keys and, for {@code ConcurrentHashMap}, the map itself ({@code
 * -jvmArgsAppend -Xmx16g}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public abstract class MapBenchmark {
  /** Operations per measured call. */
  public static final int BATCH = 1 << 14;

  /** Batches of new (or loaded, for delete) keys each thread rotates over. */
  static final int WINDOWS = 64;

  /** Length of each thread's precomputed probe sequence. */
  static final int PROBES = 1 << 20;

  /** The seed of every key set (the workload command's default seed). */
  static final long SEED = 42;

  /** Index of the first new key: far above any preloaded index. */
  static final long FRESH_BASE = 1L << 40;

  /** Index of the first absent key: above every new key. */
  static final long ABSENT_BASE = 1L << 48;

  /** Records preloaded before measuring: 1M by default, up to 50M on a 24 GiB machine. */
  @Param({"1000000"})
  public int records;

  /** How searches and updates pick present keys: {@code uniform} or {@code zipfian}. */
  @Param({"uniform", "zipfian"})
  public String keys;

  Store store;
  private Path dir;

  /** JMH creates the state. */
  protected MapBenchmark() {}

  /**
   * Opens an empty store in a fresh directory.
   *
   * @param dir a new, empty directory for the store's files
   * @return the store
   * @throws Exception if it cannot be opened; the message says why
   */
  abstract Store open(Path dir) throws Exception;

  /**
   * Creates the store and preloads it (not measured).
   *
   * @throws Exception if the store cannot be created
   */
  @Setup(Level.Trial)
  public void load() throws Exception {
    if (records < 2 || records > 1 << 30) {
      throw new IllegalArgumentException("records " + records + " is out of range 2..2^30; the papers use 1M..200M, this machine 1M..50M");
    }
    if (!keys.equals("uniform") && !keys.equals("zipfian")) {
      throw new IllegalArgumentException("keys " + keys + " is not a distribution; use uniform or zipfian");
    }
    Path parent = TableBenchmark.poolDirectory();
    dir = Files.createTempDirectory(parent, "pmhash-jmh-");
    try {
      store = open(dir);
      for (long i = 0; i < records; i++) {
        store.put(Keys.key(SEED, i), i);
      }
      check("after the preload");
    } catch (Exception | Error e) {
      // JMH runs no teardown after a failed setup: leave nothing behind.
      if (store != null) {
        store.close();
      }
      deleteTree(dir);
      throw e;
    }
    System.out.println("\n# " + store.describe() + "; " + records + " records preloaded in " + dir
        + " (" + Files.getFileStore(dir).type() + ")");
  }

  /**
   * Checks the table is back to its preloaded contents, then closes and deletes the store.
   *
   * @throws Exception if the check fails or the store cannot be closed
   */
  @TearDown(Level.Trial)
  public void close() throws Exception {
    try {
      check("at the end of the trial");
    } finally {
      store.close();
      deleteTree(dir);
    }
  }

  private void check(String when) {
    long size = store.size();
    if (size >= 0 && size != records) {
      throw new IllegalStateException("the store holds " + size + " records " + when + ", expected " + records);
    }
    for (long i = 0; i < records; i += Math.max(1, records / 4096)) {
      long v = store.get(Keys.key(SEED, i), -1);
      if (v != i) {
        throw new IllegalStateException("key index " + i + " maps to " + v + " " + when + ", expected " + i);
      }
    }
  }

  /** Each thread's probe sequences: present keys by the chosen distribution, absent keys. */
  @State(Scope.Thread)
  public static class Probes {
    long[] present;
    long[] presentValue;
    long[] absent;
    int next;

    /** JMH creates the state. */
    public Probes() {}

    /**
     * Precomputes this thread's probe keys (not measured).
     *
     * @param params the benchmark's parameters ({@code records}, {@code keys})
     * @param thread which thread this is
     */
    @Setup(Level.Trial)
    public void keys(BenchmarkParams params, ThreadParams thread) {
      int records = Integer.parseInt(params.getParam("records"));
      int t = thread.getThreadIndex();
      present = new long[PROBES];
      presentValue = new long[PROBES];
      absent = new long[PROBES];
      if (params.getParam("keys").equals("zipfian")) {
        Zipfian z = new Zipfian(records, Zipfian.DEFAULT_THETA, SEED + t);
        for (int i = 0; i < PROBES; i++) {
          presentValue[i] = z.next();
        }
      } else {
        SplittableRandom r = new SplittableRandom(SEED + t);
        for (int i = 0; i < PROBES; i++) {
          presentValue[i] = r.nextLong(records);
        }
      }
      for (int i = 0; i < PROBES; i++) {
        present[i] = Keys.key(SEED, presentValue[i]);
      }
      for (int i = 0; i < PROBES; i++) {
        absent[i] = Keys.key(SEED, ABSENT_BASE + (long) t * PROBES + i);
      }
    }

    /** @return the start of the next batch of probes */
    int batch() {
      int from = next;
      next = (from + BATCH) & (PROBES - 1);
      return from;
    }
  }

  /**
   * Each thread's new keys, and the teardown that removes the ones a measured call inserted.
   * Also carries the op pattern of the mixed workload.
   */
  @State(Scope.Thread)
  public static class Inserts {
    long[] fresh;
    boolean[] insertAt;
    int window;
    int inserted;
    Store store;

    /** JMH creates the state. */
    public Inserts() {}

    /**
     * Precomputes this thread's new keys and the mixed workload's pattern (not measured).
     *
     * @param thread which thread this is
     */
    @Setup(Level.Trial)
    public void keys(ThreadParams thread) {
      int t = thread.getThreadIndex();
      fresh = Keys.range(SEED, FRESH_BASE + (long) t * BATCH * WINDOWS, FRESH_BASE + (long) (t + 1) * BATCH * WINDOWS);
      insertAt = new boolean[BATCH];
      SplittableRandom r = new SplittableRandom(SEED ^ t);
      for (int i = 0; i < BATCH; i++) {
        insertAt[i] = r.nextInt(5) == 0; // Dash §6.4: 20 % inserts, 80 % searches
      }
    }

    /** Removes what the measured call inserted and moves to the next window (not measured). */
    @TearDown(Level.Invocation)
    public void undo() {
      for (int i = 0; i < inserted; i++) {
        store.remove(fresh[window + i]);
      }
      inserted = 0;
      window = (window + BATCH) % fresh.length;
    }
  }

  /** Each thread's share of the loaded keys, and the teardown that puts back what was deleted. */
  @State(Scope.Thread)
  public static class Deletes {
    long[] loaded;
    long first;
    int window;
    int deleted;
    Store store;

    /** JMH creates the state. */
    public Deletes() {}

    /**
     * Picks this thread's loaded keys: a disjoint share, so that threads never delete each
     * other's keys (not measured).
     *
     * @param params the benchmark's parameters ({@code records})
     * @param thread which thread this is
     */
    @Setup(Level.Trial)
    public void keys(BenchmarkParams params, ThreadParams thread) {
      long records = Integer.parseInt(params.getParam("records"));
      long share = records / thread.getThreadCount();
      if (share < BATCH) {
        throw new IllegalArgumentException("delete needs at least " + BATCH + " loaded records per thread; records="
            + records + " over " + thread.getThreadCount() + " threads leaves " + share);
      }
      first = share * thread.getThreadIndex();
      int n = (int) Math.min(share / BATCH, WINDOWS) * BATCH;
      loaded = Keys.range(SEED, first, first + n);
    }

    /** Puts back what the measured call deleted, with its value, then moves on (not measured). */
    @TearDown(Level.Invocation)
    public void undo() {
      for (int i = 0; i < deleted; i++) {
        store.put(loaded[window + i], first + window + i);
      }
      deleted = 0;
      window = (window + BATCH) % loaded.length;
    }
  }

  /**
   * Inserts {@code BATCH} new keys into the preloaded table (removed again, unmeasured).
   *
   * @param in this thread's new keys
   */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void insert(Inserts in) {
    Store s = store;
    long[] k = in.fresh;
    int from = in.window;
    in.store = s;
    for (int i = 0; i < BATCH; i++) {
      s.put(k[from + i], i);
    }
    in.inserted = BATCH;
  }

  /**
   * Searches {@code BATCH} present keys.
   *
   * @param p this thread's probes
   * @return the sum of the values found
   */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public long searchPositive(Probes p) {
    return searchBatch(p.present, p.batch());
  }

  /**
   * Searches {@code BATCH} keys that were never inserted.
   *
   * @param p this thread's probes
   * @return the sum of what the searches returned (all {@code -1})
   */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public long searchNegative(Probes p) {
    return searchBatch(p.absent, p.batch());
  }

  private long searchBatch(long[] k, int from) {
    Store s = store;
    long sum = 0;
    for (int i = 0; i < BATCH; i++) {
      sum += s.get(k[from + i], -1);
    }
    return sum;
  }

  /**
   * Deletes {@code BATCH} loaded keys (put back again, unmeasured).
   *
   * @param d this thread's share of the loaded keys
   */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void delete(Deletes d) {
    Store s = store;
    long[] k = d.loaded;
    int from = d.window;
    d.store = s;
    for (int i = 0; i < BATCH; i++) {
      s.remove(k[from + i]);
    }
    d.deleted = BATCH;
  }

  /**
   * Replaces the value of {@code BATCH} present keys. The value written is the one the key
   * already has (its index), so that the end-of-trial check still holds; no store here skips a
   * write of an equal value.
   *
   * @param p this thread's probes
   */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void update(Probes p) {
    updateBatch(p);
  }

  /**
   * Dash §6.4's mixed workload: {@code BATCH} operations, a seeded 20 % of them inserts of new
   * keys (removed again, unmeasured), the rest searches of present keys.
   *
   * @param p this thread's probes
   * @param in this thread's new keys and op pattern
   * @return the sum of the values found
   */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public long mixed(Probes p, Inserts in) {
    Store s = store;
    long[] probe = p.present;
    long[] k = in.fresh;
    boolean[] insertAt = in.insertAt;
    int from = p.batch();
    int next = in.window;
    in.store = s;
    long sum = 0;
    for (int i = 0; i < BATCH; i++) {
      if (insertAt[i]) {
        s.put(k[next++], i);
      } else {
        sum += s.get(probe[from + i], -1);
      }
    }
    in.inserted = next - in.window;
    return sum;
  }

  /**
   * The updater of a thread group: updates present keys while {@link #readWhileUpdateReader}
   * searches them.
   *
   * @param p this thread's probes
   */
  @Benchmark
  @Group("readWhileUpdate")
  @GroupThreads(1)
  @OperationsPerInvocation(BATCH)
  public void readWhileUpdateWriter(Probes p) {
    updateBatch(p);
  }

  /**
   * The reader of a thread group: searches present keys while {@link #readWhileUpdateWriter}
   * updates them.
   *
   * @param p this thread's probes
   * @return the sum of the values found
   */
  @Benchmark
  @Group("readWhileUpdate")
  @GroupThreads(1)
  @OperationsPerInvocation(BATCH)
  public long readWhileUpdateReader(Probes p) {
    return searchPositive(p);
  }

  private void updateBatch(Probes p) {
    Store s = store;
    long[] k = p.present;
    long[] v = p.presentValue;
    int from = p.batch();
    for (int i = 0; i < BATCH; i++) {
      s.put(k[from + i], v[from + i]);
    }
  }

  /**
   * Deletes a directory tree (a helper for stores that keep a directory).
   *
   * @param dir the directory
   * @throws IOException if something cannot be deleted
   */
  static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
