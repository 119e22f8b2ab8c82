package io.pmhash.jmh.workload;

import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import io.pmhash.map.Codec;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.PmHashMap;
import io.pmhash.map.TableOptions;
import io.pmhash.map.TableStats;
import java.io.IOException;
import java.nio.file.Path;

/**
 * What {@link TableWorkload} runs against: the inline {@link LongHashTable} (8-byte keys and
 * values), or a {@link PmHashMap} of {@code byte[]} in the scheme's pointer mode ({@code
 * --key-bytes K}: K-byte keys, 8-byte values). Key {@code i} of a phase is derived from the
 * phase's precomputed long {@code keys[i]}; the K-byte form is built in the measured loop (one
 * array per operation, as a caller of the map would).
 */
abstract class Target implements AutoCloseable {
  abstract void insert(long key, long value);

  /** @return the key's value, or {@code Long.MIN_VALUE} if absent */
  abstract long get(long key);

  abstract boolean delete(long key);

  abstract long size();

  abstract double loadFactor();

  abstract TableStats stats();

  abstract Pool pool();

  @Override
  public abstract void close();

  static Target create(WorkloadOptions o, TableOptions options) throws IOException {
    boolean file = o.durability() != Durability.VOLATILE;
    if (o.keyBytes() == 0) {
      return new Inline(file ? PmHash.create(o.file(), options) : PmHash.createVolatile(options));
    }
    return new Pointer(file ? PmHash.createMap(o.file(), Codec.bytes(), Codec.bytes(), options)
        : PmHash.createVolatileMap(Codec.bytes(), Codec.bytes(), options), o.keyBytes());
  }

  static Target open(WorkloadOptions o, Path path) throws IOException {
    TableOptions any = TableOptions.any().withDurability(o.durability());
    if (o.keyBytes() == 0) {
      return new Inline(PmHash.open(path, any));
    }
    return new Pointer(PmHash.openMap(path, Codec.bytes(), Codec.bytes(), any), o.keyBytes());
  }

  private static final class Inline extends Target {
    private final LongHashTable table;

    Inline(LongHashTable table) {
      this.table = table;
    }

    @Override
    void insert(long key, long value) {
      table.put(key, value);
    }

    @Override
    long get(long key) {
      return table.get(key, Long.MIN_VALUE);
    }

    @Override
    boolean delete(long key) {
      return table.remove(key);
    }

    @Override
    long size() {
      return table.size();
    }

    @Override
    double loadFactor() {
      return table.loadFactor();
    }

    @Override
    TableStats stats() {
      return table.stats();
    }

    @Override
    Pool pool() {
      return table.pool();
    }

    @Override
    public void close() {
      table.close();
    }
  }

  private static final class Pointer extends Target {
    private final PmHashMap<byte[], byte[]> map;
    private final int keyBytes;

    Pointer(PmHashMap<byte[], byte[]> map, int keyBytes) {
      this.map = map;
      this.keyBytes = keyBytes;
    }

    /** The long's 8 bytes, then filler derived from it: distinct longs give distinct keys. */
    private byte[] key(long k) {
      byte[] b = new byte[keyBytes];
      long f = k;
      for (int i = 0; i < keyBytes; i++) {
        if (i >= 8 && (i & 7) == 0) {
          f = Keys.key(k, i);
        }
        b[i] = (byte) (f >>> (8 * (i & 7)));
      }
      return b;
    }

    private static byte[] value(long v) {
      byte[] b = new byte[8];
      for (int i = 0; i < 8; i++) {
        b[i] = (byte) (v >>> (8 * i));
      }
      return b;
    }

    @Override
    void insert(long key, long value) {
      map.put(key(key), value(value));
    }

    @Override
    long get(long key) {
      byte[] v = map.get(key(key));
      if (v == null) {
        return Long.MIN_VALUE;
      }
      long x = 0;
      for (int i = 7; i >= 0; i--) {
        x = x << 8 | (v[i] & 0xFF);
      }
      return x;
    }

    @Override
    boolean delete(long key) {
      return map.remove(key(key)) != null;
    }

    @Override
    long size() {
      return map.longSize();
    }

    @Override
    double loadFactor() {
      return map.stats().loadFactor();
    }

    @Override
    TableStats stats() {
      return map.stats();
    }

    @Override
    Pool pool() {
      return map.pool();
    }

    @Override
    public void close() {
      map.close();
    }
  }
}
