package io.pmhash.jmh;

import io.pmhash.core.Durability;
import io.pmhash.jmh.workload.Keys;
import io.pmhash.map.Codec;
import io.pmhash.map.PmHash;
import io.pmhash.map.PmHashMap;
import io.pmhash.map.TableOptions;
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
 * The cost of opening a cleanly closed pool that holds {@code records} records, on the FFM and on
 * the llpl backend (issue 7). On llpl the open runs PMDK's {@code pmemobj_open} and then {@code
 * PmdkAllocation.recover}, which walks every PMDK object ({@code pmemobj_first}/{@code
 * pmemobj_next}) to build the index of pmhash's blocks (docs/llpl.md, Allocation 4): O(objects),
 * where an FFM open reads the header and the scheme's checks only. {@code pointer} is Dash-EH's
 * pointer mode ({@code PmHashMap<byte[], byte[]>}, 16-byte keys), where every record is its own
 * PMDK object, so the walk visits {@code records} objects more; {@code dash-eh} (inline 8-byte
 * keys) and {@code level} hold only a few large blocks. The measured call is the open (the
 * scheme's open-time checks included); the close after it is not measured.
 *
 * <p>Run (after {@code ./pmhash mvn -pl pmhash-jmh -am package -DskipTests}):
 *
 * <pre>
 *   java -Dpmhash.jmh.dir=/dev/shm -jar pmhash-jmh/target/benchmarks.jar OpenBenchmark \
 *        -p backend=ffm,llpl -p table=pointer,dash-eh -p records=100000,1000000
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class OpenBenchmark {
  /** {@code pointer} (Dash-EH pointer mode, a PMDK object per record on llpl) or a scheme name (inline keys). */
  @Param({"pointer", "dash-eh", "level"})
  public String table;

  /** The pool backend: {@code ffm} or {@code llpl}. */
  @Param({"ffm", "llpl"})
  public String backend;

  /** Records in the pool. */
  @Param({"100000", "1000000"})
  public int records;

  /** The pool's initial size in bytes (0: the default; an llpl pool, which cannot grow, gets 1 GiB). */
  @Param({"0"})
  public long initialSize;

  private Path dir;
  private Path file;
  private AutoCloseable open;

  /** JMH creates the state. */
  public OpenBenchmark() {}

  private boolean pointer() {
    return table.equals("pointer");
  }

  private TableOptions options() {
    return TableBenchmark.options(pointer() ? "dash-eh" : table, Durability.PMEM_EMULATED, backend, initialSize);
  }

  /**
   * Creates the pool with its records and closes it cleanly (not measured).
   *
   * @throws Exception if it cannot be created
   */
  @Setup(Level.Trial)
  public void create() throws Exception {
    Path parent = TableBenchmark.poolDirectory();
    dir = Files.createTempDirectory(parent, "pmhash-jmh-open-");
    file = dir.resolve(table + ".pool");
    if (pointer()) {
      try (PmHashMap<byte[], byte[]> m = PmHash.createMap(file, Codec.bytes(), Codec.bytes(), options())) {
        for (long i = 0; i < records; i++) {
          m.put(Keys.widen(Keys.key(MapBenchmark.SEED, i), 16), Keys.widen(i, 8));
        }
      }
    } else {
      try (var t = PmHash.create(file, options())) {
        for (long i = 0; i < records; i++) {
          t.put(Keys.key(MapBenchmark.SEED, i), i);
        }
      }
    }
    System.out.println("\n# " + table + " on " + backend + ", " + records + " records in " + file + " ("
        + Files.getFileStore(dir).type() + ", " + Files.size(file) + " bytes)");
  }

  /**
   * Opens the pool: the measured call.
   *
   * @return the size of the opened table
   * @throws IllegalStateException if it is not {@code records}
   * @throws Exception if the pool cannot be opened
   */
  @Benchmark
  public long open() throws Exception {
    TableOptions any = TableOptions.any().withDurability(Durability.PMEM_EMULATED);
    long size;
    if (pointer()) {
      PmHashMap<byte[], byte[]> m = PmHash.openMap(file, Codec.bytes(), Codec.bytes(), any);
      open = m;
      size = m.size();
    } else {
      var t = PmHash.open(file, any);
      open = t;
      size = t.size();
    }
    if (size != records) {
      throw new IllegalStateException("the reopened pool holds " + size + " records, expected " + records);
    }
    return size;
  }

  /**
   * Closes what the invocation opened (not measured).
   *
   * @throws Exception if it cannot be closed
   */
  @TearDown(Level.Invocation)
  public void closeOpened() throws Exception {
    if (open != null) {
      open.close();
      open = null;
    }
  }

  /**
   * Deletes the pool.
   *
   * @throws Exception if it cannot be deleted
   */
  @TearDown(Level.Trial)
  public void delete() throws Exception {
    MapBenchmark.deleteTree(dir);
  }
}
