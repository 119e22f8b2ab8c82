package io.pmhash.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.internal.Libc;
import io.pmhash.core.internal.PoolHeader;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Lifecycle of a pool file: create, open, roots, clean marker, recovery epoch, growth. */
class PoolTest {
  @TempDir Path dir;

  static final PoolOptions OPTIONS =
      PoolOptions.defaults().withScheme("test", 3, 7, 9).withInitialSize(1 << 20).withGeometry(4, 1024, 64 << 10);

  @Test
  void headerRecordsSchemeAndGeometry() throws Exception {
    Path file = dir.resolve("a.pool");
    try (Pool p = Pool.create(file, OPTIONS)) {
      assertEquals("test", p.scheme());
      assertEquals(3, p.schemeVersion());
      assertArrayEquals(new long[] {7, 9}, p.schemeParams());
      assertEquals(4, p.laneCount());
      assertEquals(1024, p.laneSize());
      assertEquals(4096, p.lanesOffset());
      assertEquals(64 << 10, p.chunkSize());
      assertEquals(64 << 10, p.heapOffset(), "lanes end at 8 KiB, heap starts at the next chunk");
      assertEquals(1 << 20, p.size());
      assertEquals(1 << 20, Files.size(file));
    }
    try (Pool p = Pool.open(file, PoolOptions.defaults())) {
      assertEquals("test", p.scheme());
      assertArrayEquals(new long[] {7, 9}, p.schemeParams());
    }
  }

  @Test
  void rootsSurviveReopen() throws Exception {
    Path file = dir.resolve("a.pool");
    long root;
    try (Pool p = Pool.create(file, OPTIONS)) {
      root = p.heapOffset() + 128;
      p.setRoot(0, root);
      p.setRoot(15, root + 8);
      assertEquals(root, p.root(0));
    }
    try (Pool p = Pool.open(file, OPTIONS)) {
      assertEquals(root, p.root(0));
      assertEquals(root + 8, p.root(15));
      assertEquals(0, p.root(1));
    }
  }

  @Test
  void rootMustBeAnAlignedHeapOffset() throws Exception {
    try (Pool p = Pool.create(dir.resolve("a.pool"), OPTIONS)) {
      assertThrows(IllegalArgumentException.class, () -> p.setRoot(0, 8));
      assertThrows(IllegalArgumentException.class, () -> p.setRoot(0, p.heapOffset() + 4));
      assertThrows(IllegalArgumentException.class, () -> p.setRoot(0, p.size()));
      assertThrows(IndexOutOfBoundsException.class, () -> p.setRoot(16, p.heapOffset()));
      assertEquals(0, p.root(0), "a refused root changes nothing");
    }
  }

  @Test
  void cleanCloseAndCrashAreTold() throws Exception {
    Path file = dir.resolve("a.pool");
    Path crashed = dir.resolve("crashed.pool");
    try (Pool p = Pool.create(file, OPTIONS)) {
      assertTrue(p.lastShutdownClean(), "a new pool needs no recovery");
      assertEquals(1, p.recoveryEpoch());
    }
    try (Pool p = Pool.open(file, OPTIONS)) {
      assertTrue(p.lastShutdownClean());
      assertEquals(2, p.recoveryEpoch());
      // A copy taken while the pool is open is what a crash leaves behind.
      Files.copy(file, crashed);
    }
    try (Pool p = Pool.open(crashed, OPTIONS)) {
      assertFalse(p.lastShutdownClean(), "the pool was open when the copy was taken");
      assertEquals(3, p.recoveryEpoch());
    }
    try (Pool p = Pool.open(crashed, OPTIONS)) {
      assertTrue(p.lastShutdownClean());
      assertEquals(4, p.recoveryEpoch());
    }
  }

  @Test
  void createRefusesAnExistingFileAndLeavesItAlone() throws Exception {
    Path file = dir.resolve("a.pool");
    Files.write(file, new byte[] {1, 2, 3});
    assertThrows(FileAlreadyExistsException.class, () -> Pool.create(file, OPTIONS));
    assertArrayEquals(new byte[] {1, 2, 3}, Files.readAllBytes(file));
  }

