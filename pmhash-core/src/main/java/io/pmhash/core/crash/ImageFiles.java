package io.pmhash.core.crash;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Writes crash images as sparse files: pages of zeros stay holes, so images of a mostly empty pool cost little. */
final class ImageFiles {
  private static final int PAGE = 4096;
  private static final MemorySegment ZEROS = MemorySegment.ofArray(new byte[PAGE]);

  private ImageFiles() {}

  /**
   * Writes {@code base} with the image's overrides applied to a new file of {@code image.size()}
   * bytes.
   */
  static void writeSparse(MemorySegment base, CrashImage image, Path file) throws IOException {
    long size = image.size();
    long[] offsets = image.offsets();
    long[] values = image.values();
    ByteBuffer buffer = ByteBuffer.allocate(PAGE);
    MemorySegment page = MemorySegment.ofBuffer(buffer);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      int k = 0;
      boolean lastWritten = false;
      for (long p = 0; p < size; p += PAGE) {
        int n = (int) Math.min(PAGE, size - p);
        MemorySegment.copy(base, p, page, 0, n);
        for (; k < offsets.length && offsets[k] < p + n; k++) {
          page.set(ValueLayout.JAVA_LONG_UNALIGNED, offsets[k] - p, values[k]);
        }
        lastWritten = MemorySegment.mismatch(page, 0, n, ZEROS, 0, n) >= 0;
        if (lastWritten) {
          buffer.clear().limit(n);
          writeFully(ch, buffer, p);
        }
      }
      if (!lastWritten && size > 0) {
        writeFully(ch, ByteBuffer.allocate(1), size - 1); // the length; the rest stays a hole
      }
    }
  }

  /** Maps a base image file written by {@link #writeSparse} and writes it with the overrides of {@code image}. */
  static void writeSparse(Path baseFile, CrashImage image, Path file) throws IOException {
    try (Arena arena = Arena.ofConfined();
        FileChannel ch = FileChannel.open(baseFile, StandardOpenOption.READ)) {
      if (ch.size() != image.size()) {
        throw new IllegalStateException(baseFile + " is " + ch.size() + " bytes, the image " + image.size());
      }
      MemorySegment base = ch.map(FileChannel.MapMode.READ_ONLY, 0, image.size(), arena);
      writeSparse(base, image, file);
    }
  }

  private static void writeFully(FileChannel ch, ByteBuffer buffer, long position) throws IOException {
    long at = position;
    while (buffer.hasRemaining()) {
      at += ch.write(buffer, at);
    }
  }
}
