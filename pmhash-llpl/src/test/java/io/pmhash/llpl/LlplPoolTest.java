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
    pool.allocator().publish(r, Pool.rootWord(0));
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
      assertEquals(3, pool.memory().get(ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN), 20), "backend id 3 (llpl) in the pmhash header");
    }
  }

  @Test
  void theRegionIsPmdksMappingOfTheBlockTheLlplRootNames() throws Exception {
    Path file = dir.resolve("b.pool");
    try (Pool pool = Pool.create(file, llpl(Durability.PROCESS))) {
      writeBlock(pool, 7);
    }
    // Read the same bytes through llpl's own API: block at the root handle, payload page-aligned.
    Heap heap = Heap.openHeap(file.toString());
    try {
      var block = heap.memoryBlockFromHandle(heap.getRoot());
      Method base = Class.forName("com.intel.pmem.llpl.AnyHeap").getDeclaredMethod("poolHandle");
      base.setAccessible(true);
      long payload = (long) base.invoke(heap) + heap.getRoot() + 8;
      long pad = ((payload + 4095) & -4096L) - payload;
      assertEquals(0x0A0D485341484D50L, block.getLong(pad), "the pmhash magic at the region start");
      long root0 = block.getLong(pad + Pool.rootWord(0));
      assertEquals(7, block.getLong(pad + root0), "the published block's first word, read through llpl");
    } finally {
      closeHeap(heap);
    }
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
