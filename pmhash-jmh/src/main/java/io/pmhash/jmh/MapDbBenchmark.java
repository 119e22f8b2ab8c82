package io.pmhash.jmh;

import java.nio.file.Path;
import java.util.concurrent.ConcurrentMap;
import org.mapdb.DB;
import org.mapdb.DBMaker;
import org.mapdb.Serializer;

/**
 * MapDB's {@code HTreeMap<Long, Long>} in a memory-mapped file, on {@link MapBenchmark}'s
 * operations and keys: the pure-Java persistent map. Transactions are off (MapDB's default:
 * no write-ahead log, so a crash can corrupt the file; {@code DBMaker.transactionEnable()}
 * would add one), the file is mapped ({@code fileMmapEnableIfSupported}), and the map is
 * striped for concurrency ({@code concurrencyScale} 16 segments).
 *
 * <p>Run (after {@code ./pmhash mvn -pl pmhash-jmh -am package -DskipTests}):
 *
 * <pre>
 *   java -Dpmhash.jmh.dir=/dev/shm -jar pmhash-jmh/target/benchmarks.jar MapDbBenchmark -f 1 -wi 1 -i 2 -r 2s
 * </pre>
 */
public class MapDbBenchmark extends MapBenchmark {
  /** JMH creates the state. */
  public MapDbBenchmark() {}

  @Override
  Store open(Path dir) {
    Path file = dir.resolve("mapdb.db");
    DB db = DBMaker.fileDB(file.toFile()).fileMmapEnableIfSupported().closeOnJvmShutdown().concurrencyScale(16).make();
    ConcurrentMap<Long, Long> map = db.hashMap("bench", Serializer.LONG, Serializer.LONG).createOrOpen();
    return new MapStore(map, "MapDB HTreeMap<Long, Long> in a memory-mapped file " + file + ", transactions off", db::close);
  }
}
