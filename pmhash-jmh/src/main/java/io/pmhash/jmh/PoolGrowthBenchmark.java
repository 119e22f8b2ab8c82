package io.pmhash.jmh;

import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import java.io.IOException;
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
 * What one growth of a pool file costs the thread that needs the room: {@link Pool#ensureSize} one
 * byte past a pool of {@code sizeMiB}, which extends the file by a quarter ({@code fallocate} where
 * the file system has it, else zeros written), maps it anew and persists the new size. Growing
 * ahead is off ({@link PoolOptions#withGrowAhead}), so the extension is in the measured call: this
 * is the pause that growing ahead takes off an operation (docs/persistence.md, "Growth written
 * ahead, with fallocate"). Each invocation gets a new pool; creating and deleting it is not
 * measured.
 *
 * <p>Run (after {@code ./pmhash mvn -pl pmhash-jmh -am package -DskipTests}); the pool lives in
 * {@code -Dpmhash.jmh.dir} (default {@code java.io.tmpdir}), whose file system decides the cost
 * (the benchmark prints which):
 *
 * <pre>
 *   java -Dpmhash.jmh.dir=/dev/shm -jar pmhash-jmh/target/benchmarks.jar PoolGrowthBenchmark
 *   java -jar pmhash-jmh/target/benchmarks.jar PoolGrowthBenchmark -p sizeMiB=256
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3)
@Measurement(iterations = 10)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class PoolGrowthBenchmark {
  /** The pool's size before the growth, MiB; the growth adds a quarter. */
  @Param({"64", "256", "768"})
  public long sizeMiB;

  private Path dir;
  private Path file;
  private Pool pool;

  /** JMH creates the state. */
  public PoolGrowthBenchmark() {}

  /** Makes the directory of the trial's pools; JMH calls this. */
  @Setup(Level.Trial)
  public void makeDirectory() throws IOException {
    Path parent = TableBenchmark.poolDirectory();
    dir = Files.createTempDirectory(parent, "pmhash-jmh-growth-");
    file = dir.resolve("grow.pool");
    System.out.println("# pools in " + dir + " on " + Files.getFileStore(dir).type());
  }

  /** A new pool of {@code sizeMiB}; JMH calls this before each invocation. */
  @Setup(Level.Invocation)
  public void createPool() throws IOException {
    pool = Pool.create(file, PoolOptions.defaults().withScheme("bench", 1).withDurability(Durability.PMEM_EMULATED)
        .withInitialSize(sizeMiB << 20).withGrowAhead(false));
  }

  /**
   * One growth.
   *
   * @return the new size, so that the call is not removed
   */
  @Benchmark
  public long grow() {
    pool.ensureSize(pool.size() + 1);
    return pool.size();
  }

  /** Closes and deletes the pool; JMH calls this after each invocation. */
  @TearDown(Level.Invocation)
  public void deletePool() throws IOException {
    pool.close();
    Files.delete(file);
  }

  /** Removes the directory; JMH calls this. */
  @TearDown(Level.Trial)
  public void removeDirectory() throws IOException {
    Files.deleteIfExists(dir);
  }
}
