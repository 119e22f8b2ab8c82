package io.pmhash.jmh;

import io.pmhash.core.Durability;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.SplittableRandom;
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
 * Group hashing's recovery time against the table size (the paper's Table 3: 77.8 ms for a 128 MB
 * table, linear in the size): a table of {@code tableMiB} MiB of cells (both levels) filled to
 * load factor 0.5 with random keys, copied while open (what a crash leaves in {@code PROCESS}
 * mode: every store is in the page cache), then opened from a fresh copy of that image in every
 * measured call: pool validation, lane replay and Algorithm 4 (a scan of every cell). The copy is
 * made in setup, outside the measurement.
 *
 * <p>Run (from the repository root, after {@code ./pmhash mvn -pl pmhash-jmh -am package}):
 *
 * <pre>
 *   java -Dpmhash.jmh.dir=/dev/shm -jar pmhash-jmh/target/benchmarks.jar GroupRecoveryBenchmark
 *   java -Dpmhash.jmh.dir=/dev/shm -jar pmhash-jmh/target/benchmarks.jar GroupRecoveryBenchmark -p tableMiB=16 -wi 1 -i 3   # smoke run
 * </pre>
 *
 * The setup prints where the pool lives and which persistence backend ran.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3)
@Measurement(iterations = 10)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class GroupRecoveryBenchmark {
  /** MiB of cells in both levels: N = tableMiB * 2^20 / 32 cells per level. */
  @Param({"16", "64", "128"})
  public int tableMiB;

  private Path image;
  private Path work;
  private LongHashTable opened;

  /** JMH creates the state. */
  public GroupRecoveryBenchmark() {}

  /**
   * Builds the table and takes its crash image.
   *
   * @throws IOException if a pool file cannot be written
   */
  @Setup(Level.Trial)
  public void crashImage() throws IOException {
    Path dir = TableBenchmark.poolDirectory();
    long cells = ((long) tableMiB << 20) / 32;
    Path file = Files.createTempFile(dir, "group-recovery", ".pool");
    Files.delete(file);
    image = file.resolveSibling(file.getFileName() + ".crash");
    work = file.resolveSibling(file.getFileName() + ".open");
    TableOptions o = TableOptions.scheme("group").withDurability(Durability.PROCESS).withInitialCapacity(cells * 3 / 2);
    try (LongHashTable t = PmHash.create(file, o)) {
      SplittableRandom r = new SplittableRandom(0x6A09L);
      for (long i = 0; i < cells; i++) {
        t.put(r.nextLong(), i);
      }
      Files.copy(file, image, StandardCopyOption.REPLACE_EXISTING);
      System.out.println("\n  pool " + file + " (image " + image + "), " + t.stats());
    }
    Files.delete(file);
  }

  /** A fresh copy of the crash image for each call. @throws IOException if it cannot be copied */
  @Setup(Level.Invocation)
  public void copy() throws IOException {
    Files.copy(image, work, StandardCopyOption.REPLACE_EXISTING);
  }

  /** Closes the recovered table (outside the measurement). */
  @TearDown(Level.Invocation)
  public void close() {
    opened.close();
  }

  /** Deletes the image. @throws IOException if it cannot be deleted */
  @TearDown(Level.Trial)
  public void delete() throws IOException {
    Files.deleteIfExists(image);
    Files.deleteIfExists(work);
  }

  /**
   * Opens the crash image: validation and Algorithm 4.
   *
   * @return the records found
   * @throws IOException if the pool cannot be opened
   */
  @Benchmark
  public long recover() throws IOException {
    opened = PmHash.open(work, TableOptions.any().withDurability(Durability.PMEM_EMULATED));
    if (opened.pool().lastShutdownClean()) {
      throw new IllegalStateException("the image was a clean shutdown: nothing was recovered");
    }
    return opened.size();
  }
}
