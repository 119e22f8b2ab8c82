package io.pmhash.schemes.dash;

import static io.pmhash.schemes.dash.DashLhLayout.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Durability;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad parameters and corrupt Dash-LH tables get typed exceptions whose messages say what is
 * wrong: parameters out of range at create (naming the parameter and its range), a directory
 * entry outside the pool at open (the table left unchanged), a chain that links outside the pool
 * or in a cycle at open (instead of looping forever).
 */
class DashLhBadInputTest {
  @TempDir Path dir;

  @Test
  void parametersOutOfRangeAreRefusedByName() {
    for (String[] bad : new String[][] {{"stashBuckets", "5"}, {"firstArray", "3"}, {"firstArray", "2048"}, {"stride", "0"}, {"stride", "17"},
        {"mergeLoadPercent", "-1"}, {"mergeLoadPercent", "51"}}) {
      var e = assertThrows(IllegalArgumentException.class,
          () -> PmHash.createVolatile(TableOptions.scheme("dash-lh").withParam(bad[0], Long.parseLong(bad[1]))).close());
      assertTrue(e.getMessage().contains(bad[0]) && e.getMessage().contains(bad[1]), e.getMessage());
    }
    // the bounds themselves are accepted, and recorded: 0 never contracts
    for (long ok : new long[] {0, 50}) {
      try (var t = PmHash.createVolatile(TableOptions.scheme("dash-lh").withParam("mergeLoadPercent", ok))) {
        assertTrue(t.stats().details().get("mergeLoadPercent") == ok, t.stats().toString());
      }
    }
  }

  private Path tableWithChains() throws Exception {
    Path file = dir.resolve("t.pool");
    try (var t = (DashLhTable) PmHash.create(file, TableOptions.scheme("dash-lh").withParam("firstArray", 1).withParam("stride", 1)
        .withDurability(Durability.PROCESS))) {
      for (long i = 0; i < 5_000; i++) {
        t.put(i * 0x9E3779B97F4A7C15L, i);
      }
    }
    return file;
  }

  @Test
  void aDirectoryEntryOutsideThePoolIsRefusedAtOpenAndTheFileKept() throws Exception {
    Path file = tableWithChains();
    long header;
    try (var t = (DashLhTable) PmHash.open(file, TableOptions.any())) {
      header = t.header;
    }
    try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
      var buf = java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(1L << 50).flip();
      ch.write(buf, header + HDR_DIRECTORY + 8);
    }
    byte[] before = Files.readAllBytes(file);
    var e = assertThrows(CorruptPoolException.class, () -> PmHash.open(file, TableOptions.any()).close());
    assertTrue(e.getMessage().contains("directory entry 1"), e.getMessage());
    assertArrayEquals(before, Files.readAllBytes(file), "a refused open leaves the file unchanged");
  }

  @Test
  void aChainCycleIsCorruptionNotAnEndlessRecovery() throws Exception {
    Path file = dir.resolve("t.pool");
    Path copy = dir.resolve("crashed.pool");
    try (var t = (DashLhTable) PmHash.create(file, TableOptions.scheme("dash-lh").withParam("firstArray", 1).withParam("stride", 1)
        .withDurability(Durability.PROCESS))) {
      for (long i = 0; i < 5_000; i++) {
        t.put(i * 0x9E3779B97F4A7C15L, i);
      }
      MemorySegment m = t.pool.memory();
      long cyclic = -1;
      long next = 0;
      for (long seg : t.segmentOffsets()) {
        long head = DashLhSegment.chainHead(m, seg);
        if (head != 0) {
          next = (long) DashLayout.LONG.get(m, head + NODE_NEXT);
          DashLayout.LONG.set(m, head + NODE_NEXT, head); // a node linked to itself
          cyclic = seg;
          break;
        }
      }
      assertTrue(cyclic >= 0, "the table has a chain");
      Files.copy(file, copy); // as kill -9 leaves it: recovery will walk the chain
      DashLayout.LONG.set(m, DashLhSegment.chainHead(m, cyclic) + NODE_NEXT, next);
    }
    // open walks every chain's links before recovery runs (issue 9): refused, the file as found
    io.pmhash.schemes.contract.DamagedPools.assertRefusedUnchanged(copy, "dash-lh stash chain of a segment loops");
  }

  @Test
  void aChainLinkOutsideThePoolIsRefusedAtACleanOpen() throws Exception {
    Path file = tableWithChains();
    long link = -1;
    try (var t = (DashLhTable) PmHash.open(file, TableOptions.any())) {
      MemorySegment m = t.pool.memory();
      for (long seg : t.segmentOffsets()) {
        if (DashLhSegment.chainHead(m, seg) != 0) {
          link = seg + SEG_CHAIN;
          break;
        }
      }
    }
    assertTrue(link >= 0, "the table has a chain");
    io.pmhash.schemes.contract.DamagedPools.poke64(file, link, 1L << 40);
    io.pmhash.schemes.contract.DamagedPools.assertRefusedUnchanged(file, "dash-lh stash chain of a segment node 0", "outside the heap");
  }

  /**
   * A segment that the word says exists is ABSENT although its parent is already deeper (no crash
   * leaves this; a damaged pool can): making it ready is refused as corruption, not retried
   * forever.
   */
  @Test
  @Timeout(value = 120, unit = java.util.concurrent.TimeUnit.SECONDS)
  void anAbsentSegmentUnderADeeperParentIsCorruptionNotAnEndlessLoop() {
    try (DashLhTable t = DashLhTable.create(io.pmhash.core.Pool.createVolatile(io.pmhash.core.PoolOptions.defaults()
        .withScheme("dash-lh", DashLhLayout.LAYOUT_VERSION, 2, 1, 1)), 2, 1, 1)) {
      for (long i = 0; i < 5_000; i++) {
        t.put(i * 0x9E3779B97F4A7C15L, i);
      }
      long[] segs = t.segmentOffsets(); // every segment LIVE at its due depth
      long last = segs[segs.length - 1];
      DashLayout.LONG.setRelease(t.pool.memory(), last + SEG_SHAPE, 0L); // ABSENT
      var e = assertThrows(java.io.UncheckedIOException.class, t::size);
      assertTrue(e.getCause() instanceof CorruptPoolException && e.getMessage().contains("ABSENT"), e.getMessage());
    }
  }
}
