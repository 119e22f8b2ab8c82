package io.pmhash.jmh;

/**
 * A map of 8-byte keys to 8-byte values as {@link MapBenchmark} drives it: a pmhash table or
 * one of the JVM's alternatives, behind one interface so that every store runs the same methods
 * over the same key sets. Only one implementation is loaded in a benchmark fork, so the calls
 * are monomorphic and inline.
 */
interface Store extends AutoCloseable {
  /**
   * @param key the key
   * @param absent returned when the key is not present
   * @return the key's value, or {@code absent}
   */
  long get(long key, long absent);

  /**
   * Inserts or replaces.
   *
   * @param key the key
   * @param value the value
   */
  void put(long key, long value);

  /** @param key the key to remove, if present */
  void remove(long key);

  /** @return the number of records, for the setup's check */
  long size();

  /** @return what the store is and where it lives, printed by the setup */
  String describe();

  /** Closes the store (and, for a file store, deletes nothing: the benchmark does). */
  @Override
  void close();
}
