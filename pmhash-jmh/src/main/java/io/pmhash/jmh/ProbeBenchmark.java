package io.pmhash.jmh;

import io.pmhash.core.Durability;
import io.pmhash.jmh.workload.Keys;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
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
 * One bucket probe of each scheme: a search in a table of 16 records in anonymous memory ({@code
 * VOLATILE}): hash, directory, one bucket (or the scheme's few candidate buckets), all in L1, no
 * persistence; {@code probeHit} for a present key, {@code probeMiss} for an absent one. The
 * scheme's whole read path at its cheapest: the floor under {@link TableBenchmark}'s searches.
 *
 * <p>Run (after {@code ./pmhash mvn -pl pmhash-jmh -am package -DskipTests}):
 *
 * <pre>
 *   java -cp pmhash-jmh/target/benchmarks.jar io.pmhash.jmh.AllSchemes ProbeBenchmark    # every scheme
 *   java -jar pmhash-jmh/target/benchmarks.jar ProbeBenchmark -f 1 -wi 1 -i 2 -r 1s
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class ProbeBenchmark {
  private static final int RECORDS = 16;

  /** The scheme probed ({@link AllSchemes} fills in every registered one). */
  @Param({"dash-eh", "cceh", "level"})
  public String scheme;

  private LongHashTable table;
  private final long[] present = new long[RECORDS];
  private final long[] absent = new long[RECORDS];
  private int next;

  /** JMH creates the state. */
  public ProbeBenchmark() {}

  /** A 16-record table in anonymous memory. */
  @Setup(Level.Trial)
  public void setUp() {
    table = PmHash.createVolatile(TableOptions.scheme(scheme).withDurability(Durability.VOLATILE));
    for (int i = 0; i < RECORDS; i++) {
      present[i] = Keys.key(MapBenchmark.SEED, i);
      absent[i] = Keys.key(MapBenchmark.SEED, MapBenchmark.ABSENT_BASE + i);
      table.put(present[i], i);
    }
    System.out.println("\n# pmhash " + scheme + ", " + RECORDS + " records in anonymous memory, persistence " + table.pool().persistence().describe());
  }

  /** Closes the table. */
  @TearDown(Level.Trial)
  public void tearDown() {
    table.close();
  }

  /** @return the value of a present key */
  @Benchmark
  public long probeHit() {
    return table.get(present[next++ & (RECORDS - 1)], -1);
  }

  /** @return {@code -1}: the key is absent */
  @Benchmark
  public long probeMiss() {
    return table.get(absent[next++ & (RECORDS - 1)], -1);
  }
}
