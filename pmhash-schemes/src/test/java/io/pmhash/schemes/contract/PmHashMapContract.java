package io.pmhash.schemes.contract;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.SchemeMismatchException;
import io.pmhash.map.Codec;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.PmHashMap;
import io.pmhash.map.TableOptions;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@link PmHashMap} contract every scheme with a pointer mode keeps: the map against a {@link
 * HashMap} model under seeded random operations (the seed is printed and in every failure
 * message) with String and byte[] keys and values of varying lengths, growth through splits and
 * back through merges, iteration with removal and write-through, close and reopen, the header's
 * codec check, null handling, and equals/hashCode/toString as AbstractMap's. {@code
 * -Dpmhash.seed=N} explores other sequences.
 */
public abstract class PmHashMapContract {
  @TempDir protected Path dir;

  /** @return the options of a new map (a scheme with a pointer mode) */
  protected abstract TableOptions options();

  /** @return the scheme's split counter in {@code stats().details()}, or null if it has none */
  protected String splitsDetail() {
    return "splits";
  }

  /** @return the scheme's merge counter in {@code stats().details()}, or null if it has none */
  protected String mergesDetail() {
    return "merges";
  }

  private static long seed(long fallback) {
    return Seeds.seed("PmHashMapContract", fallback);
  }

  private TableOptions fileOptions() {
    return options().withDurability(Durability.PROCESS);
  }

