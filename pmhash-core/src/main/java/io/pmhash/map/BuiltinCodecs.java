package io.pmhash.map;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.function.Function;

/** The built-in codecs of {@link Codec} and the packing of codec names into header words. */
final class BuiltinCodecs {
  private BuiltinCodecs() {}

  static final Codec<Long> LONG = new Fixed<>("long", Long.class, 8) {
    @Override
    public byte[] encode(Long value) {
      return toBytes(value, 8);
    }

    @Override
    public Long decode(byte[] bytes) {
      return fromBytes(bytes);
    }
  };

  static final Codec<Integer> INT = new Fixed<>("int", Integer.class, 4) {
    @Override
    public byte[] encode(Integer value) {
      return toBytes(value, 4);
    }

    @Override
    public Integer decode(byte[] bytes) {
      return (int) fromBytes(bytes);
    }
  };

  static final Codec<String> UTF8 = new Named<>("utf8", String.class) {
    @Override
    public byte[] encode(String value) {
      try {
        ByteBuffer b = StandardCharsets.UTF_8.newEncoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .encode(CharBuffer.wrap(value));
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
      } catch (CharacterCodingException e) {
        // a lone surrogate would decode to '?': the map would not give back what it was given
        throw new IllegalArgumentException("the utf8 codec cannot store a string with an unpaired surrogate (" + e.getMessage() + "); store it as byte[] or fix the string", e);
      }
    }

    @Override
    public String decode(byte[] bytes) {
      return new String(bytes, StandardCharsets.UTF_8);
    }
  };

  static final Codec<byte[]> BYTES = new Named<>("bytes", byte[].class) {
    @Override
    public byte[] encode(byte[] value) {
      return value.clone();
    }

    @Override
    public byte[] decode(byte[] bytes) {
      return bytes;
    }
  };

  /** Fixed-width integer codecs: a map whose keys and values both use one is inline. */
  abstract static class Fixed<T> extends Named<T> {
    final int width;

    Fixed(String name, Class<T> type, int width) {
      super(name, type);
      this.width = width;
    }
  }

  abstract static class Named<T> implements Codec<T> {
    private final String name;
    private final Class<T> type;

    Named(String name, Class<T> type) {
      this.name = checkName(name);
      this.type = Objects.requireNonNull(type, "type");
    }

    @Override
    public final String name() {
      return name;
    }

    @Override
    public final Class<T> type() {
      return type;
    }

    @Override
    public String toString() {
      return "codec " + name;
    }
  }

  static final class Functional<T> extends Named<T> {
    private final Function<? super T, byte[]> encoder;
    private final Function<byte[], ? extends T> decoder;

    Functional(String name, Class<T> type, Function<? super T, byte[]> encoder, Function<byte[], ? extends T> decoder) {
      super(name, type);
      this.encoder = Objects.requireNonNull(encoder, "encoder");
      this.decoder = Objects.requireNonNull(decoder, "decoder");
    }

    @Override
    public byte[] encode(T value) {
      return Objects.requireNonNull(encoder.apply(value), () -> "codec " + name() + " encoded a value to null");
    }

    @Override
    public T decode(byte[] bytes) {
      return decoder.apply(bytes);
    }
  }

  /** @return the fixed width of a built-in integer codec, or 0 */
  static int fixedWidth(Codec<?> c) {
    return c instanceof Fixed<?> f ? f.width : 0;
  }

  static byte[] toBytes(long v, int width) {
    byte[] b = new byte[width];
    for (int i = 0; i < width; i++) {
      b[i] = (byte) (v >>> (8 * i));
    }
    return b;
  }

  /** Little-endian, sign-extended from the array's length (4 or 8). */
  static long fromBytes(byte[] b) {
    long v = 0;
    for (int i = b.length - 1; i >= 0; i--) {
      v = v << 8 | (b[i] & 0xFF);
    }
    return b.length == 4 ? (int) v : v;
  }

  static String checkName(String name) {
    Objects.requireNonNull(name, "codec name");
    if (name.isEmpty() || name.length() > 8 || !name.chars().allMatch(c -> c > 0x20 && c < 0x7F)) {
      throw new IllegalArgumentException("a codec name is 1 to 8 printable ASCII characters (it is recorded in the pool header), got '" + name + "'");
    }
    return name;
  }

  /** @return the name packed little-endian into a header word */
  static long pack(String name) {
    long w = 0;
    for (int i = name.length() - 1; i >= 0; i--) {
      w = w << 8 | name.charAt(i);
    }
    return w;
  }

  /** @return the name a header word packs, or a hex dump if it is not one */
  static String unpack(long word) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < 8 && (word >>> (8 * i) & 0xFF) != 0; i++) {
      char c = (char) (word >>> (8 * i) & 0xFF);
      if (c <= 0x20 || c >= 0x7F) {
        return "0x" + Long.toHexString(word);
      }
      s.append(c);
    }
    return s.toString();
  }
}
