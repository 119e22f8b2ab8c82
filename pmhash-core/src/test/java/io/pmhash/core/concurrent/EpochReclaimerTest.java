package io.pmhash.core.concurrent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;

class EpochReclaimerTest {

  /** Records frees; fails on a double free. */
  private static final class Frees implements EpochReclaimer.Deallocator {
    final List<Long> freed = new ArrayList<>();

    @Override
    public synchronized void free(long offset, long size) {
      assertFalse(freed.contains(offset), "double free of " + offset);
      assertEquals(offset * 2, size, "size passed through");
      freed.add(offset);
    }

    synchronized boolean contains(long offset) {
      return freed.contains(offset);
    }

    synchronized int count() {
      return freed.size();
    }
  }

  /**
   * A thread that enters, reports that it is inside, waits for permission, and exits.
   * Latches only: the test never waits on time, and a failure to enter is reported
   * instead of leaving the test waiting.
   */
  private static final class HeldReader {
    final CountDownLatch inside = new CountDownLatch(1);
    final CountDownLatch mayExit = new CountDownLatch(1);
    volatile Throwable failure;
    final Thread thread;

    HeldReader(EpochReclaimer r) {
      thread =
          Thread.ofPlatform()
              .start(
                  () -> {
                    try {
                      r.enter();
                    } catch (Throwable t) {
                      failure = t;
                      return;
                    } finally {
                      inside.countDown();
                    }
                    try {
                      mayExit.await();
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    } finally {
                      r.exit();
                    }
                  });
    }

    void awaitInside() throws InterruptedException {
      inside.await();
      if (failure != null) {
        throw new AssertionError("reader could not enter", failure);
      }
    }

    void exitAndJoin() throws InterruptedException {
      mayExit.countDown();
      thread.join();
    }
  }

  private static void reclaimTimes(EpochReclaimer r, int times) {
    for (int i = 0; i < times; i++) {
      r.reclaim();
    }
  }

  @Test
  void withNobodyInsideABlockIsFreedAfterTwoAdvances() {
    EpochReclaimer r = new EpochReclaimer();
    Frees frees = new Frees();
    r.retire(64, 128, frees);
    assertEquals(1, r.pending());
    assertEquals(0, r.reclaim(), "one advance is not a grace period");
    assertEquals(1, r.epoch());
    assertEquals(1, r.reclaim());
    assertEquals(2, r.epoch());
    assertTrue(frees.contains(64));
    assertEquals(0, r.pending());
    assertEquals(0, r.reclaim());
  }

  @Test
  void theCallingThreadInsideHoldsBackItsBlocksUntilItExits() {
    EpochReclaimer r = new EpochReclaimer();
    Frees frees = new Frees();
    r.enter();
    assertTrue(r.isInside());
    r.retire(8, 16, frees);
    reclaimTimes(r, 10);
    assertEquals(0, frees.count(), "freed while the retiring thread is still inside");
    assertTrue(r.epoch() <= 1, "the epoch cannot pass a thread that is inside");
    r.exit();
    assertFalse(r.isInside());
    reclaimTimes(r, 3);
    assertTrue(frees.contains(8));
  }

  @Test
  void criticalSectionsNest() {
    EpochReclaimer r = new EpochReclaimer();
    Frees frees = new Frees();
    r.enter();
    r.enter();
    r.retire(1, 2, frees);
    r.exit();
    assertTrue(r.isInside());
    reclaimTimes(r, 10);
    assertEquals(0, frees.count(), "the outer section is still open");
    r.exit();
    reclaimTimes(r, 3);
    assertEquals(1, frees.count());
    assertThrows(IllegalStateException.class, r::exit, "exit without enter");
  }

  @Test
  void aSectionsExitIsTheExitOfItsEnter() {
    EpochReclaimer r = new EpochReclaimer();
    Frees frees = new Frees();
    EpochReclaimer.Section outer = r.enterSection();
    EpochReclaimer.Section inner = r.enterSection();
    assertSame(outer, inner, "one section per thread, nested by depth");
    r.retire(5, 10, frees);
    r.exit(inner);
    assertTrue(r.isInside());
    reclaimTimes(r, 10);
    assertEquals(0, frees.count(), "the outer section is still open");
    r.exit(outer);
    assertFalse(r.isInside());
    reclaimTimes(r, 3);
    assertEquals(1, frees.count());
    assertThrows(IllegalStateException.class, () -> r.exit(outer), "more exits than enters");
    // the two forms pair with each other
    r.enter();
    r.exit(r.enterSection());
    assertTrue(r.isInside());
    r.exit();
    assertFalse(r.isInside());
  }

