package io.pmhash.core.concurrent;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The optimistic version lock of Dash §4.4: one 32-bit word in (persistent) memory,
 * a lock bit and a version, locked by writers with a CAS and never written by
 * readers.
 *
 * <pre>
 *   bit  31   30                                                  0
 *       +----+-----------------------------------------------------+
 *       |lock|                 version (31 bits)                   |
 *       +----+-----------------------------------------------------+
 *   u32, little-endian, 4-byte aligned (a CAS needs alignment)
 * </pre>
 *
 * <p>A writer {@linkplain #lock locks} by setting the lock bit with a CAS from an
 * unlocked value, writes, and {@linkplain #unlock unlocks} with a single release store
 * that clears the lock bit and adds one to the version (wrapping within 31 bits), as
 * the paper prescribes ("in one step using an atomic write"). A reader takes a
 * snapshot, waits while it is locked, reads without locking, and then validates that
 * the word is unchanged; otherwise it retries the whole read:
 *
 * <pre>{@code
 * for (;;) {
 *   int snapshot = VersionLock.snapshotAcquire(segment, lockOffset);
 *   if (VersionLock.isLocked(snapshot)) {
 *     Thread.onSpinWait();
 *     continue;
 *   }
 *   long value = ...;                        // plain reads of the protected data
 *   if (VersionLock.validate(segment, lockOffset, snapshot)) {
 *     return value;                          // no writer intervened
 *   }
 * }
 * }</pre>
 *
 * <p>The data read between snapshot and validation may be torn or stale and must not
 * be acted on (dereferenced, used as an index without a bounds check) before the
 * validation succeeds. A version that wraps all the way round (2<sup>31</sup> unlocks)
 * during one read goes unnoticed; at tens of nanoseconds per critical section that is
 * tens of seconds inside one read, which Dash accepts too.
 *
 * <p><b>Memory ordering.</b> {@link #lock}/{@link #tryLock} CAS with volatile semantics
 * and then issue a {@link VarHandle#storeStoreFence() store-store fence}, so no store of
 * the critical section becomes visible before the lock bit ({@code StampedLock} does
 * the same). {@link #unlock} is a {@code setRelease}: every store of the critical
 * section is visible before the new version. {@link #snapshotAcquire} is a
 * {@code getAcquire}, so the data reads cannot move above it, and {@link #validate}
 * issues an {@link VarHandle#acquireFence() acquire fence} before re-reading, so they
 * cannot move below it: the seqlock protocol of {@code StampedLock.validate}.
 *
 * <p><b>Persistence and recovery.</b> The lock word is never flushed: a lock held at a
 * crash stays set in the persistent image, and nobody will ever release it. Recovery
 * must therefore {@link #reset} every lock word it finds (Dash resets bucket locks
 * during its lazy segment recovery, §4.8), before any other thread can see the
 * structure. Zeroed memory is an unlocked lock at version 0.
 *
 * <p>The methods take the segment and the byte offset of the word, or (those ending in
 * {@code At}) the word's absolute address; none allocates. The segment must be a native segment
 * or a heap segment whose alignment allows 4-byte aligned access (e.g. over a {@code long[]} or
 * {@code int[]}), and the offset must be a multiple of 4; otherwise the access throws {@link
 * IllegalArgumentException}. In a hot path, pass the pool's mapping only: a lock word anywhere
 * else goes by address ({@link #tryLockAt} says why).
 */
public final class VersionLock {

  /** The size of a lock word in bytes. */
  public static final long BYTES = 4;

  /** The lock bit, bit 31. */
  public static final int LOCK_BIT = 0x8000_0000;

  /** The version bits, bits 0..30. */
  public static final int VERSION_MASK = 0x7fff_ffff;

  /** The lock word: an aligned little-endian u32 over (MemorySegment, long offset). */
  private static final VarHandle WORD =
      ValueLayout.JAVA_INT
          .withOrder(ByteOrder.LITTLE_ENDIAN)
          .varHandle()
          .withInvokeExactBehavior();

  private VersionLock() {}

  /**
   * Tries once to take the lock: reads the word and, if it is unlocked, CASes the lock
   * bit in. Fails if the lock is held or another writer wins the race.
   *
   * @param segment the segment holding the lock word
   * @param offset the word's byte offset, a multiple of 4
   * @return {@code true} if the calling thread now holds the lock
   */
  public static boolean tryLock(MemorySegment segment, long offset) {
    int word = versionAcquire(segment, offset);
    if ((word & LOCK_BIT) == 0 && casVersion(segment, offset, word, word | LOCK_BIT)) {
      VarHandle.storeStoreFence(); // the critical section's stores stay below the lock bit
      return true;
    }
    return false;
  }

  /**
   * Takes the lock, spinning ({@link Thread#onSpinWait()}) while another writer holds it.
   * Not reentrant: a thread that already holds the lock spins forever.
   *
   * @param segment the segment holding the lock word
   * @param offset the word's byte offset, a multiple of 4
   */
  public static void lock(MemorySegment segment, long offset) {
    for (; ; ) {
      int word = versionAcquire(segment, offset);
      if ((word & LOCK_BIT) == 0 && casVersion(segment, offset, word, word | LOCK_BIT)) {
        VarHandle.storeStoreFence(); // the critical section's stores stay below the lock bit
        return;
      }
      Thread.onSpinWait();
    }
  }

  /**
   * Releases the lock held by the calling thread: one release store that clears the
   * lock bit and increments the version, wrapping from {@code 0x7fffffff} to 0.
   *
   * @param segment the segment holding the lock word
   * @param offset the word's byte offset, a multiple of 4
   * @throws IllegalMonitorStateException if the lock is not held (a caller bug; the
   *     word is left unchanged)
   */
  public static void unlock(MemorySegment segment, long offset) {
    unlock(segment, offset, held(segment, offset)); // our own CAS wrote it: a plain read suffices
  }

  /**
   * The word of a lock the calling thread holds, for {@link #unlock(MemorySegment, long, int)}:
   * read right after taking the lock, while its CAS has the line in the cache. The word does not
   * change while the lock is held (only its holder writes it).
   *
   * @param segment the segment holding the lock word
   * @param offset the word's byte offset, a multiple of 4
   * @return the held word (lock bit set)
   */
  public static int held(MemorySegment segment, long offset) {
    return version(segment, offset);
  }

  /**
   * Releases the lock held by the calling thread as {@link #unlock(MemorySegment, long)} does,
   * from the word {@link #held} returned: one release store and no load. For critical sections
   * that persist the line holding the lock word: a flush may take the line out of the core's
   * caches (it does on the AMD EPYC the issues measure on: a load right after a clwb of its line
   * waits about 150 ns, docs/persistence.md "A flushed line, read again"), and the plain unlock's
   * read of the word would wait for it before the store; a store does not wait.
   *
   * @param segment the segment holding the lock word
   * @param offset the word's byte offset, a multiple of 4
   * @param held what {@link #held} returned after the lock was taken
   * @throws IllegalMonitorStateException if {@code held} does not have the lock bit (a caller
   *     bug; the word is left unchanged)
   */
  public static void unlock(MemorySegment segment, long offset, int held) {
    setVersionRelease(segment, offset, released(held));
  }

  /**
   * A reader's snapshot of the lock word ({@code getAcquire}). If the snapshot
   * {@linkplain #isLocked(int) is locked} a writer is inside and the caller must wait
   * and take a new snapshot; otherwise it may read the protected data and then
   * {@linkplain #validate validate}.
   *
   * @param segment the segment holding the lock word
   * @param offset the word's byte offset, a multiple of 4
   * @return the whole lock word, lock bit included
   */
  public static int snapshotAcquire(MemorySegment segment, long offset) {
    return versionAcquire(segment, offset);
  }

  /**
   * Ends an optimistic read: an acquire fence (the reads before it cannot move below
   * it), then a re-read of the lock word.
   *
   * @param segment the segment holding the lock word
   * @param offset the word's byte offset, a multiple of 4
   * @param snapshot the value {@link #snapshotAcquire} returned before the read
   * @return {@code true} if {@code snapshot} was unlocked and the word still equals it,
   *     so no writer entered since the snapshot and the data read is consistent;
   *     {@code false} if the reader must retry
   */
  public static boolean validate(MemorySegment segment, long offset, int snapshot) {
    VarHandle.acquireFence();
    return (snapshot & LOCK_BIT) == 0 && versionAcquire(segment, offset) == snapshot;
  }

  /**
   * A snapshot for an optimistic read through {@link UncheckedMemory}: a plain load of the word at
   * an absolute address, then an {@link VarHandle#acquireFence()}, so the data it protects is read
   * after it ({@link #snapshotAcquire}'s order, without re-checking the caller's segment).
   *
   * @param address the word's address, inside a live mapping ({@link UncheckedMemory})
   * @return the word, for {@link #isLocked(int)} and {@link #unchangedAt}
   */
  public static int snapshotAt(long address) {
    SwitchPoint.here();
    int word = UncheckedMemory.getInt(address);
    VarHandle.acquireFence();
    return word;
  }

  /**
   * Validation of {@link #snapshotAt}: an {@link VarHandle#acquireFence()} (the data reads stay
   * above it), then the word re-read.
   *
   * @param address the word's address, as given to {@link #snapshotAt}
   * @param snapshot an unlocked snapshot
   * @return whether the word is unchanged: no writer locked it since the snapshot
   */
  public static boolean unchangedAt(long address, int snapshot) {
    VarHandle.acquireFence();
    SwitchPoint.here();
    return UncheckedMemory.getInt(address) == snapshot;
  }

  /**
   * {@link #tryLock} for a word at an absolute address ({@link UncheckedMemory}'s contract: the
   * memory stays live while the caller uses it). For lock words outside the pool's mapping (group
   * hashing's DRAM locks).
   *
   * <p><b>Why by address.</b> The JIT profiles the segment class that reaches each {@code
   * VarHandle} call site once for the whole JVM, and a call site in a shared method, such as this
   * class's, is one site for all its callers. While only the pool's mapping reaches them, the JIT
   * inlines the mapping's checks into each scheme's lock operations; a second class (a DRAM or heap
   * segment) makes them virtual calls in every compiled caller, and the schemes of a JVM that held both
   * slowed each other down: group hashing after Dash-EH ran at 0.55 of its speed alone, Dash-EH
   * after group hashing inserted at 0.65 (docs/persistence.md, "One JVM, several schemes"). An
   * access by address goes through one constant segment whose class the JIT knows without a
   * profile.
   *
   * @param address the word's address, a multiple of 4
   * @return {@code true} if the calling thread now holds the lock
   */
  public static boolean tryLockAt(long address) {
    SwitchPoint.here();
    int word = UncheckedMemory.getInt(address);
    if ((word & LOCK_BIT) == 0 && casAt(address, word, word | LOCK_BIT)) {
      VarHandle.storeStoreFence(); // the critical section's stores stay below the lock bit
      return true;
    }
    return false;
  }

  /**
   * {@link #lock} for a word at an absolute address.
   *
   * @param address the word's address, a multiple of 4
   */
  public static void lockAt(long address) {
    while (!tryLockAt(address)) {
      Thread.onSpinWait();
    }
  }

  /**
   * {@link #unlock(MemorySegment, long)} for a word at an absolute address.
   *
   * @param address the word's address, a multiple of 4
   * @throws IllegalMonitorStateException if the lock is not held (a caller bug; the word is left
   *     unchanged)
   */
  public static void unlockAt(long address) {
    SwitchPoint.here();
    int held = UncheckedMemory.getInt(address); // our own CAS wrote it: a plain read suffices
    int next = released(held);
    SwitchPoint.here();
    UncheckedMemory.setIntRelease(address, next);
  }

  /**
   * Snapshots of two lock words for one optimistic read through {@link UncheckedMemory} (Dash's
   * target and probing bucket): two plain loads, then one {@link VarHandle#acquireFence()}, so the
   * data they protect is read after both (the order of {@link #snapshotAcquire}, with one barrier
   * for the two; each acquire barrier makes the JIT re-read and re-check the caller's state).
   *
   * @param first the first word's address, inside a live mapping ({@link UncheckedMemory})
   * @param second the second word's address
   * @return both words, the first in the high half: for {@link #eitherLocked}, {@link
   *     #firstLocked} and {@link #unchangedBothAt}
   */
  public static long snapshotBothAt(long first, long second) {
    SwitchPoint.here();
    long words = (long) UncheckedMemory.getInt(first) << 32 | (UncheckedMemory.getInt(second) & 0xFFFF_FFFFL);
    VarHandle.acquireFence();
    return words;
  }

  /**
   * @param snapshots from {@link #snapshotBothAt}
   * @return whether either word was locked
   */
  public static boolean eitherLocked(long snapshots) {
    return (snapshots & ((long) LOCK_BIT << 32 | LOCK_BIT & 0xFFFF_FFFFL)) != 0;
  }

  /**
   * @param snapshots from {@link #snapshotBothAt}
   * @return whether the first word was locked
   */
  public static boolean firstLocked(long snapshots) {
    return snapshots < 0;
  }

  /**
   * Validation of {@link #snapshotBothAt}: an {@link VarHandle#acquireFence()} (the data reads stay
   * above it), then both words re-read.
   *
   * @param first the first word's address, as given to {@link #snapshotBothAt}
   * @param second the second word's address
   * @param snapshots unlocked snapshots ({@link #eitherLocked} false)
   * @return whether neither word changed: no writer locked either since the snapshots
   */
  public static boolean unchangedBothAt(long first, long second, long snapshots) {
    VarHandle.acquireFence();
    SwitchPoint.here();
    return UncheckedMemory.getInt(first) == (int) (snapshots >>> 32) && UncheckedMemory.getInt(second) == (int) snapshots;
  }

  /**
   * Whether the lock is held now ({@code getAcquire}); a momentary answer, for
   * assertions and diagnostics.
   *
   * @param segment the segment holding the lock word
   * @param offset the word's byte offset, a multiple of 4
   * @return {@code true} if the lock bit is set
   */
  public static boolean isLocked(MemorySegment segment, long offset) {
    return isLocked(versionAcquire(segment, offset));
  }

  /**
   * Whether a lock word value has its lock bit set.
   *
   * @param word a value returned by {@link #snapshotAcquire}
   * @return {@code true} if the lock bit is set
   */
  public static boolean isLocked(int word) {
    return (word & LOCK_BIT) != 0;
  }

  /**
   * The version part of a lock word value.
   *
   * @param word a value returned by {@link #snapshotAcquire}
   * @return bits 0..30 of {@code word}
   */
  public static int versionOf(int word) {
    return word & VERSION_MASK;
  }

  /**
   * Recovery only: clears a lock bit a crash may have left set, keeping the version,
   * with a plain store. Call it while no other thread can reach the word (before the
   * structure is published after open); the caller persists the word if it wants the
   * reset to be durable (it need not: the next recovery resets it again).
   *
   * @param segment the segment holding the lock word
   * @param offset the word's byte offset, a multiple of 4
   */
  public static void reset(MemorySegment segment, long offset) {
    WORD.set(segment, offset, version(segment, offset) & VERSION_MASK);
  }

  private static int version(MemorySegment segment, long offset) {
    SwitchPoint.here();
    return (int) WORD.get(segment, offset);
  }

  private static int versionAcquire(MemorySegment segment, long offset) {
    SwitchPoint.here();
    return (int) WORD.getAcquire(segment, offset);
  }

  private static boolean casVersion(MemorySegment segment, long offset, int expected, int value) {
    SwitchPoint.here();
    return (boolean) WORD.compareAndSet(segment, offset, expected, value);
  }

  private static void setVersionRelease(MemorySegment segment, long offset, int value) {
    SwitchPoint.here();
    WORD.setRelease(segment, offset, value);
  }

  private static boolean casAt(long address, int expected, int value) {
    SwitchPoint.here();
    return UncheckedMemory.compareAndSetInt(address, expected, value);
  }

  /**
   * The word an unlock stores: the lock bit cleared and the version incremented, wrapping within 31
   * bits.
   *
   * @throws IllegalMonitorStateException if {@code held} does not have the lock bit
   */
  private static int released(int held) {
    if ((held & LOCK_BIT) == 0) {
      throw notLocked(held);
    }
    return (held + 1) & VERSION_MASK;
  }

  private static IllegalMonitorStateException notLocked(int word) {
    return new IllegalMonitorStateException(
        "unlock of a version lock that is not held (word 0x" + Integer.toHexString(word) + ")");
  }
}
