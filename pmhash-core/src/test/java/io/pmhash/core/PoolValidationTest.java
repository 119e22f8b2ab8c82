package io.pmhash.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pmhash.core.crash.Evidence;
import io.pmhash.core.internal.PoolHeader;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad input on open: every header byte flipped, truncation, random bytes, other versions and
 * schemes, a second opener. Each gets a typed exception, and the file is not modified.
 */
class PoolValidationTest {
  @TempDir Path dir;

  private Path freshPool() throws Exception {
    Path file = dir.resolve("p" + System.identityHashCode(new Object()) + ".pool");
    try (Pool p = Pool.create(file, PoolTest.OPTIONS)) {
      p.setRoot(0, p.heapOffset());
    }
    return file;
  }

  private static <T extends Exception> T refused(Class<T> type, Path file, PoolOptions options) throws Exception {
    byte[] before = Files.readAllBytes(file);
    T e = assertThrows(type, () -> Pool.open(file, options).close());
    assertArrayEquals(before, Files.readAllBytes(file), "a failed open must not modify the file");
    assertTrue(e.getMessage().contains(file.toString()), "the message names the file: " + e.getMessage());
    return e;
  }

  @Test
  void everyHeaderByteFlippedIsRefusedOrHarmless() throws Exception {
    Path file = freshPool();
    byte[] good = Files.readAllBytes(file);
    // Mutable words whose every value is legal: a flipped byte there is a different, valid
    // state (the allocator validates its own words when it opens).
    TreeSet<Long> accepted = new TreeSet<>();
    List<String> wrong = new ArrayList<>();
    for (int i = 0; i < PoolHeader.HEADER_SIZE; i++) {
      byte[] bad = good.clone();
      bad[i] ^= (byte) 0xFF;
      Path f = dir.resolve("flip.pool");
      Files.write(f, bad);
      try {
        Pool.open(f, PoolTest.OPTIONS).close();
        accepted.add((long) i);
      } catch (PoolException e) {
        if (!(e instanceof NotAPoolException || e instanceof FormatVersionException
            || e instanceof CorruptPoolException || e instanceof TruncatedPoolException)) {
          wrong.add(i + ": " + e);
        }
        if (!java.util.Arrays.equals(bad, Files.readAllBytes(f))) {
          wrong.add(i + ": file modified by a failed open");
        }
      }
      Files.delete(f);
    }
    assertEquals(List.of(), wrong);
    for (long i : accepted) {
      boolean epoch = i >= PoolHeader.RECOVERY_EPOCH_OFFSET && i < PoolHeader.RECOVERY_EPOCH_OFFSET + 8;
      boolean allocator = i >= PoolHeader.ALLOCATOR_WORDS_OFFSET && i < PoolHeader.ROOTS_OFFSET;
      boolean root = i >= PoolHeader.ROOTS_OFFSET && i < PoolHeader.ROOTS_OFFSET + 8 * PoolHeader.ROOT_COUNT
          && stillAHeapOffset(good, i);
      if (!epoch && !allocator && !root) {
        fail("flipping header byte " + i + " was accepted; accepted bytes: " + accepted);
      }
    }
    Evidence.record("bad input", "core", "headerBytesFlipped", PoolHeader.HEADER_SIZE,
        "refused", PoolHeader.HEADER_SIZE - accepted.size(), "acceptedAsLegalStates", accepted.size());
  }

  /** A root is only checked to be an aligned heap offset; the scheme checks what it points to. */
  private static boolean stillAHeapOffset(byte[] header, long flippedByte) {
    java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(header).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    long word = (flippedByte - PoolHeader.ROOTS_OFFSET) / 8 * 8 + PoolHeader.ROOTS_OFFSET;
    long flipped = b.getLong((int) word) ^ (0xFFL << (8 * (flippedByte - word)));
    long heap = b.getLong((int) PoolHeader.HEAP_OFFSET_OFFSET);
    long size = b.getLong((int) PoolHeader.FILE_SIZE_OFFSET);
    return flipped == 0 || (flipped >= heap && flipped < size && (flipped & 7) == 0);
  }

