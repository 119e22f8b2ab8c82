package io.pmhash.map.spi;

/** Receives one record of a {@link BytesTable}: fresh copies of its key and value bytes. */
@FunctionalInterface
public interface BytesConsumer {
  /**
   * @param key the key's bytes (a copy the receiver may keep)
   * @param value the value's bytes (a copy the receiver may keep)
   */
  void accept(byte[] key, byte[] value);
}
