package io.pmhash.jmh;

import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The JVM's own concurrent map, {@code ConcurrentHashMap<Long, Long>}, on {@link MapBenchmark}'s
 * operations and keys: what a JVM user gets on the heap with no persistence at all (every key
 * and value boxed, every entry a node). The upper bound a persistent table is compared with.
 *
 * <p>Run (after {@code ./pmhash mvn -pl pmhash-jmh -am package -DskipTests}):
 *
 * <pre>
 *   java -jar pmhash-jmh/target/benchmarks.jar ConcurrentHashMapBenchmark -f 1 -wi 1 -i 2 -r 2s
 * </pre>
 */
public class ConcurrentHashMapBenchmark extends MapBenchmark {
  /** JMH creates the state. */
  public ConcurrentHashMapBenchmark() {}

  @Override
  Store open(Path dir) {
    ConcurrentHashMap<Long, Long> map = new ConcurrentHashMap<>();
    return new MapStore(map, "java.util.concurrent.ConcurrentHashMap<Long, Long> on the heap, not persistent", map::clear);
  }
}
