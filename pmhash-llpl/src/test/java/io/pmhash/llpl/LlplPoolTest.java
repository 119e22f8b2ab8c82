package io.pmhash.llpl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.intel.pmem.llpl.Heap;
import io.pmhash.core.BackendMismatchException;
import io.pmhash.core.Durability;
import io.pmhash.core.DurabilityUnsupportedException;
import io.pmhash.core.NotAPoolException;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolFullException;
import io.pmhash.core.PoolInfo;
import io.pmhash.core.PoolLockedException;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.alloc.Reservation;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The llpl backend under the pool API: a pool created with {@code withBackend("llpl")} is a PMDK
 * pool file whose one block holds a pmhash pool (backend id 3), reached at PMDK's own addresses;
 * it reopens with its contents, after a clean close and after a crash (a copy of the file taken
 * while open, in PROCESS mode); wrong backends, durabilities and files are refused with typed
 * exceptions that leave the file unchanged.
 */
class LlplPoolTest {
  @TempDir Path dir;

  private static PoolOptions llpl(Durability mode) {
    return PoolOptions.defaults().withScheme("test", 1).withBackend("llpl").withDurability(mode)
        .withInitialSize(8L << 20);
  }

  /** Publishes a 256-byte block at root 0 holding {@code seed + i} in word i. */
  private static long writeBlock(Pool pool, long seed) {
    Reservation r = pool.allocator().reserve(256);
    for (int i = 0; i < 32; i++) {
      pool.memory().set(ValueLayout.JAVA_LONG, r.offset() + 8L * i, seed + i);
    }
    pool.persistence().flush(r.offset(), 256);
    pool.allocator().publish(r, pool.rootWord(0));
    return r.offset();
  }

  private static void checkBlock(Pool pool, long seed) {
    long block = pool.root(0);
    assertTrue(pool.allocator().owned(block), "the published block is owned after reopen");
    for (int i = 0; i < 32; i++) {
      assertEquals(seed + i, pool.memory().get(ValueLayout.JAVA_LONG, block + 8L * i), "word " + i);
    }
  }

