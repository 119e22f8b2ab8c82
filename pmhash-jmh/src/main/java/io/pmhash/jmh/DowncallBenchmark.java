package io.pmhash.jmh;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
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
 * One FFM downcall, the way every native flush and drain is made: a call of libc's {@code labs}
 * bound with {@code Linker.Option.critical(false)}, as the flush shim's entry points are
 * ({@code downcallCritical}), and the same without the option ({@code downcall}, with the
 * thread-state transition). A trivial C function, so the number is the transition itself. With
 * {@link PersistenceBenchmark} (one flush, one drain, one persist point), {@link
 * HashingBenchmark} (the hash) and {@link ProbeBenchmark} (one bucket probe) it explains where a
 * {@link TableBenchmark} operation's time goes.
 *
 * <p>Run (after {@code ./pmhash mvn -pl pmhash-jmh -am package -DskipTests}):
 *
 * <pre>
 *   java -jar pmhash-jmh/target/benchmarks.jar DowncallBenchmark -f 1 -wi 1 -i 2 -r 1s
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@SuppressWarnings("restricted") // binding libc's labs is the point: the downcall cost
public class DowncallBenchmark {
  private static final MethodHandle LABS_CRITICAL;
  private static final MethodHandle LABS;

  static {
    Linker linker = Linker.nativeLinker();
    var labs = linker.defaultLookup().find("labs").orElseThrow(() -> new IllegalStateException("libc's labs not found by the default lookup"));
    FunctionDescriptor d = FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG);
    LABS_CRITICAL = linker.downcallHandle(labs, d, Linker.Option.critical(false));
    LABS = linker.downcallHandle(labs, d);
  }

  private long arg = -1;

  /** JMH creates the state. */
  public DowncallBenchmark() {}

  /**
   * One critical downcall.
   *
   * @return what it returned
   * @throws Throwable never in practice: {@code labs} cannot fail
   */
  @Benchmark
  public long downcallCritical() throws Throwable {
    return (long) LABS_CRITICAL.invokeExact(arg);
  }

  /**
   * One ordinary downcall (with the thread-state transition).
   *
   * @return what it returned
   * @throws Throwable never in practice: {@code labs} cannot fail
   */
  @Benchmark
  public long downcall() throws Throwable {
    return (long) LABS.invokeExact(arg);
  }
}
