package io.pmhash.core.alloc;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import java.io.UncheckedIOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 9: a damaged allocator chunk header, found when the chunk is loaded (lazily, after open),
 * is reported as a {@link CorruptPoolException} (wrapped in an {@link UncheckedIOException}, as
 * the allocator's API is unchecked) naming the chunk, not as an untyped {@code
 * IllegalStateException}.
 */
class DamagedChunkHeaderTest {
  @TempDir Path dir;

  private static PoolOptions options() {
    return PoolOptions.defaults().withScheme("alloc-damage", 1).withDurability(Durability.PROCESS)
        .withGeometry(4, 1024, 64 << 10).withInitialSize(512 << 10);
  }

  @ParameterizedTest
  @ValueSource(longs = {-1L, 0x0352L, 0x3_E853L}) // all ones; a run of 3-byte blocks; a span of 1000 chunks
  void aDamagedChunkHeaderIsCorruptionWhenTheChunkLoads(long header) throws Exception {
    Path file = dir.resolve("p" + Long.toHexString(header));
    long second;
    try (Pool pool = Pool.create(file, options())) {
      Allocator a = pool.allocator();
      Reservation table = a.reserve(512);
      pool.memory().asSlice(table.offset(), 512).fill((byte) 0);
      a.publish(table, pool.rootWord(0));
      // a block of another size class: its run is a second chunk
      Reservation r = a.reserve(4096);
      a.publish(r, table.offset());
      second = r.offset();
    }
    long chunk;
    try (Pool pool = Pool.open(file, options())) {
      chunk = pool.heapOffset() + ((second - pool.heapOffset()) & -pool.chunkSize());
      pool.memory().set(ValueLayout.JAVA_LONG_UNALIGNED, chunk, header);
    }
    try (Pool pool = Pool.open(file, options())) {
      UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> pool.allocator().owned(second));
      assertInstanceOf(CorruptPoolException.class, e.getCause());
      assertTrue(e.getMessage().contains("heap chunk") && e.getMessage().contains("at offset " + chunk), e.getMessage());
    }
  }
}
