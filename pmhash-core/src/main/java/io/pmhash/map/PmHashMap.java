package io.pmhash.map;

import io.pmhash.core.Pool;
import io.pmhash.map.spi.BytesTable;
import java.util.AbstractCollection;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentMap;

/**
 * A persistent {@link ConcurrentMap} over key and value {@link Codec}s: the map API of pmhash.
 * Obtain one from {@link PmHash#createMap} or {@link PmHash#openMap}; {@link #close()} closes the
 * pool cleanly.
 *
 * <pre>{@code
 * try (PmHashMap<String, String> map = PmHash.createMap(Path.of("m.pool"),
 *     Codec.utf8(), Codec.utf8(), TableOptions.scheme("dash-eh"))) {
 *   map.put("answer", "42");
 * }
 * }</pre>
 *
 * <p>When both codecs are fixed-width integers ({@link Codec#longs()}, {@link Codec#ints()}) the
 * map stores its pairs inline, in the scheme's 8-byte slots; otherwise it uses the scheme's
 * pointer mode ({@link BytesTable}), each pair in an out-of-line record.
 *
 * <p>The contract is {@link java.util.concurrent.ConcurrentHashMap}'s: null keys and values are
 * refused with {@link NullPointerException}; every single-key operation is atomic ({@code
 * putIfAbsent}, {@code replace}, {@code remove(k, v)} directly, {@code compute*} and {@code merge}
 * through {@link ConcurrentMap}'s retry loops over them); {@link #size()} is exact when no
 * operation is in flight; the views' iterators are weakly consistent (they never throw {@link
 * java.util.ConcurrentModificationException}, see each record present throughout the iteration
 * exactly once, and may or may not see changes made meanwhile), and {@code Iterator.remove} and
 * {@code Entry.setValue} write through. {@code equals}, {@code hashCode} and {@code toString}
 * are {@link AbstractMap}'s.
 *
 * <p>Keys are equal when their encodings are: for {@link Codec#bytes()} keys that means equal
 * contents, unlike {@code byte[].equals}. {@code remove(k, v)} and {@code replace(k, old, new)}
 * compare encoded values. A completed write is durable to the extent of the pool's {@link
 * io.pmhash.core.Durability}.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public final class PmHashMap<K, V> extends AbstractMap<K, V> implements ConcurrentMap<K, V>, AutoCloseable {
  private final BytesTable table;
  private final Codec<K> keys;
  private final Codec<V> values;
  private Set<Entry<K, V>> entrySet;
  private Set<K> keySet;
  private Collection<V> valueCollection;

  PmHashMap(BytesTable table, Codec<K> keys, Codec<V> values) {
    this.table = table;
    this.keys = keys;
    this.values = values;
  }

  // ---------------------------------------------------------------- encoding

  /** The key's bytes, or null if {@code key} is not of the key codec's type (it cannot be present). */
  private byte[] keyBytes(Object key) {
    Objects.requireNonNull(key, "a PmHashMap has no null keys");
    return keys.type().isInstance(key) ? keys.encode(keys.type().cast(key)) : null;
  }

  private byte[] valueBytes(Object value) {
    Objects.requireNonNull(value, "a PmHashMap has no null values");
    return values.type().isInstance(value) ? values.encode(values.type().cast(value)) : null;
  }

  private byte[] newKey(K key) {
    return keys.encode(Objects.requireNonNull(key, "a PmHashMap has no null keys"));
  }

  private byte[] newValue(V value) {
    return values.encode(Objects.requireNonNull(value, "a PmHashMap has no null values"));
  }

  private V decode(byte[] value) {
    return value == null ? null : values.decode(value);
  }

  // ---------------------------------------------------------------- Map

  @Override
  public V get(Object key) {
    byte[] k = keyBytes(key);
    return k == null ? null : decode(table.get(k));
  }

  @Override
  public boolean containsKey(Object key) {
    byte[] k = keyBytes(key);
    return k != null && table.get(k) != null;
  }

  @Override
  public boolean containsValue(Object value) {
    Objects.requireNonNull(value, "a PmHashMap has no null values");
    return super.containsValue(value);
  }

  @Override
  public V put(K key, V value) {
    byte[] k = newKey(key);
    return decode(table.put(k, newValue(value)));
  }

  @Override
  public V putIfAbsent(K key, V value) {
    byte[] k = newKey(key);
    return decode(table.putIfAbsent(k, newValue(value)));
  }

  @Override
  public V replace(K key, V value) {
    byte[] k = newKey(key);
    return decode(table.replace(k, newValue(value)));
  }

  @Override
  public boolean replace(K key, V oldValue, V newValue) {
    byte[] k = newKey(key);
    byte[] o = valueBytes(oldValue);
    byte[] n = newValue(newValue);
    return o != null && table.replace(k, o, n);
  }

  @Override
  public V remove(Object key) {
    byte[] k = keyBytes(key);
    return k == null ? null : decode(table.remove(k));
  }

  @Override
  public boolean remove(Object key, Object value) {
    byte[] k = keyBytes(key);
    if (value == null) {
      return false; // as ConcurrentHashMap: no null values, so none is removed
    }
    byte[] v = valueBytes(value);
    return k != null && v != null && table.remove(k, v);
  }

  /** @return the number of records, or {@link Integer#MAX_VALUE} if more */
  @Override
  public int size() {
    return (int) Math.min(Integer.MAX_VALUE, table.size());
  }

  /** @return the number of records as a long */
  public long longSize() {
    return table.size();
  }

  @Override
  public boolean isEmpty() {
    return table.size() == 0;
  }

  /** Removes every record present when the call starts (weakly consistent, not atomic). */
  @Override
  public void clear() {
    for (Iterator<Entry<K, V>> it = new EntryIterator(); it.hasNext(); ) {
      it.next();
      it.remove();
    }
  }

  @Override
  public Set<Entry<K, V>> entrySet() {
    Set<Entry<K, V>> s = entrySet;
    return s != null ? s : (entrySet = new EntrySet());
  }

  @Override
  public Set<K> keySet() {
    Set<K> s = keySet;
    return s != null ? s : (keySet = new KeySet());
  }

  @Override
  public Collection<V> values() {
    Collection<V> c = valueCollection;
    return c != null ? c : (valueCollection = new Values());
  }

  // ---------------------------------------------------------------- pmhash

  /** @return a snapshot of the table's shape and persist cost */
  public TableStats stats() {
    return table.stats();
  }

  /** @return the pool that holds the map */
  public Pool pool() {
    return table.pool();
  }

  /** @return the scheme name recorded in the pool header */
  public String scheme() {
    return table.scheme();
  }

  /** @return the key codec */
  public Codec<K> keyCodec() {
    return keys;
  }

  /** @return the value codec */
  public Codec<V> valueCodec() {
    return values;
  }

  /** @return whether pairs live out of line (the scheme's pointer mode) */
  public boolean pointerMode() {
    return !(table instanceof LongBytesTable);
  }

  /**
   * Closes the map and its pool cleanly (the next open needs no recovery). Operations must have
   * finished.
   */
  @Override
  public void close() {
    table.close();
  }

  // ---------------------------------------------------------------- views

  private final class EntryIterator implements Iterator<Entry<K, V>> {
    private final ArrayDeque<byte[]> buffer = new ArrayDeque<>();
    private long cursor;
    private boolean done;
    private Entry<K, V> last;

    private boolean fill() {
      while (buffer.isEmpty() && !done) {
        cursor = table.scan(cursor, (k, v) -> {
          buffer.add(k);
          buffer.add(v);
        });
        done = cursor == 0;
      }
      return !buffer.isEmpty();
    }

    @Override
    public boolean hasNext() {
      return fill();
    }

    @Override
    public Entry<K, V> next() {
      if (!fill()) {
        throw new NoSuchElementException();
      }
      K k = keys.decode(buffer.poll());
      V v = values.decode(buffer.poll());
      last = new MapEntry(k, v);
      return last;
    }

    @Override
    public void remove() {
      if (last == null) {
        throw new IllegalStateException("next() has not been called, or remove() was called after it already");
      }
      PmHashMap.this.remove(last.getKey());
      last = null;
    }
  }

  /** An entry of an iteration: setValue writes through (as ConcurrentHashMap's). */
  private final class MapEntry extends SimpleEntry<K, V> {
    private static final long serialVersionUID = 1L;

    MapEntry(K key, V value) {
      super(key, value);
    }

    @Override
    public V setValue(V value) {
      Objects.requireNonNull(value, "a PmHashMap has no null values");
      V old = super.setValue(value);
      put(getKey(), value);
      return old;
    }
  }

  private final class EntrySet extends AbstractSet<Entry<K, V>> {
    @Override
    public Iterator<Entry<K, V>> iterator() {
      return new EntryIterator();
    }

    @Override
    public int size() {
      return PmHashMap.this.size();
    }

    @Override
    public boolean isEmpty() {
      return PmHashMap.this.isEmpty();
    }

    @Override
    public boolean contains(Object o) {
      if (!(o instanceof Map.Entry<?, ?> e) || e.getKey() == null || e.getValue() == null) {
        return false;
      }
      V v = get(e.getKey());
      return v != null && v.equals(e.getValue());
    }

    @Override
    public boolean remove(Object o) {
      return o instanceof Map.Entry<?, ?> e && e.getKey() != null && PmHashMap.this.remove(e.getKey(), e.getValue());
    }

    @Override
    public void clear() {
      PmHashMap.this.clear();
    }
  }

  /** The iterator of the key and value views: the entry iterator, projected. */
  private final class ViewIterator<T> implements Iterator<T> {
    private final EntryIterator entries = new EntryIterator();
    private final boolean keysView;

    ViewIterator(boolean keysView) {
      this.keysView = keysView;
    }

    @Override
    public boolean hasNext() {
      return entries.hasNext();
    }

    @Override
    @SuppressWarnings("unchecked")
    public T next() {
      Entry<K, V> e = entries.next();
      return (T) (keysView ? e.getKey() : e.getValue());
    }

    @Override
    public void remove() {
      entries.remove();
    }
  }

  private final class KeySet extends AbstractSet<K> {
    @Override
    public Iterator<K> iterator() {
      return new ViewIterator<>(true);
    }

    @Override
    public int size() {
      return PmHashMap.this.size();
    }

    @Override
    public boolean contains(Object o) {
      return containsKey(o);
    }

    @Override
    public boolean remove(Object o) {
      return PmHashMap.this.remove(o) != null;
    }

    @Override
    public void clear() {
      PmHashMap.this.clear();
    }
  }

  private final class Values extends AbstractCollection<V> {
    @Override
    public Iterator<V> iterator() {
      return new ViewIterator<>(false);
    }

    @Override
    public int size() {
      return PmHashMap.this.size();
    }

    @Override
    public boolean contains(Object o) {
      return containsValue(o);
    }

    @Override
    public void clear() {
      PmHashMap.this.clear();
    }
  }
}
