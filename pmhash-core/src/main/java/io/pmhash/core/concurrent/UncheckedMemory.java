package io.pmhash.core.concurrent;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Loads from a pool's memory by absolute address, without the checks the FFM API makes on every
 * access through a {@link MemorySegment}: the bounds check against the mapping's size (read from
 * the segment), the liveness check of the mapping's arena and the alignment check. For the
 * hottest read paths only (the optimistic {@code get} of Dash-EH, Dash-LH, ESH and group hashing,
 * and CCEH's {@code get} under its segment's reader lock); everything else reads through the
 * segment. One
 * exception writes: the lock words of a scheme's DRAM array, taken and released by address
 * ({@link VersionLock#tryLockAt}, {@link #compareAndSetInt}, {@link #setIntRelease}) so that the
 * {@link VersionLock} accesses through a segment see the pool's mapping only (the "why" of
 * {@link VersionLock#tryLockAt}).
 *
 * <p><b>Why.</b> A search that misses the cache is bound by how many of its memory misses overlap
 * those of the next search, and that depends on how many instructions lie between them: the
 * processor's out-of-order window must reach the next search's loads while the first ones wait.
 * Each checked access costs about ten instructions, repeated after every acquire barrier because
 * the segment's fields are read again; Dash-EH's negative search made about 40 of them. Read
 * through this class, it took 155–165 ns instead of 265–285 ns (4M keys, one thread, {@code
 * docs/persistence.md}, "Unchecked reads"). The instruction count is not the whole story:
 * dropping the bounds checks that remain here made the searches slower ({@code
 * docs/persistence.md}, "Fewer instructions, and slower").
 *
 * <p><b>The caller's contract</b> (nothing here checks it; a violation reads the wrong memory or
 * crashes the JVM):
 *
 * <ul>
 *   <li>an address is {@code mapping.address() + offset} for a {@link MemorySegment#isNative()
 *       native} mapping taken from {@link io.pmhash.core.Pool#memory()}, with the whole range
 *       read checked against {@code mapping.byteSize()} before;
 *   <li>the mapping stays mapped: the caller is inside the pool's {@linkplain EpochReclaimer epoch
 *       critical section} and took the mapping after entering it, and {@link
 *       io.pmhash.core.Pool#close()} waits for every other thread inside before it unmaps (earlier
 *       mappings of a growing pool stay mapped until then);
 *   <li>or the address is inside a {@link io.pmhash.core.alloc.DramArrays DRAM array}, {@link
 *       #base} of it plus an offset the caller computed inside it, and the caller keeps the
 *       array's owner reachable ({@link java.lang.ref.Reference#reachabilityFence}) until the access
 *       is done: the array is freed with it;
 *   <li>what is read is data of an optimistic read, validated afterwards (a {@link VersionLock}),
 *       or read under a lock that keeps every writer of it out; never dereferenced as an offset
 *       before validation and a bounds check.
 * </ul>
 *
 * <p>Loads are plain and little-endian, as the pool's formats are; the caller orders them with
 * {@link VarHandle#acquireFence()} where its protocol needs it. The two atomic accesses need a
 * 4-byte aligned address.
 */
public final class UncheckedMemory {
  private UncheckedMemory() {}

  /**
   * All of the address space: an access through it needs no liveness check (a segment of the
   * global arena) and, through the unaligned layouts below, no alignment check; C2 keeps one
   * bounds check against constants per access (the address between 0 and {@code Long.MAX_VALUE
   * - 8}). Masking the address so that C2 drops that too made Dash-EH's searches slower, not
   * faster (docs/persistence.md, "Fewer instructions, and slower").
   */
  @SuppressWarnings("restricted") // a view of memory the caller has checked, see the class comment
  private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

  private static final VarHandle LONG =
      ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle().withInvokeExactBehavior();
  private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle().withInvokeExactBehavior();
  private static final VarHandle INT =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle().withInvokeExactBehavior();
  /** An aligned u32, for the atomic accesses of lock words. */
  private static final VarHandle ALIGNED_INT =
      ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle().withInvokeExactBehavior();

  /**
   * The base address of a mapping, for {@link #getLong} and {@link #getInt}: the one check a
   * reader by address makes, that the mapping is still mapped. A pool's {@link
   * io.pmhash.core.Pool#memory()} taken inside the epoch section stays so until the section ends
   * (the class comment); one taken after the pool closed is closed, and this throws, as the first
   * checked access through it would.
   *
   * @param mapping a pool's memory
   * @return its address
   * @throws IllegalStateException if the mapping is closed (the pool was closed)
   * @throws IllegalArgumentException if the mapping is not native memory
   */
  public static long base(MemorySegment mapping) {
    if (!mapping.scope().isAlive()) {
      throw new IllegalStateException("the pool is closed: its memory is no longer mapped");
    }
    if (!mapping.isNative()) {
      throw new IllegalArgumentException("unchecked reads need native memory, not " + mapping);
    }
    return mapping.address();
  }

  /**
   * @param address an address inside a live mapping, see the class comment
   * @return the little-endian u64 there (a plain load)
   */
  public static long getLong(long address) {
    return (long) LONG.get(ALL, address);
  }

  /**
   * @param address an address inside a live mapping, see the class comment
   * @return the byte there, unsigned (a plain load)
   */
  public static int getUnsignedByte(long address) {
    return (byte) BYTE.get(ALL, address) & 0xFF;
  }

  /**
   * @param address an address inside a live mapping, see the class comment
   * @return the little-endian u32 there (a plain load)
   */
  public static int getInt(long address) {
    return (int) INT.get(ALL, address);
  }

  /**
   * @param address a 4-byte aligned address inside live memory, see the class comment
   * @param expected the value the word must hold
   * @param value the value to store if it does
   * @return whether the word held {@code expected} and now holds {@code value} (a volatile CAS)
   */
  public static boolean compareAndSetInt(long address, int expected, int value) {
    return (boolean) ALIGNED_INT.compareAndSet(ALL, address, expected, value);
  }

  /**
   * @param address a 4-byte aligned address inside live memory, see the class comment
   * @param value the little-endian u32 to store there with release semantics
   */
  public static void setIntRelease(long address, int value) {
    ALIGNED_INT.setRelease(ALL, address, value);
  }
}
