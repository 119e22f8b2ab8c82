package io.pmhash.core.concurrent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** {@link Prefetch}: one load per line, exactly the lines asked for, and nothing written. */
class PrefetchTest {

  @Test
  void linesLoadsTheFirstLongOfEachLineAndNothingBeyond() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment m = longsOfOneBit(arena);
      byte[] before = m.toArray(ValueLayout.JAVA_BYTE);
      // the first long of lines 0..3 are longs 0, 8, 16 and 24
      assertEquals(1L | 1L << 8 | 1L << 16 | 1L << 24, Prefetch.lines(m, 0, 4));
      assertEquals(1L << 9 | 1L << 17, Prefetch.lines(m, 72, 2), "from an offset inside a line: that offset, then +64");
      assertEquals(0, Prefetch.lines(m, 0, 0));
      assertThrows(IndexOutOfBoundsException.class, () -> Prefetch.lines(m, 0, 5), "a fifth line is past the segment");
      assertThrows(IndexOutOfBoundsException.class, () -> Prefetch.lines(m, 192 + 8, 1 + 1));
      Prefetch.keep(Prefetch.lines(m, 0, 4));
      assertEquals(-1, MemorySegment.mismatch(m, 0, 256, MemorySegment.ofArray(before), 0, 256), "nothing written");
    }
  }

  @Test
  void linesAtLoadsWhatLinesLoadsFromTheSameMemory() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment m = longsOfOneBit(arena);
      byte[] before = m.toArray(ValueLayout.JAVA_BYTE);
      long base = UncheckedMemory.base(m);
      assertEquals(Prefetch.lines(m, 0, 4), Prefetch.linesAt(base, 4));
      assertEquals(1L << 9 | 1L << 17, Prefetch.linesAt(base + 72, 2), "from an address inside a line: that word, then +64");
      assertEquals(0, Prefetch.linesAt(base, 0));
      assertEquals(-1, MemorySegment.mismatch(m, 0, 256, MemorySegment.ofArray(before), 0, 256), "nothing written");
    }
  }

  /** 256 bytes, 64-byte aligned: long {@code i} is {@code 1L << i}, so a fold names the longs it loaded. */
  private static MemorySegment longsOfOneBit(Arena arena) {
    MemorySegment m = arena.allocate(256, 64);
    for (long i = 0; i < 32; i++) {
      m.set(ValueLayout.JAVA_LONG, 8 * i, 1L << i);
    }
    return m;
  }
}