  @Test
  void checksumDamageIsCorruption() throws Exception {
    Path file = freshPool();
    patch(file, PoolHeader.SCHEME_PARAMS_OFFSET, 1);
    CorruptPoolException e = refused(CorruptPoolException.class, file, PoolTest.OPTIONS);
    assertTrue(e.getMessage().contains("checksum"), e.getMessage());
  }

  @Test
  void otherFormatVersionIsNamed() throws Exception {
    Path file = freshPool();
    patchInt(file, PoolHeader.FORMAT_VERSION_OFFSET, 2);
    FormatVersionException e = refused(FormatVersionException.class, file, PoolTest.OPTIONS);
    assertTrue(e.getMessage().contains("version 2"), e.getMessage());
  }

  @Test
  void otherSchemeIsNamed() throws Exception {
    Path file = freshPool();
    SchemeMismatchException e = refused(SchemeMismatchException.class, file,
        PoolOptions.defaults().withScheme("cceh", 3));
    assertTrue(e.getMessage().contains("'test'") && e.getMessage().contains("'cceh'"), e.getMessage());
    refused(SchemeMismatchException.class, file, PoolOptions.defaults().withScheme("test", 4));
  }

  @Test
  void truncatedFilesAreRefusedAndNotExtended() throws Exception {
    Path file = freshPool();
    long full = Files.size(file);
    long[] lengths = {0, 5, 8, 100, 4095, 4096, full / 2, full - 1};
    for (long len : lengths) {
      Path f = dir.resolve("t" + len + ".pool");
      Files.copy(file, f);
      try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
        raf.setLength(len);
      }
      Exception e = refused(PoolException.class, f, PoolTest.OPTIONS);
      if (len < 8) {
        assertInstanceOf(NotAPoolException.class, e, "length " + len);
      } else {
        assertInstanceOf(TruncatedPoolException.class, e, "length " + len);
      }
      assertEquals(len, Files.size(f), "open must not extend a truncated file");
    }
    Evidence.record("bad input", "core", "truncatedLengths", lengths.length);
  }

  @Test
  void randomBytesAndEmptyFilesAreNotPools() throws Exception {
    Random random = new Random(1234);
    for (int len : new int[] {0, 64, 4096, 1 << 20}) {
      byte[] junk = new byte[len];
      random.nextBytes(junk);
      Path f = dir.resolve("junk" + len);
      Files.write(f, junk);
      refused(NotAPoolException.class, f, PoolTest.OPTIONS);
    }
    Path zeros = dir.resolve("zeros");
    Files.write(zeros, new byte[1 << 20]);
    NotAPoolException e = refused(NotAPoolException.class, zeros, PoolTest.OPTIONS);
    assertTrue(e.getMessage().contains("interrupted"), e.getMessage());
  }

  @Test
  void rootOutsideTheFileIsCorruption() throws Exception {
    Path file = freshPool();
    patchLong(file, PoolHeader.rootOffset(3), 1L << 40);
    CorruptPoolException e = refused(CorruptPoolException.class, file, PoolTest.OPTIONS);
    assertTrue(e.getMessage().contains("root 3"), e.getMessage());
  }

  @Test
  void longerFileThanRecordedIsAnInterruptedGrowth() throws Exception {
    Path file = freshPool();
    long recorded = Files.size(file);
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
      raf.setLength(recorded + (256 << 10));
    }
    try (Pool p = Pool.open(file, PoolTest.OPTIONS)) {
      assertEquals(recorded + (256 << 10), p.size(), "the zero tail is adopted");
      assertEquals(p.heapOffset(), p.root(0));
    }
  }

  @Test
  void aDirectoryIsNeitherOpenedNorCreatedOver() throws Exception {
    Path d = Files.createDirectory(dir.resolve("a-directory"));
    PoolException e = assertThrows(PoolException.class, () -> Pool.open(d, PoolTest.OPTIONS));
    assertTrue(e.getMessage().contains("is a directory"), e.getMessage());
    FileAlreadyExistsException c = assertThrows(FileAlreadyExistsException.class, () -> Pool.create(d, PoolTest.OPTIONS));
    assertTrue(c.getMessage().contains("a directory is there"), c.getMessage());
    try (var children = Files.list(d)) {
      assertEquals(0, children.count(), "the directory is left as it was");
    }
  }

  /**
   * A pool is always mapped read-write, so a file that cannot be written is refused with a typed
   * exception and left unchanged. The file is made read-only by its mode; when that does not stop
   * the writer (root ignores modes), by a read-only bind mount of its directory.
   */
  @Test
  void aReadOnlyFileIsRefusedAndLeftAlone() throws Exception {
    Path sub = Files.createDirectory(dir.resolve("read-only"));
    Path file = sub.resolve("p.pool");
    try (Pool p = Pool.create(file, PoolTest.OPTIONS)) {
      p.setRoot(0, p.heapOffset());
    }
    byte[] before = Files.readAllBytes(file);
    boolean mounted = false;
    try {
      assertTrue(file.toFile().setWritable(false, false));
      if (Files.isWritable(file)) {
        mounted = run("mount", "--bind", sub.toString(), sub.toString())
            && run("mount", "-o", "remount,ro,bind", sub.toString());
        Assumptions.assumeTrue(mounted, "running as root and not allowed to mount: cannot make a file this process may not write");
      }
      PoolException e = assertThrows(PoolException.class, () -> Pool.open(file, PoolTest.OPTIONS));
      assertTrue(e.getMessage().contains("read-write") && e.getMessage().contains(file.toString()), e.getMessage());
      assertArrayEquals(before, Files.readAllBytes(file), "a refused open must not modify the file");
    } finally {
      if (mounted) {
        run("umount", sub.toString());
      }
      file.toFile().setWritable(true, false);
    }
    Pool.open(file, PoolTest.OPTIONS).close();
  }

  private static boolean run(String... command) throws Exception {
    Process p;
    try {
      p = new ProcessBuilder(command).redirectErrorStream(true).start();
    } catch (java.io.IOException noSuchCommand) {
      return false;
    }
    p.getInputStream().readAllBytes();
    return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
  }

  @Test
  void secondOpenerInThisJvmIsRefused() throws Exception {
    Path file = freshPool();
    try (Pool p = Pool.open(file, PoolTest.OPTIONS)) {
      PoolLockedException e = assertThrows(PoolLockedException.class, () -> Pool.open(file, PoolTest.OPTIONS));
      assertTrue(e.getMessage().contains("already open in this JVM"), e.getMessage());
      assertEquals(p.heapOffset(), p.root(0), "the first opener is unaffected");
    }
    Pool.open(file, PoolTest.OPTIONS).close();
  }

  @Test
  void openerInAnotherProcessIsRefused() throws Exception {
    Path file = freshPool();
    Path holder = dir.resolve("LockHolder.java");
    Files.writeString(holder, """
        import java.nio.channels.FileChannel;
        import java.nio.file.*;
        public class LockHolder {
          public static void main(String[] a) throws Exception {
            try (FileChannel c = FileChannel.open(Path.of(a[0]), StandardOpenOption.READ, StandardOpenOption.WRITE);
                 var lock = c.lock()) {
              System.out.println("locked");
              System.out.flush();
              System.in.read();
            }
          }
        }
        """);
    String java = ProcessHandle.current().info().command().orElseThrow();
    Process child = new ProcessBuilder(java, holder.toString(), file.toString()).redirectErrorStream(true).start();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      assertEquals("locked", out.readLine());
      PoolLockedException e = refused(PoolLockedException.class, file, PoolTest.OPTIONS);
      assertTrue(e.getMessage().contains("another process"), e.getMessage());
    } finally {
      child.getOutputStream().close();
      child.waitFor();
    }
    Pool.open(file, PoolTest.OPTIONS).close();
  }

  private static void patch(Path file, long offset, int xor) throws Exception {
    byte[] b = Files.readAllBytes(file);
    b[(int) offset] ^= (byte) xor;
    Files.write(file, b);
  }

  private static void patchInt(Path file, long offset, int value) throws Exception {
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
      raf.seek(offset);
      raf.write(new byte[] {(byte) value, (byte) (value >> 8), (byte) (value >> 16), (byte) (value >> 24)});
    }
  }

  private static void patchLong(Path file, long offset, long value) throws Exception {
    patchInt(file, offset, (int) value);
    patchInt(file, offset + 4, (int) (value >>> 32));
  }
}
