package io.pmhash.jmh;

import java.nio.file.Path;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteOptions;

/**
 * RocksDB through {@code rocksdbjni}, the embedded persistent store most JVM services would pick,
 * on {@link MapBenchmark}'s operations and keys: 8-byte big-endian keys and values, the default
 * options (write-ahead log on, memtable, LSM tree in {@code -Dpmhash.jmh.dir}). Writes are not
 * synced ({@code WriteOptions.setSync(false)}, RocksDB's default): a put survives a process crash
 * through the WAL in the page cache, not a power loss, which matches pmhash's {@code
 * PMEM_EMULATED} and {@code PROCESS} modes on a DRAM file. Every call crosses JNI and copies
 * {@code byte[]}s; that is the cost a JVM user pays.
 *
 * <p>{@code size()} is RocksDB's estimate, so the end-of-trial check here compares values only.
 *
 * <p>Run (after {@code ./pmhash mvn -pl pmhash-jmh -am package -DskipTests}):
 *
 * <pre>
 *   java -Dpmhash.jmh.dir=/dev/shm -jar pmhash-jmh/target/benchmarks.jar RocksDbBenchmark -f 1 -wi 1 -i 2 -r 2s
 * </pre>
 */
public class RocksDbBenchmark extends MapBenchmark {
  /** JMH creates the state. */
  public RocksDbBenchmark() {}

  @Override
  Store open(Path dir) throws RocksDBException {
    RocksDB.loadLibrary();
    Options options = new Options().setCreateIfMissing(true);
    return new RocksStore(RocksDB.open(options, dir.toString()), options, new WriteOptions(), dir);
  }

  /** A RocksDB database as a {@link Store}. */
  record RocksStore(RocksDB db, Options options, WriteOptions write, Path dir) implements Store {
    private static byte[] bytes(long v) {
      byte[] b = new byte[8];
      for (int i = 7; i >= 0; i--) {
        b[i] = (byte) v;
        v >>>= 8;
      }
      return b;
    }

    private static long value(byte[] b) {
      long v = 0;
      for (int i = 0; i < 8; i++) {
        v = (v << 8) | (b[i] & 0xFF);
      }
      return v;
    }

    @Override
    public long get(long key, long absent) {
      try {
        byte[] v = db.get(bytes(key));
        return v == null ? absent : value(v);
      } catch (RocksDBException e) {
        throw new IllegalStateException(e);
      }
    }

    @Override
    public void put(long key, long value) {
      try {
        db.put(write, bytes(key), bytes(value));
      } catch (RocksDBException e) {
        throw new IllegalStateException(e);
      }
    }

    @Override
    public void remove(long key) {
      try {
        db.delete(write, bytes(key));
      } catch (RocksDBException e) {
        throw new IllegalStateException(e);
      }
    }

    @Override
    public long size() {
      return -1; // only an estimate is available ("rocksdb.estimate-num-keys")
    }

    @Override
    public String describe() {
      return "RocksDB " + RocksDB.rocksdbVersion() + " in " + dir + ", WAL on, unsynced writes";
    }

    @Override
    public void close() {
      db.close();
      write.close();
      options.close();
    }
  }
}
