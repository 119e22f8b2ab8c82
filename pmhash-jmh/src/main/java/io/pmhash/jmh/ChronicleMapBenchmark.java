package io.pmhash.jmh;

import java.io.IOException;
import java.nio.file.Path;
import net.openhft.chronicle.map.ChronicleMap;
import org.openjdk.jmh.annotations.Fork;

/**
 * Chronicle Map, the JVM's off-heap persisted hash map, on {@link MapBenchmark}'s operations and
 * keys: a {@code ChronicleMap<Long, Long>} persisted to a file in {@code -Dpmhash.jmh.dir}, sized
 * for twice the preloaded records (it cannot grow past its configured size without slowing
 * down), used through its {@code Map} API (boxed keys and values, as most users call it).
 * Persisted means memory-mapped: a put survives a process crash, not a power loss, and is not
 * crash-consistent (Chronicle Map has no flush ordering).
 *
 * <p>On JDK 17+ Chronicle needs access to JDK internals and phones home unless told not to: the
 * {@code --add-opens}/{@code --add-exports} flags and {@code -Dchronicle.analytics.disable=true}
 * are in this class's {@code @Fork} only.
 *
 * <p>Run (after {@code ./pmhash mvn -pl pmhash-jmh -am package -DskipTests}):
 *
 * <pre>
 *   java -Dpmhash.jmh.dir=/dev/shm -jar pmhash-jmh/target/benchmarks.jar ChronicleMapBenchmark -f 1 -wi 1 -i 2 -r 2s
 * </pre>
 */
@Fork(value = 1, jvmArgsAppend = {
    "--enable-native-access=ALL-UNNAMED",
    "-Dchronicle.analytics.disable=true",
    "-Dchronicle.disk.monitor.disable=true",
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--sun-misc-unsafe-memory-access=allow"})
public class ChronicleMapBenchmark extends MapBenchmark {
  /** JMH creates the state. */
  public ChronicleMapBenchmark() {}

  @Override
  Store open(Path dir) throws IOException {
    Path file = dir.resolve("chronicle.map");
    ChronicleMap<Long, Long> map = ChronicleMap.of(Long.class, Long.class)
        .name("pmhash-bench")
        .entries(2L * records)
        .createPersistedTo(file.toFile());
    return new MapStore(map, "Chronicle Map<Long, Long> persisted to " + file, map::close);
  }
}
