package io.pmhash.core.internal;

import static io.pmhash.core.internal.PoolHeader.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Every offset of the pool header equals docs/format/pool.md. */
class PoolHeaderLayoutTest {
  @Test
  void offsetsMatchTheSpec() {
    assertEquals(4096, LAYOUT.byteSize());
    assertEquals(0, MAGIC_OFFSET);
    assertEquals(8, FORMAT_VERSION_OFFSET);
    assertEquals(12, HEADER_SIZE_OFFSET);
    assertEquals(16, PAGE_SIZE_OFFSET);
    assertEquals(20, BACKEND_OFFSET);
    assertEquals(24, POOL_ID_OFFSET);
    assertEquals(32, SCHEME_NAME_OFFSET);
    assertEquals(48, SCHEME_VERSION_OFFSET);
    assertEquals(52, SCHEME_PARAM_COUNT_OFFSET);
    assertEquals(56, SCHEME_PARAMS_OFFSET);
    assertEquals(120, LANE_COUNT_OFFSET);
    assertEquals(124, LANE_SIZE_OFFSET);
    assertEquals(128, LANES_OFFSET_OFFSET);
    assertEquals(136, HEAP_OFFSET_OFFSET);
    assertEquals(144, CHUNK_SIZE_OFFSET);
    assertEquals(152, RESERVED_IMMUTABLE_OFFSET);
    assertEquals(252, CRC_OFFSET);
    assertEquals(252, CHECKED_BYTES);
    assertEquals(256, FILE_SIZE_OFFSET);
    assertEquals(264, CLEAN_SHUTDOWN_OFFSET);
    assertEquals(272, RECOVERY_EPOCH_OFFSET);
    assertEquals(280, RESERVED_MUTABLE_OFFSET);
    assertEquals(288, ALLOCATOR_WORDS_OFFSET);
    assertEquals(288 + 7 * 8, allocatorWordOffset(7));
    assertEquals(352, ROOTS_OFFSET);
    assertEquals(352 + 15 * 8, rootOffset(15));
    assertEquals(480, RESERVED_TAIL_OFFSET);
  }

  @Test
  void magicSpellsPmhashCrLf() {
    byte[] expected = {'P', 'M', 'H', 'A', 'S', 'H', '\r', '\n'};
    for (int i = 0; i < 8; i++) {
      assertEquals(expected[i], (byte) (MAGIC >>> (8 * i)), "byte " + i);
    }
  }

  @Test
  void mutableWordsAreAligned() {
    for (long off : new long[] {FILE_SIZE_OFFSET, CLEAN_SHUTDOWN_OFFSET, RECOVERY_EPOCH_OFFSET,
        ALLOCATOR_WORDS_OFFSET, ROOTS_OFFSET}) {
      assertEquals(0, off % 8, "offset " + off);
    }
  }
}