  @Test
  void aSectionPassedToAnotherThreadOrReclaimerIsCaughtWithAssertions() throws Exception {
    assumeTrue(EpochReclaimer.class.desiredAssertionStatus(), "the check is an assertion: run with -ea (Surefire does)");
    EpochReclaimer r = new EpochReclaimer();
    EpochReclaimer other = new EpochReclaimer();
    EpochReclaimer.Section mine = r.enterSection();
    other.enter();
    assertThrows(AssertionError.class, () -> other.exit(mine));
    other.exit();
    Throwable[] seen = new Throwable[1];
    Thread t = Thread.ofPlatform().start(() -> {
      r.enter();
      try {
        r.exit(mine);
      } catch (Throwable e) {
        seen[0] = e;
      } finally {
        r.exit();
      }
    });
    t.join();
    assertTrue(seen[0] instanceof AssertionError, "another thread's exit(Section) with this thread's section: " + seen[0]);
    assertTrue(r.isInside(), "the failed exit changed nothing of this thread's section");
    r.exit(mine);
    assertFalse(r.isInside());
  }

  @Test
  void awaitOthersOutsideCountsTheOtherThreadsInsideAndWaitsForThem() throws Exception {
    EpochReclaimer r = new EpochReclaimer();
    HeldReader reader = new HeldReader(r);
    reader.awaitInside();
    r.enter();
    try {
      assertEquals(1, r.othersInside(), "the reader inside, not the caller");
    } finally {
      r.exit();
    }
    AtomicLong left = new AtomicLong(-1);
    // no deadline: the wait reads no clock and ends only when the reader has left
    Thread waiter = Thread.ofPlatform().start(() -> left.set(r.awaitOthersOutside(Long.MAX_VALUE)));
    reader.exitAndJoin();
    waiter.join();
    assertEquals(0, left.get(), "the waiter returned once the reader had left, with nobody inside");
    assertEquals(0, r.othersInside());
  }

  @Test
  void aBlockRetiredWhileAnotherThreadIsInsideWaitsForThatThreadToExit() throws Exception {
    EpochReclaimer r = new EpochReclaimer();
    Frees frees = new Frees();
    HeldReader reader = new HeldReader(r);
    reader.awaitInside();
    r.retire(100, 200, frees);
    reclaimTimes(r, 20);
    assertEquals(0, frees.count(), "freed while a reader that may hold it is inside");
    assertEquals(1, r.pending());
    assertThrows(IllegalStateException.class, r::drainAll, "drainAll while a thread is inside");
    assertThrows(IllegalStateException.class, r::close, "close while a thread is inside");
    assertEquals(1, r.pending(), "a refused drain frees nothing");
    reader.exitAndJoin();
    reclaimTimes(r, 3);
    assertTrue(frees.contains(100));
  }

  @Test
  void blocksRetiredAfterAReaderEnteredAreHeldTooButLaterOnesAreNotHeldByLaterReaders()
      throws Exception {
    EpochReclaimer r = new EpochReclaimer();
    Frees frees = new Frees();
    r.retire(1, 2, frees); // before anyone is inside
    HeldReader reader = new HeldReader(r);
    reader.awaitInside();
    r.retire(2, 4, frees); // the reader may hold this one
    reclaimTimes(r, 20);
    assertFalse(frees.contains(2));
    reader.exitAndJoin();
    reclaimTimes(r, 3);
    assertTrue(frees.contains(1));
    assertTrue(frees.contains(2));
  }

  @Test
  void aThreadThatDiedInsideDoesNotBlockReclamationAndItsSlotIsReused() throws Exception {
    EpochReclaimer r = new EpochReclaimer();
    Frees frees = new Frees();
    Thread dies = Thread.ofPlatform().start(r::enter); // never exits
    dies.join();
    r.retire(5, 10, frees);
    reclaimTimes(r, 3);
    assertTrue(frees.contains(5), "a dead thread reads nothing");
    assertEquals(0, r.participants());

    Thread.ofPlatform()
        .start(
            () -> {
              r.enter();
              r.exit();
            })
        .join();
    r.enter();
    r.exit();
    assertEquals(1, r.participants(), "the dead threads' slots were freed or reused");
  }

  @Test
  void unregisterFreesTheSlotAndEnterRegistersAgain() {
    EpochReclaimer r = new EpochReclaimer();
    r.unregister(); // not registered: nothing to do
    r.enter();
    assertEquals(1, r.participants());
    assertThrows(IllegalStateException.class, r::unregister);
    r.exit();
    r.unregister();
    assertEquals(0, r.participants());
    r.enter();
    assertEquals(1, r.participants());
    r.exit();
  }