  static String randomString(SplittableRandom r, int maxLength) {
    int n = r.nextInt(maxLength + 1);
    StringBuilder s = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      int kind = r.nextInt(10);
      s.append(kind == 0 ? (char) (0x400 + r.nextInt(200)) : kind == 1 ? "\uD83D\uDE00" : String.valueOf((char) ('a' + r.nextInt(26))));
    }
    return s.toString();
  }

  // ------------------------------------------------------------------ random operations

  /** One random operation on map and model, results compared. */
  static <K, V> void step(Map<K, V> map, Map<K, V> model, K k, V v, V v2, int op, String at) {
    switch (op) {
      case 0, 1 -> assertEquals(model.put(k, v), map.put(k, v), at + " put");
      case 2 -> assertEquals(model.get(k), map.get(k), at + " get");
      case 3 -> assertEquals(model.putIfAbsent(k, v), map.putIfAbsent(k, v), at + " putIfAbsent");
      case 4 -> assertEquals(model.replace(k, v), map.replace(k, v), at + " replace");
      case 5 -> {
        V cur = model.get(k);
        V expected = cur != null && v2.hashCode() % 2 == 0 ? cur : v2;
        assertEquals(model.replace(k, expected, v), map.replace(k, expected, v), at + " replace(k, old, new)");
      }
      case 6 -> assertEquals(model.remove(k), map.remove(k), at + " remove");
      case 7 -> {
        V cur = model.get(k);
        V expected = cur != null && v2.hashCode() % 2 == 0 ? cur : v2;
        assertEquals(model.remove(k, expected), map.remove(k, expected), at + " remove(k, v)");
      }
      case 8 -> assertEquals(model.containsKey(k), map.containsKey(k), at + " containsKey");
      case 9 -> assertEquals(model.merge(k, v, (a, b) -> a.hashCode() % 3 == 0 ? null : b),
          map.merge(k, v, (a, b) -> a.hashCode() % 3 == 0 ? null : b), at + " merge");
      default -> assertEquals(model.computeIfAbsent(k, x -> v), map.computeIfAbsent(k, x -> v), at + " computeIfAbsent");
    }
  }

  @Test
  void stringsAgainstModelWithReopen() throws Exception {
    long seed = seed(0x5EEDA11L);
    SplittableRandom r = new SplittableRandom(seed);
    String[] keys = new String[3000];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = i + ":" + randomString(r, 40);
    }
    Map<String, String> model = new HashMap<>();
    Path file = dir.resolve("strings.pool");
    PmHashMap<String, String> map = PmHash.createMap(file, Codec.utf8(), Codec.utf8(), fileOptions());
    try {
      assertTrue(map.pointerMode());
      for (int i = 0; i < 40_000; i++) {
        String k = keys[r.nextInt(keys.length)];
        String v = randomString(r, r.nextInt(8) == 0 ? 400 : 20);
        step(map, model, k, v, randomString(r, 5), r.nextInt(11), "seed " + seed + " op " + i);
        if (i % 10_000 == 9_999) {
          assertEquals(model, map, "seed " + seed + " contents at op " + i);
          map.close();
          map = PmHash.openMap(file, Codec.utf8(), Codec.utf8(), TableOptions.any().withDurability(Durability.PROCESS));
          assertEquals(model, map, "seed " + seed + " contents after reopen at op " + i);
        }
      }
      assertEquals(model.size(), map.size());
      assertEquals(model.keySet(), map.keySet());
      assertEquals(model.entrySet(), map.entrySet());
      assertEquals(new HashMap<>(map), model);
    } finally {
      map.close();
    }
  }

  @Test
  void bytesAgainstModel() {
    long seed = seed(0xB17E5L);
    SplittableRandom r = new SplittableRandom(seed);
    Map<ByteBuffer, byte[]> model = new HashMap<>();
    try (PmHashMap<byte[], byte[]> map = PmHash.createVolatileMap(Codec.bytes(), Codec.bytes(), options())) {
      for (int i = 0; i < 20_000; i++) {
        byte[] k = new byte[r.nextInt(4) == 0 ? r.nextInt(3) : 16 + r.nextInt(2)]; // empty keys too
        if (k.length > 0) {
          k[0] = (byte) r.nextInt(40);
        }
        if (k.length > 1) {
          k[1] = (byte) r.nextInt(40);
        }
        byte[] v = new byte[r.nextInt(r.nextInt(10) == 0 ? 5000 : 40)];
        r.nextBytes(v);
        String at = "seed " + seed + " op " + i;
        ByteBuffer mk = ByteBuffer.wrap(k.clone());
        switch (r.nextInt(5)) {
          case 0, 1 -> assertArrayEquals(model.put(mk, v.clone()), map.put(k, v), at);
          case 2 -> assertArrayEquals(model.get(mk), map.get(k.clone()), at);
          case 3 -> assertArrayEquals(model.remove(mk), map.remove(k), at);
          default -> {
            byte[] cur = model.get(mk);
            boolean expected = cur != null && r.nextBoolean();
            byte[] old = expected ? cur.clone() : v;
            boolean modelReplaced = cur != null && java.util.Arrays.equals(cur, old);
            if (modelReplaced) {
              model.put(mk, v.clone());
            }
            assertEquals(modelReplaced, map.replace(k, old, v), at + " replace by content");
          }
        }
      }
      assertEquals(model.size(), map.size());
      int seen = 0;
      for (Map.Entry<byte[], byte[]> e : map.entrySet()) {
        assertArrayEquals(model.get(ByteBuffer.wrap(e.getKey())), e.getValue(), "seed " + seed);
        seen++;
      }
      assertEquals(model.size(), seen);
    }
  }

  @Test
  void growthThroughSplitsAndBackThroughMerges() {
    try (PmHashMap<String, String> map = PmHash.createVolatileMap(Codec.utf8(), Codec.utf8(), options())) {
      Map<String, String> model = new HashMap<>();
      for (int i = 0; i < 40_000; i++) {
        String k = "key-" + i + "-" + "x".repeat(i % 13);
        model.put(k, "v" + i);
        assertNull(map.put(k, "v" + i));
      }
      if (splitsDetail() != null) {
        assertTrue(map.stats().details().get(splitsDetail()) > 10, map.stats().toString());
      }
      assertEquals(model, map);
      for (int i = 0; i < 40_000; i++) {
        if (i % 97 != 0) {
          String k = "key-" + i + "-" + "x".repeat(i % 13);
          assertEquals(model.remove(k), map.remove(k));
        }
      }
      if (mergesDetail() != null) {
        assertTrue(map.stats().details().get(mergesDetail()) > 0, map.stats().toString());
      }
      assertEquals(model, map);
      assertEquals(model.size(), map.size());
    }
  }

  @Test
  void inlineMapsOfFixedWidthCodecs() {
    SplittableRandom r = new SplittableRandom(seed(0x1A11AEL));
    try (PmHashMap<Long, Long> map = PmHash.createVolatileMap(Codec.longs(), Codec.longs(), options());
        PmHashMap<Integer, Integer> ints = PmHash.createVolatileMap(Codec.ints(), Codec.ints(), options());
        PmHashMap<Long, String> mixed = PmHash.createVolatileMap(Codec.longs(), Codec.utf8(), options())) {
      assertFalse(map.pointerMode());
      assertFalse(ints.pointerMode());
      assertTrue(mixed.pointerMode());
      Map<Long, Long> model = new HashMap<>();
      Map<Integer, Integer> intModel = new HashMap<>();
      Map<Long, String> mixedModel = new HashMap<>();
      for (int i = 0; i < 20_000; i++) {
        long k = r.nextInt(2000) - 1000;
        int op = r.nextInt(11);
        // 0x5A5A5A5A5A5A5A5A and its complement are the adapter's probes: values, too
        long v = r.nextInt(20) == 0 ? 0x5A5A_5A5A_5A5A_5A5AL : r.nextInt(20) == 0 ? ~0x5A5A_5A5A_5A5A_5A5AL : r.nextLong();
        step(map, model, k, v, r.nextBoolean() ? v : r.nextLong(), op, "long op " + i);
        step(ints, intModel, (int) k, (int) v, r.nextInt(), op, "int op " + i);
        step(mixed, mixedModel, k, Long.toString(v), Long.toString(r.nextLong()), op, "mixed op " + i);
      }
      assertEquals(model, map);
      assertEquals(intModel, ints);
      assertEquals(mixedModel, mixed);
    }
  }

  @Test
  void codecsAndKindAreCheckedOnReopen() throws Exception {
    Path file = dir.resolve("codecs.pool");
    try (PmHashMap<String, byte[]> map = PmHash.createMap(file, Codec.utf8(), Codec.bytes(), fileOptions())) {
      map.put("a", new byte[] {1});
    }
    byte[] before = Files.readAllBytes(file);
    TableOptions any = TableOptions.any().withDurability(Durability.PROCESS);
    SchemeMismatchException e = assertThrows(SchemeMismatchException.class, () -> PmHash.openMap(file, Codec.utf8(), Codec.utf8(), any));
    assertTrue(e.getMessage().contains("'utf8' -> 'bytes'"), e.getMessage());
    assertThrows(SchemeMismatchException.class, () -> PmHash.openMap(file, Codec.bytes(), Codec.bytes(), any));
    Codec<String> other = Codec.of("utf8x", String.class, s -> s.getBytes(java.nio.charset.StandardCharsets.UTF_8),
        b -> new String(b, java.nio.charset.StandardCharsets.UTF_8));
    assertThrows(SchemeMismatchException.class, () -> PmHash.openMap(file, other, Codec.bytes(), any));
    e = assertThrows(SchemeMismatchException.class, () -> PmHash.open(file, any));
    assertTrue(e.getMessage().contains("pointer mode"), e.getMessage());
    assertArrayEquals(before, Files.readAllBytes(file), "a refused open writes nothing");
    try (PmHashMap<String, byte[]> map = PmHash.openMap(file, Codec.utf8(), Codec.bytes(), any)) {
      assertArrayEquals(new byte[] {1}, map.get("a"));
    }
    Path table = dir.resolve("table.pool");
    try (LongHashTable t = PmHash.create(table, fileOptions())) {
      t.put(1, 2);
    }
    assertThrows(SchemeMismatchException.class, () -> PmHash.openMap(table, Codec.longs(), Codec.longs(), any));
    Path longs = dir.resolve("longs.pool");
    try (PmHashMap<Long, Long> map = PmHash.createMap(longs, Codec.longs(), Codec.longs(), fileOptions())) {
      map.put(7L, 8L);
    }
    assertThrows(SchemeMismatchException.class, () -> PmHash.openMap(longs, Codec.ints(), Codec.longs(), any));
    try (LongHashTable t = PmHash.open(longs, any)) {
      assertEquals(8, t.get(7, -1), "an inline map is a LongHashTable");
    }
    assertThrows(IllegalArgumentException.class, () -> Codec.of("far too long", String.class, String::getBytes, String::new));
  }

  @Test
  void nullsAreRefusedAsConcurrentHashMapDoes() {
    try (PmHashMap<String, String> map = PmHash.createVolatileMap(Codec.utf8(), Codec.utf8(), options())) {
      map.put("k", "v");
      assertThrows(NullPointerException.class, () -> map.put(null, "v"));
      assertThrows(NullPointerException.class, () -> map.put("k", null));
      assertThrows(NullPointerException.class, () -> map.get(null));
      assertThrows(NullPointerException.class, () -> map.containsKey(null));
      assertThrows(NullPointerException.class, () -> map.containsValue(null));
      assertThrows(NullPointerException.class, () -> map.remove(null));
      assertThrows(NullPointerException.class, () -> map.putIfAbsent("k", null));
      assertThrows(NullPointerException.class, () -> map.replace("k", null));
      assertThrows(NullPointerException.class, () -> map.replace("k", "v", null));
      assertFalse(map.remove("k", null));
      assertNull(map.get(42), "a key of another type is absent");
      assertEquals(Map.of("k", "v"), map, "nothing changed");
    }
  }

  @Test
  void viewsIterateRemoveAndWriteThrough() {
    try (PmHashMap<String, String> map = PmHash.createVolatileMap(Codec.utf8(), Codec.utf8(), options())) {
      Map<String, String> model = new HashMap<>();
      for (int i = 0; i < 5000; i++) {
        map.put("k" + i, "v" + i);
        model.put("k" + i, "v" + i);
      }
      for (Iterator<Map.Entry<String, String>> it = map.entrySet().iterator(); it.hasNext(); ) {
        Map.Entry<String, String> e = it.next();
        int i = Integer.parseInt(e.getKey().substring(1));
        if (i % 3 == 0) {
          it.remove();
          model.remove(e.getKey());
        } else if (i % 3 == 1) {
          assertEquals("v" + i, e.setValue("w" + i));
          model.put(e.getKey(), "w" + i);
        }
        // changes during the iteration: never a ConcurrentModificationException
        map.put("new" + i, "n");
        map.remove("new" + i);
      }
      assertEquals(model, map);
      assertTrue(map.keySet().remove("k1"));
      model.remove("k1");
      assertTrue(map.values().remove("v2"));
      model.remove("k2");
      assertTrue(map.entrySet().contains(Map.entry("k4", "w4")));
      assertFalse(map.entrySet().contains(Map.entry("k4", "v4")));
      assertEquals(model, map);
      assertEquals(model.hashCode(), map.hashCode());
      assertEquals(map, model);
      Map<String, String> small = new HashMap<>(Map.of("a", "1"));
      map.clear();
      assertTrue(map.isEmpty());
      map.put("a", "1");
      assertEquals(small.toString(), map.toString());
      assertEquals(small, map);
      map.keySet().clear();
      assertEquals(0, map.size());
    }
  }

  @Test
  void computeAndMergeAreAtomicRetryLoops() {
    try (PmHashMap<String, Long> map = PmHash.createVolatileMap(Codec.utf8(), Codec.longs(), options())) {
      assertEquals(1L, map.merge("n", 1L, Long::sum));
      assertEquals(3L, map.merge("n", 2L, Long::sum));
      assertEquals(4L, map.compute("n", (k, v) -> v + 1));
      assertNull(map.computeIfPresent("n", (k, v) -> null));
      assertFalse(map.containsKey("n"));
      assertEquals(9L, map.computeIfAbsent("m", k -> 9L));
      assertEquals(9L, map.getOrDefault("m", 0L));
      map.replaceAll((k, v) -> v * 2);
      assertEquals(18L, map.get("m"));
    }
  }

  @Test
  void aSchemeWithoutPointerModeIsRefusedForVariableCodecs() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> PmHash.createVolatileMap(Codec.utf8(), Codec.utf8(), TableOptions.scheme("cceh")));
    assertTrue(e.getMessage().contains("pointer mode"), e.getMessage());
  }
}
