package io.pmhash.jmh;

import io.pmhash.core.Durability;
import io.pmhash.core.PoolOptions;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * Dash-EH on the Dash benchmark's workload (Dash §6.2, one thread): a table preloaded with
 * {@code preload} random keys, then 5M inserts of new keys, positive searches,
 * negative searches, or deletes. Each measured call runs all 5M operations over keys
 * precomputed in setup; a fresh pool file is created for every iteration (in {@code
 * -Dpmhash.jmh.dir}, default the temp directory: use tmpfs for the paper's setting). The
 * result is time per operation: Mops/s = 1 / (µs/op).
 *
 * <p>Run (from the repository root, after {@code ./pmhash mvn -pl pmhash-jmh -am package}):
 *
 * <pre>
 *   java -Dpmhash.jmh.dir=/dev/shm -jar pmhash-jmh/target/benchmarks.jar DashEhBenchmark
 *   java -jar pmhash-jmh/target/benchmarks.jar DashEhBenchmark -p preload=100000 -f 1 -wi 1 -i 1   # smoke run
 * </pre>
 *
 * The setup prints where the pool lives and which persistence backend ran.
 *
 * <p>The FFM and llpl pool backends, the same table ({@code docs/llpl.md}; needs PMDK's
 * libpmemobj1 and libpmempool1):
 *
 * <pre>
 *   java -Dpmhash.jmh.dir=/dev/shm -jar pmhash-jmh/target/benchmarks.jar 'DashEhBenchmark.(insert|positiveSearch)' -p backend=ffm,llpl -p initialSize=1073741824
 * </pre>
 *
 * An llpl pool cannot grow, so it is created with room for the preload and the 5M inserts; give
 * the FFM pool the same {@code initialSize} for a comparison, so that neither grows while measured.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 5)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class DashEhBenchmark {
  /** Keys loaded before the measured phase. */
  @Param({"1000000"})
  public int preload;

  /** Operations in the measured phase (the paper's 5M; JMH divides each call's time by it). */
  static final int OPS = 5_000_000;

  /** The durability mode of the pool. */
  @Param({"PMEM_EMULATED"})
  public String durability;

  /** Stash buckets per segment. */
  @Param({"2"})
  public int stashBuckets;

  /** The pool backend: {@code ffm} (a file mapped through the FFM API) or {@code llpl} (a PMDK pool). */
  @Param({"ffm"})
  public String backend;

  /**
   * The pool's initial size in bytes; 0: the default (64 MiB, growing) for FFM, and 1 GiB for
   * llpl, whose size is fixed.
   */
  @Param({"0"})
  public long initialSize;

  private long[] loaded;
  private long[] fresh;
  private Path file;
  private LongHashTable table;

  /** JMH creates the state. */
  public DashEhBenchmark() {}

  /** Precomputes the keys: {@code loaded} go in before measuring, {@code fresh} never do unless inserted. */
  @Setup(Level.Trial)
  public void keys() {
    SplittableRandom r = new SplittableRandom(0xDA5L);
    loaded = new long[Math.max(preload, 1)];
    for (int i = 0; i < loaded.length; i++) {
      loaded[i] = r.nextLong();
    }
    fresh = new long[OPS];
    for (int i = 0; i < OPS; i++) {
      fresh[i] = r.nextLong();
    }
  }

  /**
   * A fresh pool and table for each iteration, preloaded (for delete, the keys to delete are
   * loaded too).
   *
   * @param params which benchmark runs
   * @throws IOException if the pool cannot be created
   */
  @Setup(Level.Iteration)
  public void table(BenchmarkParams params) throws IOException {
    Path dir = Path.of(System.getProperty("pmhash.jmh.dir", System.getProperty("java.io.tmpdir")));
    file = Files.createTempFile(dir, "dash-eh-bench", ".pool");
    Files.delete(file);
    TableOptions o = TableOptions.scheme("dash-eh").withParam("stashBuckets", stashBuckets)
        .withPoolOptions(pool());
    table = PmHash.create(file, o);
    for (int i = 0; i < preload; i++) {
      table.put(loaded[i], i);
    }
    if (params.getBenchmark().endsWith("delete")) {
      for (long k : fresh) {
        table.put(k, k);
      }
    }
    System.out.println("\n  pool " + file + " (backend " + backend + "), persistence " + table.pool().persistence().describe());
  }

  private PoolOptions pool() {
    PoolOptions p = PoolOptions.defaults().withDurability(Durability.valueOf(durability)).withBackend(backend);
    long size = initialSize == 0 && backend.equals(PoolOptions.BACKEND_LLPL) ? 1L << 30 : initialSize;
    return size == 0 ? p : p.withInitialSize(size);
  }

  /** Closes and deletes the pool. @throws IOException if it cannot be deleted */
  @TearDown(Level.Iteration)
  public void close() throws IOException {
    table.close();
    Files.deleteIfExists(file);
  }

  /** Inserts 5M new keys. @return a checksum */
  @Benchmark
  @OperationsPerInvocation(OPS)
  public long insert() {
    LongHashTable t = table;
    long[] k = fresh;
    long n = 0;
    for (int i = 0; i < k.length; i++) {
      n += t.put(k[i], i) ? 1 : 0;
    }
    return n;
  }

  /** Searches 5M present keys. @param bh sink */
  @Benchmark
  @OperationsPerInvocation(OPS)
  public void positiveSearch(Blackhole bh) {
    LongHashTable t = table;
    long[] k = loaded;
    int j = 0;
    for (int i = 0; i < OPS; i++) {
      bh.consume(t.get(k[j], -1));
      if (++j == k.length) {
        j = 0;
      }
    }
  }

  /** Searches 5M absent keys. @param bh sink */
  @Benchmark
  @OperationsPerInvocation(OPS)
  public void negativeSearch(Blackhole bh) {
    LongHashTable t = table;
    long[] k = fresh;
    for (int i = 0; i < k.length; i++) {
      bh.consume(t.get(k[i], -1));
    }
  }

  /** Deletes 5M present keys. @return a checksum */
  @Benchmark
  @OperationsPerInvocation(OPS)
  public long delete() {
    LongHashTable t = table;
    long[] k = fresh;
    long n = 0;
    for (int i = 0; i < k.length; i++) {
      n += t.remove(k[i]) ? 1 : 0;
    }
    return n;
  }
}
