package io.pmhash.map;

/**
 * Turns keys or values of a {@link PmHashMap} into bytes and back. A codec must be a bijection
 * on the values it accepts: {@code decode(encode(x)).equals(x)}, and two values are equal if and
 * only if their encodings are equal byte for byte (the map compares encoded keys and, for {@code
 * remove(k, v)} and {@code replace(k, old, new)}, encoded values). The built-ins keep both rules;
 * a user codec must too.
 *
 * <p>The {@link #name()} is recorded in the pool header when a map is created, and a map opened
 * with a codec of another name is refused ({@link io.pmhash.core.SchemeMismatchException}), so
 * that bytes written by one codec are never decoded by another. Give a user codec a name of its
 * own, and a new name whenever its encoding changes.
 *
 * <pre>{@code
 * Codec<UUID> uuids = Codec.of("uuid", UUID.class,
 *     u -> ByteBuffer.allocate(16).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits()).array(),
 *     b -> { ByteBuffer bb = ByteBuffer.wrap(b); return new UUID(bb.getLong(), bb.getLong()); });
 * }</pre>
 *
 * @param <T> the type encoded
 */
public interface Codec<T> {
  /**
   * @return the name recorded in the pool header: 1 to 8 printable ASCII characters
   */
  String name();

  /** @return the class of the values this codec encodes; other objects are never passed to it */
  Class<T> type();

  /**
   * @param value a non-null value of {@link #type()}
   * @return its bytes; the caller does not keep or modify them after the call returns
   */
  byte[] encode(T value);

  /**
   * @param bytes bytes {@link #encode} produced (a fresh array the codec may keep)
   * @return the value
   */
  T decode(byte[] bytes);

  /** @return {@code Long} as 8 bytes little-endian ({@code "long"}); inline with {@link #ints()} */
  static Codec<Long> longs() {
    return BuiltinCodecs.LONG;
  }

  /** @return {@code Integer} as 4 bytes little-endian ({@code "int"}); inline with {@link #longs()} */
  static Codec<Integer> ints() {
    return BuiltinCodecs.INT;
  }

  /** @return {@code String} as UTF-8 ({@code "utf8"}); unpaired surrogates are refused */
  static Codec<String> utf8() {
    return BuiltinCodecs.UTF8;
  }

  /**
   * @return {@code byte[]} as itself ({@code "bytes"}); arrays are copied in and out, and keys
   *     compare by content (unlike {@code byte[].equals})
   */
  static Codec<byte[]> bytes() {
    return BuiltinCodecs.BYTES;
  }

  /**
   * A user codec from two functions.
   *
   * @param name 1 to 8 printable ASCII characters, recorded in the pool header
   * @param type the class of the values
   * @param encoder value to bytes
   * @param decoder bytes to value
   * @param <T> the type
   * @return the codec
   * @throws IllegalArgumentException if the name is not 1 to 8 printable ASCII characters
   */
  static <T> Codec<T> of(String name, Class<T> type, java.util.function.Function<? super T, byte[]> encoder,
      java.util.function.Function<byte[], ? extends T> decoder) {
    return new BuiltinCodecs.Functional<>(name, type, encoder, decoder);
  }
}