  @Test
  void drainAllAndCloseFreeEverythingWhenNobodyIsInside() {
    EpochReclaimer r = new EpochReclaimer();
    Frees frees = new Frees();
    for (long i = 1; i <= 100; i++) {
      r.retire(i, 2 * i, frees);
    }
    r.reclaim();
    assertEquals(0, frees.count());
    assertEquals(100, r.drainAll());
    assertEquals(100, frees.count());
    assertEquals(0, r.pending());
    for (long i = 101; i <= 110; i++) {
      r.retire(i, 2 * i, frees);
    }
    r.close();
    assertEquals(110, frees.count());
    r.close(); // idempotent
    assertThrows(IllegalStateException.class, () -> r.retire(1000, 2000, frees));
  }

  @Test
  void aFailingDeallocatorDoesNotStopTheOthers() {
    EpochReclaimer r = new EpochReclaimer();
    Frees frees = new Frees();
    IllegalStateException boom = new IllegalStateException("boom");
    r.retire(1, 2, frees);
    r.retire(2, 4, (offset, size) -> {
      throw boom;
    });
    r.retire(3, 6, frees);
    IllegalStateException thrown = assertThrows(IllegalStateException.class, r::drainAll);
    assertSame(boom, thrown);
    assertTrue(frees.contains(1));
    assertTrue(frees.contains(3));
    assertEquals(0, r.pending());
  }

  /**
   * A writer repeatedly replaces the one published block (a model of a directory entry
   * pointing at a segment), retires the old one and reclaims; readers enter, read the
   * published block, announce that they hold it, check it is not freed, and withdraw
   * the announcement before exiting. The deallocator checks that no reader announces
   * the block being freed, and readers check that a block they hold is never marked
   * freed: either would be a use-after-free.
   */
  @Test
  void noBlockIsFreedWhileAReaderHoldsIt() throws Exception {
    final int readers = Math.max(2, Math.min(6, Runtime.getRuntime().availableProcessors()));
    final int blocks = 20_000;
    final long none = -1L;
    AtomicLong published = new AtomicLong(0);
    AtomicLongArray held = new AtomicLongArray(readers);
    for (int i = 0; i < readers; i++) {
      held.set(i, none);
    }
    AtomicIntegerArray freed = new AtomicIntegerArray(blocks + 1);
    AtomicLong violations = new AtomicLong();
    AtomicBoolean writerDone = new AtomicBoolean();
    EpochReclaimer r = new EpochReclaimer();
    EpochReclaimer.Deallocator check =
        (offset, size) -> {
          for (int i = 0; i < held.length(); i++) {
            if (held.get(i) == offset) {
              violations.incrementAndGet();
            }
          }
          if (freed.getAndIncrement((int) offset) != 0) {
            violations.incrementAndGet(); // double free
          }
        };
    CountDownLatch start = new CountDownLatch(1);
    try (ExecutorService pool = Executors.newFixedThreadPool(readers + 1)) {
      List<Future<Long>> readerResults = new ArrayList<>();
      for (int i = 0; i < readers; i++) {
        final int me = i;
        readerResults.add(
            pool.submit(
                () -> {
                  start.await();
                  long reads = 0;
                  while (!writerDone.get()) {
                    r.enter();
                    try {
                      long block = published.get();
                      held.set(me, block);
                      for (int k = 0; k < 4; k++) { // "read" the block a few times
                        if (freed.get((int) block) != 0) {
                          violations.incrementAndGet();
                        }
                      }
                      held.set(me, none);
                    } finally {
                      r.exit();
                    }
                    if (++reads % 64 == 0) {
                      r.reclaim(); // readers help, concurrently with the writer
                    }
                  }
                  return reads;
                }));
      }
      Future<?> writer =
          pool.submit(
              () -> {
                try {
                  start.await();
                  for (long next = 1; next <= blocks; next++) {
                    long old = published.getAndSet(next); // unlink
                    r.retire(old, 0, check);
                    r.reclaim();
                  }
                } finally {
                  writerDone.set(true); // readers stop even if the writer failed
                }
                return null;
              });
      start.countDown();
      writer.get();
      for (Future<Long> f : readerResults) {
        f.get();
      }
    }
    assertEquals(0, violations.get(), "use-after-free or double free");
    r.close();
    for (int b = 0; b < blocks; b++) {
      assertEquals(1, freed.get(b), "block " + b + " freed exactly once");
    }
    assertEquals(0, freed.get(blocks), "the block still published is not retired");
    assertEquals(0, r.pending());
  }
}
