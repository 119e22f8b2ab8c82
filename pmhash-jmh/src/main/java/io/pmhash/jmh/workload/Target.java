package io.pmhash.jmh.workload;

import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import io.pmhash.core.alloc.Publication;
import io.pmhash.core.alloc.Reservation;
import io.pmhash.map.Codec;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.PmHashMap;
import io.pmhash.map.TableOptions;
import io.pmhash.map.TableStats;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/**
 * What {@link TableWorkload} runs against: the inline {@link LongHashTable} (8-byte keys and
 * values), or a {@link PmHashMap} of {@code byte[]} in the scheme's pointer mode ({@code
 * --key-bytes K}: K-byte keys, 8-byte values). Key {@code i} of a phase is derived from the
 * phase's precomputed long {@code keys[i]}; the K-byte form is built in the measured loop (one
 * array per operation, as a caller of the map would); or the inline table with every value a
 * V-byte block of the pool's heap ({@code --value-bytes V}, {@link OutOfLine}).
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
    if (o.valueBytes() > 0) {
      return new OutOfLine(file ? PmHash.create(o.file(), options) : PmHash.createVolatile(options), o.valueBytes());
    }
    if (o.keyBytes() == 0) {
      return new Inline(file ? PmHash.create(o.file(), options) : PmHash.createVolatile(options));
    }
    return new Pointer(file ? PmHash.createMap(o.file(), Codec.bytes(), Codec.bytes(), options)
        : PmHash.createVolatileMap(Codec.bytes(), Codec.bytes(), options), o.keyBytes());
  }

  static Target open(WorkloadOptions o, Path path) throws IOException {
    TableOptions any = TableOptions.any().withDurability(o.durability());
    if (o.valueBytes() > 0) {
      return new OutOfLine(PmHash.open(path, any), o.valueBytes());
    }
    if (o.keyBytes() == 0) {
      return new Inline(PmHash.open(path, any));
    }
    return new Pointer(PmHash.openMap(path, Codec.bytes(), Codec.bytes(), any), o.keyBytes());
  }

  static class Inline extends Target {
    final LongHashTable table;

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

    private byte[] key(long k) {
      return Keys.widen(k, keyBytes);
    }

    @Override
    void insert(long key, long value) {
      map.put(key(key), Keys.widen(value, 8));
    }

    @Override
    long get(long key) {
      byte[] v = map.get(key(key));
      return v == null ? Long.MIN_VALUE : Keys.narrow(v);
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

  /**
   * The inline table with values out of line ({@code --value-bytes V}): a value is a V-byte block
   * of the pool's heap whose word {@code j} holds {@code value + j}, and the table maps the key to
   * the block's offset. Any scheme works, which is how NVLH and NVDH (no pointer mode) get the
   * value sizes of NVLH's Fig. 2-3.
   *
   * <p><b>Not crash-consistent as a whole.</b> An insert writes and persists the block, makes it
   * owned (one allocator step), then inserts the key; a delete removes the key, then frees the
   * block. The table never points at a block that is not durable and owned, but a crash between
   * the two steps leaks the block (owned, unreachable): what a caller gets who stores values
   * beside a {@code LongHashTable} by hand. Only {@code PmHashMap} over a pointer-mode scheme
   * links the record and the slot in one atomic step. Each operation's block work is part of the
   * time measured, as it would be for the caller.
   */
  static final class OutOfLine extends Inline {
    private final int valueBytes;
    private final Pool pool;

    OutOfLine(LongHashTable table, int valueBytes) {
      super(table);
      this.valueBytes = valueBytes;
      this.pool = table.pool();
    }

    @Override
    void insert(long key, long value) {
      long block = newBlock(value);
      if (!table.putIfAbsent(key, block)) {
        replace(key, block);
      }
    }

    /** The rare case: the key is present; its old block is freed once the new one is linked. */
    private void replace(long key, long block) {
      for (;;) {
        long old = table.get(key, Long.MIN_VALUE);
        if (old == Long.MIN_VALUE ? table.putIfAbsent(key, block) : table.replace(key, old, block)) {
          if (old != Long.MIN_VALUE) {
            pool.allocator().free(old);
          }
          return;
        }
      }
    }

    /** Writes, persists and owns a block holding {@code value}; returns its offset. */
    private long newBlock(long value) {
      Reservation r = pool.allocator().reserve(valueBytes);
      long at = r.offset();
      MemorySegment m = pool.memory();
      int words = valueBytes >>> 3;
      for (int j = 0; j < words; j++) {
        m.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 8L * j, value + j);
      }
      // PERSIST: the value is durable before the step that owns its block, and both before the
      // insert that makes it reachable (a reader never meets a block that is not durable).
      pool.persistence().persist(at, valueBytes);
      try (Publication p = pool.allocator().begin()) {
        p.publish(r);
        p.commit();
      }
      return at;
    }

    /** Reads the whole value; a block that is not what {@link #newBlock} wrote reads as {@code MIN_VALUE + 1}. */
    @Override
    long get(long key) {
      long block = table.get(key, Long.MIN_VALUE);
      if (block == Long.MIN_VALUE) {
        return Long.MIN_VALUE;
      }
      MemorySegment m = pool.memory();
      long v = m.get(ValueLayout.JAVA_LONG_UNALIGNED, block);
      int words = valueBytes >>> 3;
      long bad = 0;
      for (int j = 1; j < words; j++) {
        bad |= m.get(ValueLayout.JAVA_LONG_UNALIGNED, block + 8L * j) ^ (v + j);
      }
      return bad == 0 ? v : Long.MIN_VALUE + 1;
    }

    /** @return the offset of the key's value block, or {@code Long.MIN_VALUE} (for tests) */
    long block(long key) {
      return table.get(key, Long.MIN_VALUE);
    }

    @Override
    boolean delete(long key) {
      for (;;) {
        long block = table.get(key, Long.MIN_VALUE);
        if (block == Long.MIN_VALUE) {
          return false;
        }
        if (table.remove(key, block)) {
          pool.allocator().free(block);
          return true;
        }
      }
    }
  }
}
