package io.pmhash.map;

import io.pmhash.core.Pool;

/**
 * A persistent hash table of 8-byte keys and 8-byte values (the papers' fixed-length setting):
 * the primitive, allocation-free API every scheme implements. Thread-safe; operations are
 * linearizable unless the scheme's documentation says otherwise. A completed {@code put} or
 * {@code remove} is durable to the extent of the pool's {@link io.pmhash.core.Durability}.
 *
 * <p>Every key is allowed, 0 and -1 included, unless a scheme documents a reserved key (and
 * then rejects it with an {@link IllegalArgumentException}).
 *
 * <p>Obtain one from {@link PmHash}; {@link #close()} closes the pool cleanly.
 */
public interface LongHashTable extends AutoCloseable {
  /**
   * @param key the key
   * @param absent what to return when the key is not present
   * @return the key's value, or {@code absent}
   */
  long get(long key, long absent);

  /**
   * @param key the key
   * @return whether the key is present
   */
  boolean containsKey(long key);

  /**
   * Inserts the key or replaces its value.
   *
   * @param key the key
   * @param value the value
   * @return true if the key was not present before
   */
  boolean put(long key, long value);

  /**
   * Inserts the key if it is not present.
   *
   * @param key the key
   * @param value the value
   * @return true if it was inserted, false if the key was present (nothing changed)
   */
  boolean putIfAbsent(long key, long value);

  /**
   * Replaces the value of a present key.
   *
   * @param key the key
   * @param value the new value
   * @return true if the key was present and now maps to {@code value}
   */
  boolean replace(long key, long value);

  /**
   * Replaces the value of a key only if it currently maps to {@code expected}.
   *
   * @param key the key
   * @param expected the value it must have
   * @param value the new value
   * @return true if replaced
   */
  boolean replace(long key, long expected, long value);

  /**
   * @param key the key
   * @return true if the key was present and is now removed
   */
  boolean remove(long key);

  /**
   * Removes a key only if it maps to {@code expected}.
   *
   * @param key the key
   * @param expected the value it must have
   * @return true if removed
   */
  boolean remove(long key, long expected);

  /** @return the number of records; exact when no operation is in flight */
  long size();

  /**
   * Calls {@code action} for every record. Weakly consistent: a record present for the whole
   * call is seen exactly once; one inserted or removed meanwhile may or may not be.
   *
   * @param action receives each pair
   */
  void forEach(LongLongConsumer action);

  /**
   * Visits the records of one part of the table and returns where the next part starts: a
   * weakly consistent iteration in parts, {@code for (long c = scan(0, a); c != 0; c = scan(c,
   * a))}, so that an iterator holds one part at a time rather than the whole table. A record
   * present during the whole iteration is visited exactly once; one inserted or removed
   * meanwhile may or may not be. Only the first call passes 0.
   *
   * <p>The default is one part: {@link #forEach} over the whole table, then 0. Schemes whose
   * structure divides (Dash-EH: one segment per part) override it.
   *
   * @param from the cursor: 0 to start, else a value an earlier call returned
   * @param action receives each record of the part
   * @return the next cursor, or 0 when the iteration is complete
   */
  default long scan(long from, LongLongConsumer action) {
    forEach(action);
    return 0;
  }

  /** @return records divided by the slots the table has now */
  double loadFactor();

  /** @return a snapshot of shape and persist cost */
  TableStats stats();

  /** @return the pool that holds the table */
  Pool pool();

  /** @return the scheme name recorded in the pool header */
  String scheme();

  /**
   * Closes the table and its pool cleanly (the next open needs no recovery). Operations must
   * have finished.
   */
  @Override
  void close();
}
