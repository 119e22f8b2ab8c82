package io.pmhash.jmh;

import io.pmhash.core.hash.Hashing;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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
 * The cost of {@link Hashing}: the 8-byte hot path {@link Hashing#hash(long)}, and the
 * variable-length form over keys in native memory, as pointer mode hashes them. Keys
 * are random, precomputed in setup, and cycled through a power-of-two table so that
 * the index arithmetic is a mask. No pool and no persistence backend are involved: the
 * keys live in a plain native segment.
 *
 * <p>Run (from the repository root, after {@code ./pmhash test} or
 * {@code ./pmhash mvn -pl pmhash-jmh -am package}):
 *
 * <pre>
 *   java -jar pmhash-jmh/target/benchmarks.jar HashingBenchmark
 *   java -jar pmhash-jmh/target/benchmarks.jar HashingBenchmark -f 1 -wi 1 -i 1 -w 1s -r 1s   # smoke run
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class HashingBenchmark {

  /** Number of distinct precomputed keys; a power of two. */
  @Param({"4096"})
  public int keyCount;

  /** Length in bytes of each variable-length key. */
  @Param({"16"})
  public int keyLength;

  private long[] keys;
  private Arena arena;
  private MemorySegment keyBytes;
  private int mask;
  private int next;

  /** Creates the benchmark state; JMH calls this. */
  public HashingBenchmark() {}

  /** Generates the keys (seeded, so every run hashes the same ones). */
  @Setup(Level.Trial)
  public void setUp() {
    if (Integer.bitCount(keyCount) != 1) {
      throw new IllegalArgumentException("keyCount must be a power of two: " + keyCount);
    }
    SplittableRandom random = new SplittableRandom(0x5eedL);
    keys = new long[keyCount];
    for (int i = 0; i < keyCount; i++) {
      keys[i] = random.nextLong();
    }
    arena = Arena.ofShared();
    keyBytes = arena.allocate((long) keyCount * keyLength, 8);
    for (long i = 0; i < keyBytes.byteSize(); i++) {
      keyBytes.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
    }
    mask = keyCount - 1;
    System.out.println(
        "# pmhash: keys in a native segment, no pool, no persistence backend; "
            + keyCount
            + " keys");
  }

  /** Releases the native keys. */
  @TearDown(Level.Trial)
  public void tearDown() {
    arena.close();
  }

  /**
   * One 8-byte key, default seed: the path every scheme's get and put takes.
   *
   * @return the hash, consumed by JMH
   */
  @Benchmark
  public long hashLong() {
    return Hashing.hash(keys[next++ & mask]);
  }

  /**
   * One {@code keyLength}-byte key read from native memory, default seed.
   *
   * @return the hash, consumed by JMH
   */
  @Benchmark
  public long hashSegment() {
    long offset = (long) (next++ & mask) * keyLength;
    return Hashing.hash(keyBytes, offset, keyLength, Hashing.DEFAULT_SEED);
  }
}