  @Test
  void createNeedsAScheme() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Pool.create(dir.resolve("a.pool"), PoolOptions.defaults()));
    assertTrue(e.getMessage().contains("withScheme"), e.getMessage());
    assertFalse(Files.exists(dir.resolve("a.pool")));
  }

  @Test
  void growthKeepsOldMappingsValidAndAliased() throws Exception {
    Path file = dir.resolve("a.pool");
    // without growing ahead, so that the file's length is the pool's (growthWritesTheNextStepAhead)
    try (Pool p = Pool.create(file, OPTIONS.withGrowAhead(false))) {
      MemorySegment before = p.memory();
      long off = p.heapOffset();
      before.set(ValueLayout.JAVA_LONG, off, 42L);
      p.ensureSize(p.size() + 1);
      MemorySegment after = p.memory();
      assertEquals(5 << 18, after.byteSize(), "growth adds a quarter");
      assertEquals(5 << 18, Files.size(file));
      assertEquals(42L, after.get(ValueLayout.JAVA_LONG, off));
      before.set(ValueLayout.JAVA_LONG, off, 43L);
      assertEquals(43L, after.get(ValueLayout.JAVA_LONG, off), "both mappings show the same memory");
      after.set(ValueLayout.JAVA_LONG, (1 << 20) + 8, 44L);
      p.ensureSize(5 << 20);
      assertEquals(5 << 20, p.size(), "a request beyond the step is met exactly (in whole chunks)");
    }
    try (Pool p = Pool.open(file, OPTIONS)) {
      assertEquals(5 << 20, p.size());
      assertEquals(43L, p.memory().get(ValueLayout.JAVA_LONG, p.heapOffset()));
      assertEquals(44L, p.memory().get(ValueLayout.JAVA_LONG, (1 << 20) + 8));
    }
  }

  @Test
  void poolFullAtMaxSizeChangesNothing() throws Exception {
    Path file = dir.resolve("a.pool");
    try (Pool p = Pool.create(file, OPTIONS.withMaxSize(3 << 20).withGrowAhead(false))) {
      p.ensureSize(2 << 20);
      PoolFullException e = assertThrows(PoolFullException.class, () -> p.ensureSize((3 << 20) + 1));
      assertTrue(e.getMessage().contains("withMaxSize"), e.getMessage());
      assertEquals(2 << 20, p.size());
      assertEquals(2 << 20, Files.size(file));
      p.ensureSize(3 << 20);
      assertEquals(3 << 20, p.size(), "growth up to the limit still works");
    }
  }

  @Test
  void theNextStepIsWrittenAheadHalfAStepBeforeTheEnd() throws Exception {
    Path file = dir.resolve("a.pool");
    long chunk = 64 << 10;
    try (Pool p = Pool.create(file, OPTIONS)) {
      p.ensureSize((1 << 20) - 3 * chunk); // more than half a step (128 KiB) of room left
      p.memory().set(ValueLayout.JAVA_LONG, (1 << 20) - 8, 45L);
    } // close waits for an extension, if one had started
    assertEquals(1 << 20, Files.size(file), "nothing is written ahead with more than half a step of room");
    try (Pool p = Pool.open(file, OPTIONS)) {
      p.ensureSize((1 << 20) - chunk); // less: the step is written ahead
      assertEquals(1 << 20, p.size(), "writing ahead does not grow the pool");
    } // close waits for the extension
    assertEquals(5 << 18, Files.size(file), "the next step (a quarter) is written ahead of the pool");
    try (Pool p = Pool.open(file, OPTIONS)) {
      assertEquals(5 << 18, p.size(), "a reopen adopts the zeros written ahead");
      assertEquals(45L, p.memory().get(ValueLayout.JAVA_LONG, (1 << 20) - 8));
      assertEquals(0L, p.memory().get(ValueLayout.JAVA_LONG, (5 << 18) - 8));
      p.ensureSize((5 << 18) + 1);
      assertEquals(25 << 16, p.size(), "a growth still adds a quarter, in whole chunks");
      p.memory().set(ValueLayout.JAVA_LONG, (25 << 16) - 8, 46L);
    }
    assertEquals(25 << 16, Files.size(file), "a growth writes nothing ahead by itself");
    try (Pool p = Pool.open(file, OPTIONS)) {
      assertEquals(46L, p.memory().get(ValueLayout.JAVA_LONG, (25 << 16) - 8));
    }
  }

  @Test
  void threadsGrowingTogetherWhileStepsAreWrittenAheadKeepEveryWord() throws Exception {
    Path file = dir.resolve("a.pool");
    int threads = 4;
    int perThread = 300;
    long stride = 16 << 10; // each request asks for 16 KiB more: many thresholds and growths
    long first = 1 << 20;
    AtomicReference<Throwable> failure = new AtomicReference<>();
    try (Pool p = Pool.create(file, OPTIONS)) {
      CountDownLatch start = new CountDownLatch(1);
      Thread[] workers = new Thread[threads];
      for (int t = 0; t < threads; t++) {
        int id = t;
        workers[t] = new Thread(() -> {
          try {
            start.await();
            for (int i = 0; i < perThread; i++) {
              long end = first + (long) (i * threads + id + 1) * stride;
              p.ensureSize(end);
              p.memory().set(ValueLayout.JAVA_LONG, end - 8, end); // memory() after the growth covers it
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        });
        workers[t].start();
      }
      start.countDown();
      for (Thread w : workers) {
        w.join();
      }
      if (failure.get() != null) {
        throw new AssertionError("a growing thread failed", failure.get());
      }
    } // close waits for the last extension
    long last = first + (long) threads * perThread * stride;
    assertTrue(Files.size(file) >= last, "the file holds every request: " + Files.size(file));
    try (Pool p = Pool.open(file, OPTIONS)) {
      assertEquals(Files.size(file), p.size(), "the reopen maps the whole file");
      for (long end = first + stride; end <= last; end += stride) {
        assertEquals(end, p.memory().get(ValueLayout.JAVA_LONG, end - 8), "the word at " + (end - 8));
      }
    }
  }

  @Test
  void nothingIsWrittenAheadWhenGrowingAheadIsOff() throws Exception {
    Path file = dir.resolve("a.pool");
    try (Pool p = Pool.create(file, OPTIONS.withGrowAhead(false))) {
      p.ensureSize((1 << 20) - 1);
    }
    assertEquals(1 << 20, Files.size(file));
  }

  @Test
  void growthAheadStopsAtTheMaximumSize() throws Exception {
    Path file = dir.resolve("a.pool");
    try (Pool p = Pool.create(file, OPTIONS.withMaxSize(3 << 20))) {
      p.ensureSize(5 << 19);
      p.ensureSize((5 << 19) - 1); // written ahead: to 3 MiB, not the 3.125 MiB of a quarter
      p.ensureSize(p.size() + 1);
      assertEquals(3 << 20, p.size(), "the step is cut at the maximum");
      p.ensureSize((3 << 20) - 1); // nothing to write ahead at the maximum
      PoolFullException e = assertThrows(PoolFullException.class, () -> p.ensureSize((3 << 20) + 1));
      assertTrue(e.getMessage().contains("withMaxSize"), e.getMessage());
    }
    assertEquals(3 << 20, Files.size(file), "nothing is written past the maximum");
  }

  @Test
  void memoryIsUnusableAfterClose() throws Exception {
    Pool p = Pool.create(dir.resolve("a.pool"), OPTIONS);
    MemorySegment m = p.memory();
    p.close();
    p.close();
    assertFalse(p.isOpen());
    assertThrows(IllegalStateException.class, () -> m.get(ValueLayout.JAVA_LONG, 0));
  }

  /**
   * A close waits for the threads inside the pool's epoch section, which may read the mapping by
   * address (UncheckedMemory), before it unmaps; meanwhile memory() gives nothing accessible. No
   * clock: the reader leaves only once it has seen the close start, and the order of events is
   * asserted, not their timing.
   */
  @Test
  void closeWaitsForTheThreadsInsideTheEpochSectionBeforeUnmapping() throws Exception {
    Pool p = Pool.create(dir.resolve("a.pool"), OPTIONS);
    MemorySegment m = p.memory();
    m.set(ValueLayout.JAVA_LONG, 4096, 42);
    CountDownLatch inside = new CountDownLatch(1);
    AtomicBoolean closeReturned = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicBoolean readDuringClose = new AtomicBoolean();
    Thread reader = Thread.ofPlatform().start(() -> {
      p.epochs().enter();
      try {
        inside.countDown();
        while (p.memory() == m && !closeReturned.get()) {
          Thread.onSpinWait(); // until the close has begun waiting
        }
        assertFalse(closeReturned.get(), "close returned while a thread was inside");
        assertThrows(IllegalStateException.class, () -> p.memory().get(ValueLayout.JAVA_LONG, 0),
            "memory() during the close");
        assertEquals(42, m.get(ValueLayout.JAVA_LONG, 4096), "the mapping taken inside is still mapped");
        readDuringClose.set(true);
      } catch (Throwable t) {
        failure.set(t);
      } finally {
        p.epochs().exit();
      }
    });
    inside.await();
    p.close();
    closeReturned.set(true);
    reader.join();
    if (failure.get() != null) {
      throw new AssertionError(failure.get());
    }
    assertTrue(readDuringClose.get());
    assertSame(m, p.memory(), "after the close, the (closed) mapping again");
    assertThrows(IllegalStateException.class, () -> m.get(ValueLayout.JAVA_LONG, 0));
  }

  @Test
  void persistenceCountsLinesAndDrains() throws Exception {
    try (Pool p = Pool.create(dir.resolve("a.pool"), OPTIONS.withDurability(Durability.PMEM_EMULATED))) {
      Persistence seam = p.persistence();
      PersistenceStats before = seam.stats();
      long h = p.heapOffset();
      seam.persist(h, 64);
      seam.persist(h + 60, 8);
      seam.flush(h, 256);
      seam.flush(h, 0);
      seam.drain();
      PersistenceStats d = seam.stats().minus(before);
      assertEquals(1 + 2 + 4, d.linesFlushed());
      assertEquals(3, d.drains());
    }
  }

  @Test
  void linesSpanned() {
    assertEquals(1, Persistence.linesSpanned(0, 1));
    assertEquals(1, Persistence.linesSpanned(0, 64));
    assertEquals(2, Persistence.linesSpanned(63, 2));
    assertEquals(2, Persistence.linesSpanned(32, 64));
    assertEquals(4, Persistence.linesSpanned(256, 256));
  }

  @Test
  void volatilePoolGrowsInPlace() {
    try (Pool p = Pool.createVolatile(OPTIONS)) {
      assertEquals(Durability.VOLATILE, p.durability());
      assertEquals(null, p.path());
      MemorySegment before = p.memory();
      before.set(ValueLayout.JAVA_LONG, p.heapOffset(), 7L);
      p.ensureSize(64 << 20);
      assertEquals(64 << 20, p.size());
      assertEquals(before.address(), p.memory().address(), "growth extends the reservation in place");
      assertEquals(7L, p.memory().get(ValueLayout.JAVA_LONG, p.heapOffset()));
      p.memory().set(ValueLayout.JAVA_LONG, (64 << 20) - 8, 1L);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void volatilePoolStartsOnAHugePageBoundaryOnLinux() throws Exception {
    try (Pool p = Pool.createVolatile(OPTIONS)) {
      if (Libc.available()) {
        assertEquals(0, p.memory().address() % Libc.HUGE_PAGE, "2 MiB aligned: " + Long.toHexString(p.memory().address()));
      }
    }
  }

  @Test
  void volatileHasNoFileToCreateOrOpen() {
    assertThrows(IllegalArgumentException.class,
        () -> Pool.create(dir.resolve("v.pool"), OPTIONS.withDurability(Durability.VOLATILE)));
    assertThrows(DurabilityUnsupportedException.class,
        () -> Pool.open(dir.resolve("v.pool"), OPTIONS.withDurability(Durability.VOLATILE)));
  }

  @Test
  void recordedFileSizeFollowsGrowth() throws Exception {
    Path file = dir.resolve("a.pool");
    try (Pool p = Pool.create(file, OPTIONS)) {
      p.ensureSize(2 << 20);
      assertEquals(2 << 20, PoolHeader.u64(p.memory(), PoolHeader.FILE_SIZE_OFFSET));
    }
  }

  @Test
  void inspectReadsTheHeaderWithoutTouchingTheFile() throws Exception {
    Path file = dir.resolve("a.pool");
    try (Pool p = Pool.create(file, OPTIONS)) {
      PoolInfo open = Pool.inspect(file);
      assertFalse(open.cleanShutdown(), "inspected while " + p + " is open");
      assertEquals("test", open.scheme());
    }
    byte[] before = Files.readAllBytes(file);
    PoolInfo info = Pool.inspect(file);
    assertArrayEquals(before, Files.readAllBytes(file));
    assertEquals("test", info.scheme());
    assertEquals(3, info.schemeVersion());
    assertArrayEquals(new long[] {7, 9}, info.schemeParams());
    assertTrue(info.cleanShutdown());
    assertEquals(1, info.recoveryEpoch());
    assertEquals(1 << 20, info.recordedSize());
    Files.write(dir.resolve("junk"), new byte[100]);
    assertThrows(NotAPoolException.class, () -> Pool.inspect(dir.resolve("junk")));
  }
}
