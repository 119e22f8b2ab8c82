package io.pmhash.map;

/** Receives one key/value pair of a {@link LongHashTable}, without boxing. */
@FunctionalInterface
public interface LongLongConsumer {
  /**
   * @param key the key
   * @param value its value
   */
  void accept(long key, long value);
}
