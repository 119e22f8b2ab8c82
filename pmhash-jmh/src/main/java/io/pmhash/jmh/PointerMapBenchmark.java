package io.pmhash.jmh;

import io.pmhash.core.Durability;
import io.pmhash.jmh.workload.Keys;
import io.pmhash.map.Codec;
import io.pmhash.map.PmHash;
import io.pmhash.map.PmHashMap;
import io.pmhash.map.TableOptions;
import java.nio.file.Path;
import org.openjdk.jmh.annotations.Param;

/**
 * Variable-length keys (issue 8: "16-byte variable keys (pointer mode)"): a {@code
 * PmHashMap<byte[], byte[]>} in a scheme's pointer mode (Dash §4.5: the slot holds a pointer to
 * an out-of-line record, the fingerprint stays in the bucket), on {@link MapBenchmark}'s
 * operations and key sets. Key {@code k} of those sets becomes {@code keyBytes} bytes ({@link
 * Keys#widen}: its 8 bytes little-endian, then derived filler; distinct longs give distinct keys);
 * values are the 8 bytes of the long value. The arrays are built in the
 * measured loop, one key (and, for a put, one value) per operation, as a caller of the map makes
 * them; that cost is part of the score, as is the map's codec and record handling. Compare with
 * {@link TableBenchmark}'s 8-byte inline keys of the same scheme and durability.
 *
 * <p>Only Dash-EH has a pointer mode in this build; another scheme fails at setup with a message
 * saying so.
 *
 * <p>Run (after {@code ./pmhash mvn -pl pmhash-jmh -am package -DskipTests}):
 *
 * <pre>
 *   java -Dpmhash.jmh.dir=/dev/shm -jar pmhash-jmh/target/benchmarks.jar PointerMapBenchmark \
 *        -p durability=PMEM_EMULATED -p keys=uniform -f 1 -wi 1 -i 2 -r 2s -rf json -rff pointer-maps.json
 * </pre>
 */
public class PointerMapBenchmark extends MapBenchmark {
  /** The scheme; it must have a pointer mode (dash-eh). */
  @Param({"dash-eh"})
  public String scheme;

  /** The durability mode of the pool. */
  @Param({"PMEM_EMULATED", "PROCESS", "VOLATILE"})
  public String durability;

  /**
   * The pool backend: {@code ffm} or {@code llpl} (a PMDK pool, where every out-of-line record is
   * a PMDK object: each insert reserves one and publishes it with its slot in one {@code
   * pmemobj_publish}, each update and delete retires the old one; docs/llpl.md). The per-insert
   * PMDK cost: {@code -p backend=ffm,llpl -p initialSize=1073741824}.
   */
  @Param({"ffm"})
  public String backend;

  /** The pool's initial size in bytes (0: the default; an llpl pool, which cannot grow, gets 1 GiB). */
  @Param({"0"})
  public long initialSize;

  /** Key length in bytes, 8..1024 (the 16 by default). */
  @Param({"16"})
  public int keyBytes;

  /** JMH creates the state. */
  public PointerMapBenchmark() {}

  @Override
  Store open(Path dir) throws Exception {
    if (keyBytes < 8 || keyBytes > 1024) {
      throw new IllegalArgumentException("keyBytes " + keyBytes + " is out of range 8..1024");
    }
    Durability mode = Durability.valueOf(durability);
    TableOptions options = TableBenchmark.options(scheme, mode, backend, initialSize);
    PmHashMap<byte[], byte[]> map = mode == Durability.VOLATILE
        ? PmHash.createVolatileMap(Codec.bytes(), Codec.bytes(), options)
        : PmHash.createMap(dir.resolve(scheme + "-map.pool"), Codec.bytes(), Codec.bytes(), options);
    return new PointerStore(map, keyBytes);
  }

  /** A {@code PmHashMap<byte[], byte[]>} as a {@link Store} of long keys widened to {@code keyBytes}. */
  record PointerStore(PmHashMap<byte[], byte[]> map, int keyBytes) implements Store {
    byte[] key(long k) {
      return Keys.widen(k, keyBytes);
    }

    @Override
    public long get(long key, long absent) {
      byte[] v = map.get(key(key));
      return v == null ? absent : Keys.narrow(v);
    }

    @Override
    public void put(long key, long value) {
      map.put(key(key), Keys.widen(value, 8));
    }

    @Override
    public void remove(long key) {
      map.remove(key(key));
    }

    @Override
    public long size() {
      return map.longSize();
    }

    @Override
    public String describe() {
      return "pmhash PmHashMap<byte[], byte[]> (" + keyBytes + "-byte keys, pointer mode) over " + map.scheme()
          + ", durability " + map.pool().durability() + ", persistence " + map.pool().persistence().describe()
          + (map.pool().path() == null ? ", anonymous memory" : ", pool " + map.pool().path());
    }

    @Override
    public void close() {
      map.close();
    }
  }
}
