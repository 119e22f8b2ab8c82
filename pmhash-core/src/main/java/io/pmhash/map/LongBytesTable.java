package io.pmhash.map;

import io.pmhash.core.Pool;
import io.pmhash.map.spi.BytesConsumer;
import io.pmhash.map.spi.BytesTable;

/**
 * A {@link BytesTable} over an inline {@link LongHashTable}: the store of a {@link PmHashMap}
 * whose key and value codecs are both fixed-width integers ({@link Codec#longs()}, {@link
 * Codec#ints()}), so no record lives out of line. The operations that return a previous value
 * are compare-and-set loops over the table's atomic {@code putIfAbsent}, {@code replace(k, old,
 * new)} and {@code remove(k, old)}: each result is the value the successful step replaced.
 *
 * <p>Iteration ({@link #scan}) goes through {@link LongHashTable#scan}: in parts where the
 * scheme divides its table (the map's iterator then buffers one part at a time), else in one.
 */
final class LongBytesTable implements BytesTable {
  private static final long A = 0x5A5A_5A5A_5A5A_5A5AL;
  private static final long B = ~A;

  private final LongHashTable table;
  private final int keyWidth;
  private final int valueWidth;

  LongBytesTable(LongHashTable table, int keyWidth, int valueWidth) {
    this.table = table;
    this.keyWidth = keyWidth;
    this.valueWidth = valueWidth;
  }

  LongHashTable table() {
    return table;
  }

  private static long word(byte[] b) {
    return BuiltinCodecs.fromBytes(b);
  }

  private byte[] bytes(long v) {
    return BuiltinCodecs.toBytes(v, valueWidth);
  }

  /** The value of a key at one instant (boxed: null for absent). */
  private Long current(long k) {
    for (;;) {
      long v = table.get(k, A);
      if (v != A) {
        return v;
      }
      long w = table.get(k, B);
      if (w != B) {
        return w; // A included: the key maps to A
      }
      if (!table.containsKey(k)) {
        return null;
      }
    }
  }

  @Override
  public byte[] get(byte[] key) {
    Long v = current(word(key));
    return v == null ? null : bytes(v);
  }

  @Override
  public byte[] put(byte[] key, byte[] value) {
    long k = word(key);
    long v = word(value);
    for (;;) {
      Long old = current(k);
      if (old == null ? table.putIfAbsent(k, v) : table.replace(k, old, v)) {
        return old == null ? null : bytes(old);
      }
    }
  }

  @Override
  public byte[] putIfAbsent(byte[] key, byte[] value) {
    long k = word(key);
    long v = word(value);
    for (;;) {
      if (table.putIfAbsent(k, v)) {
        return null;
      }
      Long cur = current(k);
      if (cur != null) {
        return bytes(cur);
      }
    }
  }

  @Override
  public byte[] replace(byte[] key, byte[] value) {
    long k = word(key);
    long v = word(value);
    for (;;) {
      Long cur = current(k);
      if (cur == null) {
        return null;
      }
      if (table.replace(k, cur, v)) {
        return bytes(cur);
      }
    }
  }

  @Override
  public boolean replace(byte[] key, byte[] expected, byte[] value) {
    return expected.length == valueWidth && table.replace(word(key), word(expected), word(value));
  }

  @Override
  public byte[] remove(byte[] key) {
    long k = word(key);
    for (;;) {
      Long cur = current(k);
      if (cur == null) {
        return null;
      }
      if (table.remove(k, cur)) {
        return bytes(cur);
      }
    }
  }

  @Override
  public boolean remove(byte[] key, byte[] expected) {
    return expected.length == valueWidth && table.remove(word(key), word(expected));
  }

  @Override
  public long size() {
    return table.size();
  }

  @Override
  public long scan(long from, BytesConsumer action) {
    return table.scan(from, (k, v) -> action.accept(BuiltinCodecs.toBytes(k, keyWidth), bytes(v)));
  }

  @Override
  public TableStats stats() {
    return table.stats();
  }

  @Override
  public Pool pool() {
    return table.pool();
  }

  @Override
  public String scheme() {
    return table.scheme();
  }

  @Override
  public void close() {
    table.close();
  }
}
