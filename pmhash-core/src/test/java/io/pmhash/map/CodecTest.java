package io.pmhash.map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The built-in codecs round-trip, name packing for the header, and refusals. */
class CodecTest {
  @Test
  void builtinsRoundTrip() {
    for (long v : new long[] {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 0x0102030405060708L}) {
      assertEquals(v, Codec.longs().decode(Codec.longs().encode(v)));
      assertEquals(8, Codec.longs().encode(v).length);
    }
    for (int v : new int[] {0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
      assertEquals(v, Codec.ints().decode(Codec.ints().encode(v)));
      assertEquals(v, BuiltinCodecs.fromBytes(Codec.ints().encode(v)), "ints sign-extend into the inline long");
    }
    assertArrayEquals(new byte[] {8, 7, 6, 5, 4, 3, 2, 1}, Codec.longs().encode(0x0102030405060708L), "little-endian");
    String s = "h\u00e9llo \uD83D\uDE00";
    assertArrayEquals(s.getBytes(StandardCharsets.UTF_8), Codec.utf8().encode(s));
    assertEquals(s, Codec.utf8().decode(Codec.utf8().encode(s)));
    byte[] b = {1, 2};
    assertNotSame(b, Codec.bytes().encode(b), "byte[] is copied in");
    assertEquals(8, BuiltinCodecs.fixedWidth(Codec.longs()));
    assertEquals(4, BuiltinCodecs.fixedWidth(Codec.ints()));
    assertEquals(0, BuiltinCodecs.fixedWidth(Codec.utf8()));
  }

  @Test
  void unpairedSurrogatesAreRefusedNotMangled() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Codec.utf8().encode("a\uD800b"));
    assertEquals(true, e.getMessage().contains("unpaired surrogate"), e.getMessage());
  }

  @Test
  void namesPackIntoOneHeaderWord() {
    for (String n : new String[] {"long", "int", "utf8", "bytes", "abcdefgh", "x"}) {
      assertEquals(n, BuiltinCodecs.unpack(BuiltinCodecs.pack(n)));
    }
    assertEquals(0x38667475L, BuiltinCodecs.pack("utf8"));
    assertThrows(IllegalArgumentException.class, () -> BuiltinCodecs.checkName(""));
    assertThrows(IllegalArgumentException.class, () -> BuiltinCodecs.checkName("nine char"));
    assertThrows(IllegalArgumentException.class, () -> BuiltinCodecs.checkName("sp ace"));
    assertThrows(IllegalArgumentException.class, () -> BuiltinCodecs.checkName("\u00e9"));
  }
}
