package io.pmhash.jmh;

import io.pmhash.core.Durability;
import io.pmhash.core.DurabilityUnsupportedException;
import io.pmhash.core.PoolOptions;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.nio.file.Path;
import org.openjdk.jmh.annotations.Param;

/**
 * Every pmhash scheme in every durability mode, on {@link MapBenchmark}'s operations and keys.
 * The {@code scheme} parameter lists the schemes of this repository; {@link AllSchemes} runs
 * every scheme {@link PmHash#schemes()} finds (those added later included). {@code durability}
 * {@code PMEM} needs a DAX file system in {@code -Dpmhash.jmh.dir}: elsewhere its trials fail at
 * setup with a message saying so, and JMH goes on with the next.
 *
 * <p>Run (after {@code ./pmhash mvn -pl pmhash-jmh -am package -DskipTests}):
 *
 * <pre>
 *   java -Dpmhash.jmh.dir=/dev/shm -cp pmhash-jmh/target/benchmarks.jar io.pmhash.jmh.AllSchemes TableBenchmark
 *   java -jar pmhash-jmh/target/benchmarks.jar TableBenchmark -p scheme=dash-eh -p durability=PMEM_EMULATED \
 *        -p keys=uniform -f 1 -wi 1 -i 2 -r 2s -rf json -rff table.json      # one scheme, one mode
 *   java -jar pmhash-jmh/target/benchmarks.jar 'TableBenchmark.mixed' -t 2 -p scheme=dash-eh  # 2 threads
 *   java -Dpmhash.jmh.dir=/mnt/pmem -jar pmhash-jmh/target/benchmarks.jar TableBenchmark -p durability=PMEM
 * </pre>
 */
public class TableBenchmark extends MapBenchmark {
  /** The scheme (its provider name); {@link AllSchemes} fills in every registered one. */
  @Param({"dash-eh", "cceh", "level"})
  public String scheme;

  /** The durability mode of the pool: PMEM where the machine has it, see the class comment. */
  @Param({"PMEM_EMULATED", "PROCESS", "VOLATILE", "PMEM"})
  public String durability;

  /**
   * The pool backend: {@code ffm} (a file mapped through the FFM API) or {@code llpl} (a PMDK
   * pool; needs libpmemobj1, see {@code docs/llpl.md}). The FFM/llpl comparison of issue 7:
   * {@code -p scheme=dash-eh -p backend=ffm,llpl -p initialSize=1073741824}.
   */
  @Param({"ffm"})
  public String backend;

  /** The pool's initial size in bytes (0: the default; an llpl pool, which cannot grow, gets 1 GiB). */
  @Param({"0"})
  public long initialSize;

  /** JMH creates the state. */
  public TableBenchmark() {}

  @Override
  Store open(Path dir) throws Exception {
    if (!PmHash.schemes().containsKey(scheme)) {
      throw new IllegalArgumentException("scheme '" + scheme + "' is not in this build; available: " + PmHash.schemes().keySet());
    }
    Durability mode = Durability.valueOf(durability);
    TableOptions options = options(scheme, mode, backend, initialSize);
    LongHashTable table;
    try {
      table = mode == Durability.VOLATILE
          ? PmHash.createVolatile(options)
          : PmHash.create(dir.resolve(scheme + ".pool"), options);
    } catch (DurabilityUnsupportedException e) {
      throw new IllegalStateException("SKIPPED: durability " + mode + " is not available in " + dir
          + " (" + e.getMessage() + "). Point -Dpmhash.jmh.dir at a DAX mount to measure it.", e);
    }
    return new TableStore(table);
  }

  /**
   * Where the benchmarks that make pool files of their own make them: {@code -Dpmhash.jmh.dir},
   * else {@code java.io.tmpdir} (tmpfs or disk decides what a growth or an open costs).
   */
  static Path poolDirectory() {
    return Path.of(System.getProperty("pmhash.jmh.dir", System.getProperty("java.io.tmpdir")));
  }

  /**
   * The options of a benchmark's pool: the scheme, mode and backend, and the initial size (0: the
   * default, except on llpl, whose pool cannot grow: 1 GiB there).
   */
  static TableOptions options(String scheme, Durability mode, String backend, long initialSize) {
    PoolOptions pool = PoolOptions.defaults().withDurability(mode).withBackend(backend);
    long size = initialSize == 0 && backend.equals(PoolOptions.BACKEND_LLPL) ? 1L << 30 : initialSize;
    return TableOptions.scheme(scheme).withDurability(mode).withPoolOptions(size == 0 ? pool : pool.withInitialSize(size));
  }

  /** A pmhash table as a {@link Store}. */
  record TableStore(LongHashTable table) implements Store {
    @Override
    public long get(long key, long absent) {
      return table.get(key, absent);
    }

    @Override
    public void put(long key, long value) {
      table.put(key, value);
    }

    @Override
    public void remove(long key) {
      table.remove(key);
    }

    @Override
    public long size() {
      return table.size();
    }

    @Override
    public String describe() {
      return "pmhash " + table.scheme() + ", durability " + table.pool().durability()
          + ", persistence " + table.pool().persistence().describe()
          + (table.pool().path() == null ? ", anonymous memory" : ", pool " + table.pool().path());
    }

    @Override
    public void close() {
      table.close();
    }
  }
}
