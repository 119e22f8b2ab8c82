package io.pmhash.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.alloc.Reservation;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A golden pool image per format version (as HdrHistogram keeps one per log format): every
 * later pmhash must still open {@code golden/pool-v1.pool.gz} and find what {@link #write} put
 * in it, or refuse it with a clear {@link FormatVersionException}. To make the image of a new
 * format version, run {@link #currentFormatWritesTheGoldenContent} and copy {@code
 * target/golden/pool-vN.pool.gz} into {@code src/test/resources/golden/}.
 */
class GoldenPoolTest {
  static final int RECORDS = 40;

  @TempDir Path dir;

  static PoolOptions options() {
    return PoolOptions.defaults().withScheme("golden", 1, 0xC0FFEE, RECORDS)
        .withInitialSize(1 << 20).withGeometry(2, 1024, 64 << 10);
  }

  /** The content: a table of {@value #RECORDS} slots at root 0, record i = {i, i*i} of 16+i bytes. */
  static void write(Pool pool) {
    Reservation table = pool.allocator().reserve(8 * RECORDS);
    pool.memory().asSlice(table.offset(), 8 * RECORDS).fill((byte) 0);
    pool.persistence().persist(table.offset(), 8 * RECORDS);
    pool.allocator().publish(table, pool.rootWord(0));
    for (int i = 0; i < RECORDS; i++) {
      Reservation r = pool.allocator().reserve(16 + i);
      pool.memory().set(ValueLayout.JAVA_LONG, r.offset(), i);
      pool.memory().set(ValueLayout.JAVA_LONG, r.offset() + 8, (long) i * i);
      pool.persistence().persist(r.offset(), 16);
      pool.allocator().publish(r, table.offset() + 8L * i);
    }
  }

  static void check(Pool pool, int tables) {
    assertEquals("golden", pool.scheme());
    assertArrayEquals(new long[] {0xC0FFEE, RECORDS}, pool.schemeParams());
    long table = pool.root(0);
    assertTrue(pool.allocator().owned(table));
    for (int i = 0; i < RECORDS; i++) {
      long r = pool.memory().get(ValueLayout.JAVA_LONG, table + 8L * i);
      assertTrue(pool.allocator().owned(r), "record " + i);
      assertEquals(i, pool.memory().get(ValueLayout.JAVA_LONG, r));
      assertEquals((long) i * i, pool.memory().get(ValueLayout.JAVA_LONG, r + 8));
    }
    assertEquals(tables * (RECORDS + 1), pool.allocator().stats().blocksOwned());
  }

  @Test
  void formatVersion1ImageStillOpens() throws Exception {
    Path file = dir.resolve("pool-v1.pool");
    try (InputStream in = GoldenPoolTest.class.getResourceAsStream("/golden/pool-v1.pool.gz")) {
      assertNotNull(in, "golden image missing from test resources");
      Files.copy(new GZIPInputStream(in), file);
    }
    try (Pool pool = Pool.open(file, options())) {
      assertTrue(pool.lastShutdownClean(), "the golden image was closed cleanly");
      check(pool, 1);
      write(pool); // and it keeps working: a second table at root 0 (the first stays owned)
      check(pool, 2);
    }
  }

  @Test
  void currentFormatWritesTheGoldenContent() throws Exception {
    Path out = Path.of("target", "golden");
    Files.createDirectories(out);
    Path file = out.resolve("pool-v1.pool");
    Files.deleteIfExists(file);
    try (Pool pool = Pool.create(file, options())) {
      write(pool);
    }
    try (Pool pool = Pool.open(file, options())) {
      check(pool, 1);
    }
    try (OutputStream gz = new GZIPOutputStream(Files.newOutputStream(out.resolve("pool-v1.pool.gz")))) {
      Files.copy(file, gz);
    }
    assertFalse(Files.size(out.resolve("pool-v1.pool.gz")) > 64 << 10, "keep the golden image small");
  }
}
