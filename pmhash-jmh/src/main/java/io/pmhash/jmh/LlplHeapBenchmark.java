package io.pmhash.jmh;

import java.nio.file.Path;
import org.openjdk.jmh.annotations.Fork;

/**
 * A bare llpl heap table ({@link LlplHeapStore}: what a JVM user would write with Intel's llpl
 * and no pmhash) on {@link MapBenchmark}'s operations and keys: the baseline for pmhash's own
 * llpl backend ({@code TableBenchmark -p backend=llpl}) and for pmhash on a mapped file. Sized at
 * create for the preloaded records plus 64 threads' batches; it does not grow.
 *
 * <p>Needs Debian's {@code libpmemobj1} (docs/llpl.md). On a file system that is not persistent
 * memory (tmpfs, ext4), PMDK's flush is {@code msync}; {@code PMEM_IS_PMEM_FORCE=1} in the
 * launcher's environment (inherited by the fork) makes it {@code clwb}/{@code clflushopt} plus a
 * fence, the instructions of pmhash's {@code PMEM_EMULATED}, which is the comparison that means
 * something. llpl calls {@code sun.misc.Unsafe}: the flag that silences JDK 23+'s warning is in
 * this class's {@code @Fork} only.
 *
 * <p>Run (after {@code ./pmhash mvn -pl pmhash-jmh -am package -DskipTests}):
 *
 * <pre>
 *   PMEM_IS_PMEM_FORCE=1 java -Dpmhash.jmh.dir=/dev/shm -jar pmhash-jmh/target/benchmarks.jar LlplHeapBenchmark -f 1 -wi 1 -i 2 -r 2s
 * </pre>
 */
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class LlplHeapBenchmark extends MapBenchmark {
  /** Threads whose insert batches the table is sized for. */
  static final int MAX_THREADS = 64;

  /** JMH creates the state. */
  public LlplHeapBenchmark() {}

  @Override
  Store open(Path dir) {
    return new LlplHeapStore(dir.resolve("llpl-heap.pool"), (long) records + (long) BATCH * MAX_THREADS);
  }
}
