package io.pmhash.core.concurrent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class VersionLockTest {

  private static final ValueLayout.OfInt U32_LE =
      ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);

  @Test
  void zeroedMemoryIsUnlockedAtVersionZero() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(16, 8);
      int snapshot = VersionLock.snapshotAcquire(s, 4);
      assertFalse(VersionLock.isLocked(snapshot));
      assertEquals(0, VersionLock.versionOf(snapshot));
      assertFalse(VersionLock.isLocked(s, 4));
      assertTrue(VersionLock.validate(s, 4, snapshot));
    }
  }

  /** The two-word snapshot by address (UncheckedMemory) agrees with the segment-based protocol. */
  @Test
  void bothWordsByAddressSnapshotLockStateAndValidation() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(512, 64);
      long first = UncheckedMemory.base(s);
      long second = first + 256;
      s.set(U32_LE, 0, 7);
      s.set(U32_LE, 256, 0x7fff_fffe);
      long both = VersionLock.snapshotBothAt(first, second);
      assertEquals(7, (int) (both >>> 32), "the first word in the high half");
      assertEquals(0x7fff_fffe, (int) both, "the second in the low half, not sign-extended into the first");
      assertFalse(VersionLock.eitherLocked(both));
      assertTrue(VersionLock.unchangedBothAt(first, second, both));

      lockingOneInvalidatesBoth(s, first, second, false);
      lockingOneInvalidatesBoth(s, first, second, true);
      assertTrue(VersionLock.unchangedBothAt(first, second, VersionLock.snapshotBothAt(first, second)));
    }
  }

  /** Locks and unlocks one of the two words (at 0 and 256 of {@code s}) around a snapshot of both. */
  private static void lockingOneInvalidatesBoth(MemorySegment s, long first, long second, boolean lockFirst) {
    long offset = lockFirst ? 0 : 256;
    String which = lockFirst ? "first" : "second";
    long both = VersionLock.snapshotBothAt(first, second);
    assertTrue(VersionLock.tryLock(s, offset));
    long locked = VersionLock.snapshotBothAt(first, second);
    assertTrue(VersionLock.eitherLocked(locked));
    assertEquals(lockFirst, VersionLock.firstLocked(locked));
    assertFalse(VersionLock.unchangedBothAt(first, second, both), "a writer holds the " + which);
    VersionLock.unlock(s, offset);
    assertFalse(VersionLock.unchangedBothAt(first, second, both), "the " + which + "'s version moved on");
  }

  @Test
  void oneWordByAddressSnapshotAndValidation() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(8, 8);
      long word = UncheckedMemory.base(s) + 4;
      s.set(U32_LE, 4, 5);
      int snapshot = VersionLock.snapshotAt(word);
      assertEquals(5, snapshot);
      assertTrue(VersionLock.unchangedAt(word, snapshot));
      assertTrue(VersionLock.tryLock(s, 4));
      assertTrue(VersionLock.isLocked(VersionLock.snapshotAt(word)));
      assertFalse(VersionLock.unchangedAt(word, snapshot), "a writer is inside");
      VersionLock.unlock(s, 4);
      assertFalse(VersionLock.unchangedAt(word, snapshot), "the version moved on");
      assertEquals(6, VersionLock.snapshotAt(word));
    }
  }

  /** The lock by address takes and releases the same word the segment methods do, the same way. */
  @Test
  void lockByAddressIsTheSameLockAsBySegment() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = filledWithWordAt8(arena, 41);
      long word = UncheckedMemory.base(s) + 8;
      int before = VersionLock.snapshotAt(word);

      assertTrue(VersionLock.tryLockAt(word));
      assertEquals(VersionLock.LOCK_BIT | 41, s.get(U32_LE, 8), "the lock bit set, the version kept");
      assertFalse(VersionLock.tryLockAt(word), "not reentrant");
      assertFalse(VersionLock.tryLock(s, 8), "the segment methods see it held");
      assertFalse(VersionLock.validate(s, 8, before), "a writer is inside");
      VersionLock.unlockAt(word);
      assertEquals(42, s.get(U32_LE, 8), "one release store: lock bit cleared, version + 1");
      assertFalse(VersionLock.unchangedAt(word, before), "the version moved on");

      VersionLock.lock(s, 8); // taken through the segment, released by address, and back
      assertFalse(VersionLock.tryLockAt(word));
      VersionLock.unlockAt(word);
      VersionLock.lockAt(word);
      VersionLock.unlock(s, 8);
      assertEquals(44, s.get(U32_LE, 8));
      assertOnlyTheWordAt8Written(s);
    }
  }

  @Test
  void lockByAddressWrapsWithinThirtyOneBits() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(4, 4);
      long word = UncheckedMemory.base(s);
      s.set(U32_LE, 0, VersionLock.VERSION_MASK);
      VersionLock.lockAt(word);
      assertEquals(0xffff_ffff, s.get(U32_LE, 0));
      VersionLock.unlockAt(word);
      assertEquals(0, s.get(U32_LE, 0), "0x7fffffff + 1 wraps to 0 and the lock bit is clear");
    }
  }

  @Test
  void unlockByAddressWithoutTheLockIsRejectedAndChangesNothing() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(4, 4);
      long word = UncheckedMemory.base(s);
      s.set(U32_LE, 0, 7);
      IllegalMonitorStateException e = assertThrows(IllegalMonitorStateException.class, () -> VersionLock.unlockAt(word));
      assertTrue(e.getMessage().contains("not held"), e.getMessage());
      assertEquals(7, s.get(U32_LE, 0));
    }
  }

  @Test
  void uncheckedMemoryNeedsNativeMemory() {
    assertThrows(IllegalArgumentException.class, () -> UncheckedMemory.base(MemorySegment.ofArray(new long[4])));
  }

  @Test
  void lockUnlockBumpsTheVersionAndInvalidatesSnapshots() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(8, 8);
      int before = VersionLock.snapshotAcquire(s, 0);

      assertTrue(VersionLock.tryLock(s, 0));
      assertTrue(VersionLock.isLocked(s, 0));
      assertEquals(VersionLock.LOCK_BIT, s.get(U32_LE, 0), "lock bit only, version 0");
      assertFalse(VersionLock.tryLock(s, 0), "not reentrant");
      int locked = VersionLock.snapshotAcquire(s, 0);
      assertTrue(VersionLock.isLocked(locked));
      assertFalse(VersionLock.validate(s, 0, before), "a writer is inside");
      assertFalse(VersionLock.validate(s, 0, locked), "a locked snapshot never validates");

      VersionLock.unlock(s, 0);
      assertFalse(VersionLock.isLocked(s, 0));
      assertEquals(1, s.get(U32_LE, 0), "one release store: lock bit cleared, version + 1");
      assertFalse(VersionLock.validate(s, 0, before), "the version moved on");
      int after = VersionLock.snapshotAcquire(s, 0);
      assertEquals(1, VersionLock.versionOf(after));
      assertTrue(VersionLock.validate(s, 0, after));

      VersionLock.lock(s, 0);
      VersionLock.unlock(s, 0);
      assertEquals(2, VersionLock.versionOf(VersionLock.snapshotAcquire(s, 0)));
    }
  }

  @Test
  void theWordIsLittleEndianAndOnlyItsFourBytesAreWritten() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = filledWithWordAt8(arena, 0x0000_0102);
      VersionLock.lock(s, 8);
      assertEquals((byte) 0x80, s.get(ValueLayout.JAVA_BYTE, 11), "bit 31 is in the last byte");
      VersionLock.unlock(s, 8);
      assertEquals(0x0000_0103, s.get(U32_LE, 8));
      assertOnlyTheWordAt8Written(s);
    }
  }

  /** 16 bytes of 0x5a but for a lock word at 8..11 holding {@code word}. */
  private static MemorySegment filledWithWordAt8(Arena arena, int word) {
    MemorySegment s = arena.allocate(16, 8);
    s.fill((byte) 0x5a);
    s.set(U32_LE, 8, word);
    return s;
  }

  /** Every byte of the 16-byte {@code s} but the word at 8..11 still holds the fill 0x5a. */
  private static void assertOnlyTheWordAt8Written(MemorySegment s) {
    for (int i = 0; i < 16; i++) {
      if (i < 8 || i >= 12) {
        assertEquals((byte) 0x5a, s.get(ValueLayout.JAVA_BYTE, i), "only the word's four bytes are written: byte " + i);
      }
    }
  }

  @Test
  void versionWrapsWithinThirtyOneBits() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(4, 4);
      s.set(U32_LE, 0, VersionLock.VERSION_MASK);
      int old = VersionLock.snapshotAcquire(s, 0);
      VersionLock.lock(s, 0);
      assertEquals(0xffff_ffff, s.get(U32_LE, 0));
      VersionLock.unlock(s, 0);
      assertEquals(0, s.get(U32_LE, 0), "0x7fffffff + 1 wraps to 0 and the lock bit is clear");
      assertFalse(VersionLock.validate(s, 0, old));
      assertTrue(VersionLock.tryLock(s, 0));
      VersionLock.unlock(s, 0);
      assertEquals(1, s.get(U32_LE, 0));
    }
  }

  @Test
  void unlockWithoutTheLockIsRejectedAndChangesNothing() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(4, 4);
      s.set(U32_LE, 0, 7);
      assertThrows(IllegalMonitorStateException.class, () -> VersionLock.unlock(s, 0));
      assertEquals(7, s.get(U32_LE, 0));
    }
  }

  @Test
  void unlockFromTheHeldWordLeavesWhatThePlainUnlockLeaves() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment plain = arena.allocate(4, 4);
      MemorySegment fromHeld = arena.allocate(4, 4);
      for (int start : new int[] {0, 41, VersionLock.VERSION_MASK}) {
        plain.set(U32_LE, 0, start);
        fromHeld.set(U32_LE, 0, start);
        int old = VersionLock.snapshotAcquire(fromHeld, 0);
        VersionLock.lock(plain, 0);
        VersionLock.lock(fromHeld, 0);
        int held = VersionLock.held(fromHeld, 0);
        assertEquals(start | VersionLock.LOCK_BIT, held);
        VersionLock.unlock(plain, 0);
        VersionLock.unlock(fromHeld, 0, held);
        assertEquals(plain.get(U32_LE, 0), fromHeld.get(U32_LE, 0), "from " + start);
        assertFalse(VersionLock.isLocked(fromHeld, 0));
        assertFalse(VersionLock.validate(fromHeld, 0, old), "a reader that snapshotted before sees the change");
      }
    }
  }

  @Test
  void unlockFromAWordWithoutTheLockBitIsRejectedAndChangesNothing() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(4, 4);
      VersionLock.lock(s, 0);
      int locked = s.get(U32_LE, 0);
      assertThrows(IllegalMonitorStateException.class, () -> VersionLock.unlock(s, 0, 5));
      assertEquals(locked, s.get(U32_LE, 0));
    }
  }

  @Test
  void resetClearsALockBitLeftByACrashAndKeepsTheVersion() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(4, 4);
      s.set(U32_LE, 0, VersionLock.LOCK_BIT | 41); // as a crash inside a writer leaves it
      assertTrue(VersionLock.isLocked(s, 0));
      assertFalse(VersionLock.tryLock(s, 0));
      VersionLock.reset(s, 0);
      assertEquals(41, s.get(U32_LE, 0));
      assertTrue(VersionLock.tryLock(s, 0));
      VersionLock.unlock(s, 0);
      assertEquals(42, s.get(U32_LE, 0));
      VersionLock.reset(s, 0); // idempotent on an unlocked word
      assertEquals(42, s.get(U32_LE, 0));
    }
  }

  @Test
  void misalignedWordsAreRejected() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(16, 8);
      assertThrows(IllegalArgumentException.class, () -> VersionLock.lock(s, 2));
      assertThrows(IllegalArgumentException.class, () -> VersionLock.snapshotAcquire(s, 1));
    }
  }

  @Test
  void worksOverAHeapSegmentOfLongs() {
    MemorySegment s = MemorySegment.ofArray(new long[2]);
    VersionLock.lock(s, 12);
    VersionLock.unlock(s, 12);
    assertEquals(1, VersionLock.versionOf(VersionLock.snapshotAcquire(s, 12)));
  }

  /**
   * Four writers (two through the segment, two by address) repeatedly write a two-word record
   * {a, b} under the lock, each time storing the version the lock had when they took it into both
   * words; optimistic readers (half of them by address) check every read that validates: a == b
   * (not torn) and a == version - 1
   * (the record of exactly the last critical section before their snapshot). Writers'
   * increments are also counted through the record, so a lost update (two writers in
   * the critical section) shows in the final state.
   */
  @Test
  void optimisticReadersNeverSeeATornRecord() throws Exception {
    final int writers = 4; // two through the segment, two by address, on the same word
    final int readers = Math.max(2, Math.min(6, Runtime.getRuntime().availableProcessors()));
    final int writesPerWriter = 100_000;
    final long lock = 0;
    final long a = 8;
    final long b = 16;
    try (Arena arena = Arena.ofShared();
        ExecutorService pool = Executors.newFixedThreadPool(writers + readers)) {
      MemorySegment s = arena.allocate(64, 64);
      s.set(ValueLayout.JAVA_LONG, a, -1L);
      s.set(ValueLayout.JAVA_LONG, b, -1L);
      CountDownLatch start = new CountDownLatch(1);
      AtomicBoolean writersDone = new AtomicBoolean();
      CountDownLatch writersLeft = new CountDownLatch(writers);
      List<Future<long[]>> readerResults = new ArrayList<>();
      List<Future<?>> writerResults = new ArrayList<>();

      long lockWord = UncheckedMemory.base(s) + lock;
      for (int w = 0; w < writers; w++) {
        final boolean useTryLock = w % 2 == 1;
        final boolean byAddress = w >= 2;
        writerResults.add(
            pool.submit(
                () -> {
                  start.await();
                  try {
                    for (int i = 0; i < writesPerWriter; i++) {
                      if (byAddress && useTryLock) {
                        while (!VersionLock.tryLockAt(lockWord)) {
                          Thread.onSpinWait();
                        }
                      } else if (byAddress) {
                        VersionLock.lockAt(lockWord);
                      } else if (useTryLock) {
                        while (!VersionLock.tryLock(s, lock)) {
                          Thread.onSpinWait();
                        }
                      } else {
                        VersionLock.lock(s, lock);
                      }
                      long version = VersionLock.versionOf(s.get(U32_LE, lock));
                      long previous = s.get(ValueLayout.JAVA_LONG, a);
                      if (previous != version - 1) {
                        throw new AssertionError("lost update: " + previous + " at " + version);
                      }
                      s.set(ValueLayout.JAVA_LONG, a, version);
                      s.set(ValueLayout.JAVA_LONG, b, version);
                      if (byAddress) {
                        VersionLock.unlockAt(lockWord);
                      } else {
                        VersionLock.unlock(s, lock);
                      }
                    }
                  } finally {
                    writersLeft.countDown();
                  }
                  return null;
                }));
      }
      for (int r = 0; r < readers; r++) {
        final boolean byAddress = r % 2 == 1;
        readerResults.add(
            pool.submit(
                () -> {
                  start.await();
                  long validated = 0;
                  long retries = 0;
                  boolean last;
                  do {
                    last = writersDone.get(); // one more read after the writers finished
                    int snapshot = byAddress ? VersionLock.snapshotAt(lockWord) : VersionLock.snapshotAcquire(s, lock);
                    if (VersionLock.isLocked(snapshot)) {
                      Thread.onSpinWait();
                      retries++;
                      last = false;
                      continue;
                    }
                    long x = s.get(ValueLayout.JAVA_LONG, a);
                    long y = s.get(ValueLayout.JAVA_LONG, b);
                    boolean valid = byAddress ? VersionLock.unchangedAt(lockWord, snapshot) : VersionLock.validate(s, lock, snapshot);
                    if (!valid) {
                      retries++;
                      last = false;
                      continue;
                    }
                    validated++;
                    long expected = VersionLock.versionOf(snapshot) - 1L;
                    if (x != y || x != expected) {
                      throw new AssertionError(
                          "validated read saw a=" + x + " b=" + y + " at version " + (expected + 1));
                    }
                  } while (!last);
                  return new long[] {validated, retries};
                }));
      }
      start.countDown();
      writersLeft.await();
      writersDone.set(true);
      for (Future<?> f : writerResults) {
        f.get();
      }
      for (Future<long[]> f : readerResults) {
        assertTrue(f.get()[0] > 0, "every reader validated at least its final read");
      }
      long total = (long) writers * writesPerWriter;
      assertEquals(total, VersionLock.versionOf(VersionLock.snapshotAcquire(s, lock)));
      assertFalse(VersionLock.isLocked(s, lock));
      assertEquals(total - 1, s.get(ValueLayout.JAVA_LONG, a));
      assertEquals(total - 1, s.get(ValueLayout.JAVA_LONG, b));
    }
  }
}
