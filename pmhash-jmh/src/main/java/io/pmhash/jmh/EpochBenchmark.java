package io.pmhash.jmh;

import io.pmhash.core.concurrent.EpochReclaimer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a lock-free reader pays for epoch-based reclamation: one {@link EpochReclaimer#enter()}
 * and {@link EpochReclaimer#exit()} around each operation of every scheme.
 *
 * <p>Run: {@code java -jar pmhash-jmh/target/benchmarks.jar EpochBenchmark}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class EpochBenchmark {
  private final EpochReclaimer epochs = new EpochReclaimer();

  /** Enter and exit a critical section. */
  @Benchmark
  public void enterExit() {
    epochs.enter();
    epochs.exit();
  }
}