  @Test
  void createCloseReopenKeepsContentsInAPmdkPoolFile() throws Exception {
    Path file = dir.resolve("a.pool");
    long block;
    try (Pool pool = Pool.create(file, llpl(Durability.PMEM_EMULATED))) {
      assertEquals(Durability.PMEM_EMULATED, pool.durability());
      assertTrue(pool.persistence().describe().contains("native"), pool.persistence().describe());
      block = writeBlock(pool, 1000);
      assertTrue(pool.size() >= 8L << 20, "the region holds the initial size");
    }
    assertEquals(0x004A424F4D454D50L, firstWord(file), "a PMDK pool file: starts with PMEMOBJ\\0");
    try (Pool pool = Pool.open(file, PoolOptions.defaults().withDurability(Durability.PMEM_EMULATED))) {
      assertTrue(pool.lastShutdownClean());
      assertEquals("test", pool.scheme());
      assertEquals(block, pool.root(0));
      checkBlock(pool, 1000);
      assertEquals(3, pool.memory().get(ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN), pool.headerOffset() + 20), "backend id 3 (llpl) in the pmhash header");
    }
  }

  @Test
  void theRegionIsPmdksWholeMappingAndThePoolIsTheBlockTheLlplRootNames() throws Exception {
    Path file = dir.resolve("b.pool");
    long header;
    long rootWord;
    long end;
    try (Pool pool = Pool.create(file, llpl(Durability.PROCESS))) {
      writeBlock(pool, 7);
      header = pool.headerOffset();
      rootWord = pool.rootWord(0);
      end = pool.size();
      assertEquals(Files.size(file), pool.memory().byteSize(), "the memory is PMDK's mapping of the whole file");
      assertEquals(0x004A424F4D454D50L, pool.memory().get(ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN), 0),
          "region offset 0 is PMDK's pool header (PMEMOBJ\\0), not pmhash's");
      assertEquals(0x0A0D485341484D50L, pool.memory().get(ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN), header),
          "pmhash's magic at the header offset");
      assertTrue(pool.lanesOffset() == header + 4096 && pool.heapOffset() > header && end <= pool.memory().byteSize(),
          "lanes, heap and end are offsets in PMDK's mapping, past the header");
    }
    // Read the same bytes through llpl's own API: llpl handles are PMDK offsets from the pool's
    // base, and the pmhash header is at the root block's payload rounded up to a page.
    Heap heap = Heap.openHeap(file.toString());
    try {
      long h = heap.getRoot();
      var block = heap.memoryBlockFromHandle(h);
      long payload = h + 8;
      assertEquals((payload + 4095) & -4096L, header, "the header is at the root block's page-aligned payload");
      assertTrue(end <= payload + block.size(), "the pool ends inside the block");
      assertEquals(0x0A0D485341484D50L, block.getLong(header - payload), "the pmhash magic, read through llpl");
      long root0 = block.getLong(rootWord - payload);
      assertEquals(7, block.getLong(root0 - payload), "the published block's first word, read through llpl at its PMDK offset");
    } finally {
      closeHeap(heap);
    }
  }

  @Test
  void anObjectPmdkAllocatesBesideThePoolHasAValidPoolOffset() throws Exception {
    Path file = dir.resolve("pmdk-object.pool");
    long header;
    long end;
    try (Pool pool = Pool.create(file, llpl(Durability.PROCESS))) {
      header = pool.headerOffset();
      end = pool.size();
    }
    // PMDK allocates a block in its own free space (not pmhash's block) and llpl writes it.
    Heap heap = Heap.openHeap(file.toString());
    long handle;
    try {
      var block = heap.allocateMemoryBlock(4096, false);
      for (int i = 0; i < 512; i++) {
        block.setLong(8L * i, 0x5eed0000L + i);
      }
      block.flush(0, 4096);
      handle = block.handle();
    } finally {
      closeHeap(heap);
    }
    long payload = handle + 8; // llpl's size word, then the payload: a PMDK offset
    assertTrue(payload + 4096 <= header || payload >= end,
        "PMDK put the block outside pmhash's extent [" + header + ", " + end + "): at " + payload);
    // Its PMDK offset is a pmhash offset: the pool reads and writes it in place.
    try (Pool pool = Pool.open(file, PoolOptions.defaults())) {
      for (int i = 0; i < 512; i++) {
        assertEquals(0x5eed0000L + i, pool.memory().get(ValueLayout.JAVA_LONG, payload + 8L * i), "word " + i);
      }
      pool.memory().set(ValueLayout.JAVA_LONG, payload, 99);
      pool.persistence().persist(payload, 8);
    }
    Heap again = Heap.openHeap(file.toString());
    try {
      assertEquals(99, again.memoryBlockFromHandle(handle).getLong(0), "llpl reads pmhash's store at the same offset");
    } finally {
      closeHeap(again);
    }
  }

  @Test
  void anLlplPoolWithBlockRelativeOffsetsIsRefused() throws Exception {
    // A header as an earlier pmhash wrote it into the llpl block: its lanes offset relative to the
    // block (4096), not to PMDK's mapping. Header bytes (docs/format/pool.md): lanesOffset at 128,
    // the CRC-32C of bytes [0, 252) at 252.
    Path file = dir.resolve("old.pool");
    long header;
    try (Pool pool = Pool.create(file, llpl(Durability.PROCESS))) {
      header = pool.headerOffset();
    }
    Heap heap = Heap.openHeap(file.toString());
    try {
      long payload = heap.getRoot() + 8;
      var block = heap.memoryBlockFromHandle(heap.getRoot());
      long at = header - payload;
      block.setLong(at + 128, 4096);
      byte[] checked = new byte[252];
      for (int i = 0; i < checked.length; i++) {
        checked[i] = block.getByte(at + i);
      }
      java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
      crc.update(checked);
      block.setInt(at + 252, (int) crc.getValue());
      block.flush(at, 4096);
    } finally {
      closeHeap(heap);
    }
    io.pmhash.core.CorruptPoolException e = assertThrows(io.pmhash.core.CorruptPoolException.class,
        () -> Pool.open(file, PoolOptions.defaults()));
    assertTrue(e.getMessage().contains("recreate the pool"), e.getMessage());
  }

  @Test
  void aCopyTakenWhileOpenIsRecoveredLikeAKill() throws Exception {
    Path file = dir.resolve("c.pool");
    Path crashed = dir.resolve("crashed.pool");
    try (Pool pool = Pool.create(file, llpl(Durability.PROCESS))) {
      writeBlock(pool, 42);
      Files.copy(file, crashed); // PROCESS: every completed store is in the page cache
    }
    try (Pool pool = Pool.open(crashed, PoolOptions.defaults())) {
      assertFalse(pool.lastShutdownClean());
      checkBlock(pool, 42);
    }
  }

  @Test
  void inspectReadsTheHostedHeader() throws Exception {
    Path file = dir.resolve("d.pool");
    Pool.create(file, llpl(Durability.PROCESS)).close();
    PoolInfo info = Pool.inspect(file);
    assertEquals("test", info.scheme());
    assertTrue(info.cleanShutdown());
  }

  @Test
  void aWrongBackendIsRefusedAndTheFileLeftAlone() throws Exception {
    Path hosted = dir.resolve("e.pool");
    Pool.create(hosted, llpl(Durability.PROCESS)).close();
    byte[] before = Files.readAllBytes(hosted);
    BackendMismatchException e = assertThrows(BackendMismatchException.class,
        () -> Pool.open(hosted, PoolOptions.defaults().withBackend("ffm")));
    assertTrue(e.getMessage().contains("'llpl'") && e.getMessage().contains("'ffm'"), e.getMessage());
    assertArrayEquals(before, Files.readAllBytes(hosted));

    Path file = dir.resolve("f.pool");
    Pool.create(file, PoolOptions.defaults().withScheme("test", 1).withDurability(Durability.PROCESS)).close();
    byte[] ffm = Files.readAllBytes(file);
    assertThrows(BackendMismatchException.class, () -> Pool.open(file, PoolOptions.defaults().withBackend("llpl")));
    assertArrayEquals(ffm, Files.readAllBytes(file));
  }

  @Test
  void msyncAndPmemAreRefusedBeforeAnyFileIsMade() {
    for (Durability mode : new Durability[] {Durability.MSYNC, Durability.PMEM}) {
      Path file = dir.resolve("g-" + mode + ".pool");
      DurabilityUnsupportedException e = assertThrows(DurabilityUnsupportedException.class, () -> Pool.create(file, llpl(mode)));
      assertTrue(e.getMessage().contains("PMEM_EMULATED"), e.getMessage());
      assertFalse(Files.exists(file));
    }
  }

  @Test
  void theSizeIsFixedAtCreate() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("h.pool"), llpl(Durability.PROCESS))) {
      PoolFullException e = assertThrows(PoolFullException.class, () -> pool.ensureSize(pool.size() + 1));
      assertTrue(e.getMessage().contains("withInitialSize"), e.getMessage());
      assertTrue(pool.isOpen());
    }
  }

  @Test
  void aSecondOpenerIsRefused() throws Exception {
    Path file = dir.resolve("i.pool");
    try (Pool pool = Pool.create(file, llpl(Durability.PROCESS))) {
      assertThrows(PoolLockedException.class, () -> Pool.open(file, PoolOptions.defaults()));
      assertTrue(pool.isOpen());
    }
  }

  @Test
  void anLlplHeapWithoutAPoolIsNotAPool() throws Exception {
    Path file = dir.resolve("j.pool");
    closeHeap(Heap.createHeap(file.toString(), 32L << 20));
    // pmemobj_open itself writes PMDK's metadata (found here: a heap word at byte 6152), so
    // unlike an FFM file the bytes are not all unchanged; pmhash writes nothing to it.
    NotAPoolException e = assertThrows(NotAPoolException.class, () -> Pool.open(file, PoolOptions.defaults()));
    assertTrue(e.getMessage().contains("without a pmhash pool"), e.getMessage());
    Heap again = Heap.openHeap(file.toString());
    assertEquals(0, again.getRoot(), "no root was linked by the refused open");
    closeHeap(again);
  }

  @Test
  void anExistingFileIsNotOverwritten() throws Exception {
    Path file = dir.resolve("k.pool");
    Files.writeString(file, "keep me");
    assertThrows(java.nio.file.FileAlreadyExistsException.class, () -> Pool.create(file, llpl(Durability.PROCESS)));
    assertEquals("keep me", Files.readString(file));
  }

  /** llpl 1.2.0 has no public close; pmhash-llpl closes through the same package-private method. */
  private static void closeHeap(Heap heap) throws Exception {
    Method close = Class.forName("com.intel.pmem.llpl.AnyHeap").getDeclaredMethod("close");
    close.setAccessible(true);
    close.invoke(heap);
  }

  private static long firstWord(Path file) throws Exception {
    try (FileChannel ch = FileChannel.open(file)) {
      ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
      ch.read(b, 0);
      return b.getLong(0);
    }
  }
}
