package io.pmhash.jmh;

import io.pmhash.core.Durability;
import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The floor under every scheme: what one store plus a persist point costs in each durability
 * mode, through the pool's {@link Persistence} seam (with its counters and, for the PMEM modes,
 * one native downcall per flush and per drain). The store keeps each flushed line dirty, as in a
 * real insert; lines rotate over 64 KiB of the heap.
 *
 * <p>Run (after {@code ./pmhash mvn -pl pmhash-jmh -am package -DskipTests}); the pool file is
 * created in {@code java.io.tmpdir} (tmpfs or disk: the benchmark prints which):
 *
 * <pre>
 *   java -jar pmhash-jmh/target/benchmarks.jar PersistenceBenchmark
 *   java -jar pmhash-jmh/target/benchmarks.jar PersistenceBenchmark -p mode=PMEM_EMULATED -f 1 -wi 2 -i 3
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class PersistenceBenchmark {
  /** The durability mode under test. */
  @Param({"PMEM_EMULATED", "PROCESS", "MSYNC"})
  public Durability mode;

  private static final int LINES = 1024;

  private Pool pool;
  private Path file;
  private Persistence persistence;
  private MemorySegment memory;
  private long base;
  private int line;
  private long value;

  /** Creates the pool; JMH calls this. */
  @Setup(Level.Trial)
  public void setUp() throws IOException {
    file = Files.createTempFile("pmhash-persist-bench-", ".pool");
    Files.delete(file);
    pool = Pool.create(file, PoolOptions.defaults().withScheme("bench", 1).withDurability(mode).withInitialSize(4L << 20));
    persistence = pool.persistence();
    memory = pool.memory();
    base = pool.heapOffset();
    System.out.println("# pool " + file + " on " + Files.getFileStore(file).type() + ", " + mode + ": " + persistence.describe());
  }

  /** Closes and deletes the pool; JMH calls this. */
  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    pool.close();
    Files.deleteIfExists(file);
  }

  private long nextLine() {
    line = (line + 1) & (LINES - 1);
    return base + 64L * line;
  }

  /** A store and a persist of its line: the cost of one ordering point. */
  @Benchmark
  public long storeAndPersistOneLine() {
    long at = nextLine();
    memory.set(ValueLayout.JAVA_LONG, at, ++value);
    persistence.persist(at, 8);
    return value;
  }

  /** Four lines stored and flushed, one drain: a bucket's worth of data. */
  @Benchmark
  public long storeAndPersistFourLines() {
    long at = nextLine() & ~255L;
    for (int i = 0; i < 4; i++) {
      memory.set(ValueLayout.JAVA_LONG, at + 64L * i, ++value);
    }
    persistence.persist(at, 256);
    return value;
  }

  /** A store and a flush of its line, no drain: the write-back alone. */
  @Benchmark
  public long storeAndFlushOneLine() {
    long at = nextLine();
    memory.set(ValueLayout.JAVA_LONG, at, ++value);
    persistence.flush(at, 8);
    return value;
  }

  /** A drain with nothing flushed: the fence (and, for the PMEM modes, the downcall) alone. */
  @Benchmark
  public void drainOnly() {
    persistence.drain();
  }

  /** A store with no persist point, for reference. */
  @Benchmark
  public long storeOnly() {
    long at = nextLine();
    memory.set(ValueLayout.JAVA_LONG, at, ++value);
    return value;
  }
}
