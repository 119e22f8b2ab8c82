package io.pmhash.schemes.contract;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Durability;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.function.Executable;

/**
 * The damaged-pool tests' tools (issue 9): precise damage written into a closed pool file, and
 * the two outcomes a damaged pool may have besides working: a refused open that leaves the file
 * byte for byte as it was, or a typed failure of the first use that reaches the damage.
 */
public final class DamagedPools {
  private DamagedPools() {}

  /** @return options to reopen any scheme's file pool */
  public static TableOptions reopen() {
    return TableOptions.any().withDurability(Durability.PROCESS);
  }

  /** Writes a little-endian u64 at {@code offset} of a closed pool file. */
  public static void poke64(Path file, long offset, long value) throws IOException {
    write(file, offset, ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).flip());
  }

  /** Writes a little-endian u32 at {@code offset} of a closed pool file. */
  public static void poke32(Path file, long offset, int value) throws IOException {
    write(file, offset, ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).flip());
  }

  /** @return the little-endian u64 at {@code offset} of a closed pool file */
  public static long peek64(Path file, long offset) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
      ch.read(b, offset);
      return b.getLong(0);
    }
  }

  private static void write(Path file, long offset, ByteBuffer b) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      while (b.hasRemaining()) {
        ch.write(b, offset + b.position());
      }
    }
  }

  /**
   * Asserts that opening {@code file} is refused with a {@link CorruptPoolException} whose message
   * holds every one of {@code parts}, and that the refused open left the file byte for byte as it
   * was.
   *
   * @return the exception
   */
  public static CorruptPoolException assertRefusedUnchanged(Path file, String... parts) throws IOException {
    byte[] before = Files.readAllBytes(file);
    CorruptPoolException e = assertThrows(CorruptPoolException.class, () -> PmHash.open(file, reopen()).close(),
        "a damaged pool must be refused at open");
    for (String p : parts) {
      assertTrue(e.getMessage().contains(p), () -> "message lacks '" + p + "': " + e.getMessage());
    }
    assertArrayEquals(before, Files.readAllBytes(file), "a refused open must leave the file unchanged");
    return e;
  }

  /**
   * Asserts that {@code use} fails with an {@link UncheckedIOException} wrapping a {@link
   * CorruptPoolException} whose message holds every one of {@code parts}.
   */
  public static void assertCorruptOnUse(Executable use, String... parts) {
    UncheckedIOException e = assertThrows(UncheckedIOException.class, use);
    assertInstanceOf(CorruptPoolException.class, e.getCause(), e::getMessage);
    for (String p : parts) {
      assertTrue(e.getMessage().contains(p), () -> "message lacks '" + p + "': " + e.getMessage());
    }
  }

  /** Fills a table with {@code n} keys {@code key(i)} → {@code i}. */
  public static void fill(LongHashTable t, int n) {
    for (int i = 0; i < n; i++) {
      t.put(key(i), i);
    }
  }

  /** @return spread keys (the test's own, far from any pool offset) */
  public static long key(int i) {
    return (i + 1) * 0x9E3779B97F4A7C15L;
  }
}
