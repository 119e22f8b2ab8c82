package io.pmhash.map.spi;

import io.pmhash.core.Pool;
import io.pmhash.map.TableStats;

/**
 * A persistent hash table of variable-length byte keys and values: a scheme's pointer mode (Dash
 * §4.5), the store under {@link io.pmhash.map.PmHashMap}. Records live out of line ({@link
 * OutOfLineRecord}), allocated from the pool's allocator; a slot holds the record's offset.
 * Keys compare by content. Thread-safe and linearizable; arrays passed in are not kept, arrays
 * returned are fresh copies.
 *
 * <p>The conditional operations return what {@link java.util.concurrent.ConcurrentMap} needs:
 * the previous value, or {@code null} for "absent" (or "not replaced").
 */
public interface BytesTable extends AutoCloseable {
  /**
   * @param key the key
   * @return a copy of its value, or null
   */
  byte[] get(byte[] key);

  /**
   * Inserts the key or replaces its value.
   *
   * @param key the key
   * @param value the value
   * @return the previous value, or null if the key was absent
   */
  byte[] put(byte[] key, byte[] value);

  /**
   * @param key the key
   * @param value the value to insert if the key is absent
   * @return the present value (nothing changed), or null if inserted
   */
  byte[] putIfAbsent(byte[] key, byte[] value);

  /**
   * @param key the key
   * @param value its new value, if it is present
   * @return the previous value, or null if the key was absent (nothing changed)
   */
  byte[] replace(byte[] key, byte[] value);

  /**
   * @param key the key
   * @param expected the value it must have, compared byte for byte
   * @param value its new value
   * @return whether it was replaced
   */
  boolean replace(byte[] key, byte[] expected, byte[] value);

  /**
   * @param key the key
   * @return the removed value, or null if the key was absent
   */
  byte[] remove(byte[] key);

  /**
   * @param key the key
   * @param expected the value it must have, compared byte for byte
   * @return whether it was removed
   */
  boolean remove(byte[] key, byte[] expected);

  /** @return the number of records; exact when no operation is in flight */
  long size();

  /**
   * Visits the records of one part of the table and returns where the next part starts: the
   * weakly consistent iteration of the map's views, {@code for (long c = scan(0, a); c != 0; c =
   * scan(c, a))}. A record present during the whole iteration is visited exactly once; one
   * inserted or removed meanwhile may or may not be. Only the first call passes 0.
   *
   * @param from the cursor: 0 to start, else a value an earlier call returned
   * @param action receives each record of the part
   * @return the next cursor, or 0 when the iteration is complete
   */
  long scan(long from, BytesConsumer action);

  /** @return a snapshot of shape and persist cost */
  TableStats stats();

  /** @return the pool that holds the table */
  Pool pool();

  /** @return the scheme name recorded in the pool header */
  String scheme();

  /** Closes the table and its pool cleanly; operations must have finished. */
  @Override
  void close();
}
