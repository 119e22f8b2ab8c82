package io.pmhash.core.concurrent;

import io.pmhash.core.internal.NativeShim;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * Epoch-based reclamation (Fraser's EBR, as Dash §4.4 uses for segments freed by a
 * merge): memory a writer has unlinked is handed back to its owner only after every
 * thread that might still be reading it has left its critical section.
 *
 * <p><b>Readers</b> bracket every access to shared structure with {@link #enter()} and
 * {@link #exit()}, always in a {@code try}/{@code finally}:
 *
 * <pre>{@code
 * reclaimer.enter();
 * try {
 *   ... read the directory, segments, buckets ...
 * } finally {
 *   reclaimer.exit();
 * }
 * }</pre>
 *
 * A hot path takes the thread's section from {@link #enterSection()} and passes it to {@link
 * #exit(Section)}, which then need not find the thread's slot again (the schemes' reads and writes do):
 *
 * <pre>{@code
 * EpochReclaimer.Section section = reclaimer.enterSection();
 * try {
 *   ...
 * } finally {
 *   reclaimer.exit(section);
 * }
 * }</pre>
 *
 * Both forms are allocation-free after a thread's first call, which registers the thread in
 * a participant slot (found through a small array indexed by thread id, falling back to a
 * {@link ThreadLocal} per reclaimer). Critical sections nest: a
 * depth counter makes only the outermost {@code enter}/{@code exit} pair publish
 * anything. A thread must not block for long inside (it holds back every retired
 * block), and must not carry an {@code enter} across threads.
 *
 * <p><b>Writers</b> first unlink a block so that no new reader can reach it, then
 * {@link #retire} it with the {@link Deallocator} that frees it. Retiring is meant for
 * structural changes (splits, merges, directory doubling), so it may allocate one small
 * record and takes a lock. Nothing is freed by {@code retire} itself: the owner calls
 * {@link #reclaim()} (or {@link #tryAdvance()}) when convenient, e.g. after a
 * structural change or when the allocator runs short, and {@link #drainAll()} or
 * {@link #close()} when the pool closes.
 *
 * <p><b>The grace period.</b> A global epoch counts up. {@code enter} publishes the
 * epoch the thread observed; {@link #tryAdvance()} moves the global epoch from
 * {@code e} to {@code e + 1} only if every thread inside a critical section has
 * observed {@code e}. A block retired while the global epoch was {@code e} is freed
 * once the global epoch reaches {@code e + 2}: by then every thread inside has entered
 * after the advance to {@code e + 1}, which happened after the block was unlinked, so
 * none of them can reach it. The store-load orders this argument needs are: after a reader
 * publishes its epoch and before it reads anything shared; before a scan; and between a
 * writer's unlink and the epoch read of {@code retire}. Where Linux membarrier is available
 * (through the native shim) the first two are <em>asymmetric</em>, as folly's fences are: the
 * reader issues only a compiler barrier, and {@link #tryAdvance()} runs membarrier, a full
 * barrier on every CPU running this process, before it scans ({@link #fences()} says which
 * mode is in force). Otherwise they are full fences ({@link VarHandle#fullFence()}), the only
 * hot-path cost being the one in {@code enter}.
 *
 * <p><b>Threads that go away.</b> A slot belongs to its thread until {@link
 * #unregister()} or until the thread terminates: a scan that finds a dead owner frees
 * the slot, even if the thread died inside a critical section (it can read nothing
 * more). Slots are reused, so the number of slots is the peak number of live
 * participating threads. Virtual threads work but each occupies a slot while alive;
 * prefer a bounded set of carrier-like worker threads for heavy use.
 *
 * <p><b>Callbacks</b> run in the thread that calls {@link #reclaim()}, {@link
 * #drainAll()} or {@link #close()}, outside every lock of this class. A callback that
 * throws does not stop the others; the first exception is rethrown afterwards with the
 * rest suppressed, and its block counts as freed.
 *
 * <p>Thread-safe. Nothing here touches persistent memory: after a crash nobody is
 * inside and nothing is retired, and recovery finds unreachable blocks by itself.
 */
public final class EpochReclaimer implements AutoCloseable {

  /**
   * Frees a retired block once no reader can hold it. Implementations must be
   * thread-safe if {@link EpochReclaimer#reclaim()} is called from several threads.
   */
  @FunctionalInterface
  public interface Deallocator {
    /**
     * Frees a block.
     *
     * @param offset the block's offset, as passed to {@link EpochReclaimer#retire}
     * @param size the block's size, as passed to {@link EpochReclaimer#retire}
     */
    void free(long offset, long size);
  }

  /** Slot value of a participant that is not inside a critical section. */
  private static final long INACTIVE = -1L;

  /** Grace period, in epochs, between retiring a block and freeing it. */
  private static final long GRACE = 2L;

  private static final VarHandle GLOBAL_EPOCH;
  private static final VarHandle SLOT_EPOCH;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      GLOBAL_EPOCH =
          lookup
              .findVarHandle(EpochReclaimer.class, "globalEpoch", long.class)
              .withInvokeExactBehavior();
      SLOT_EPOCH =
          lookup.findVarHandle(SlotFields.class, "epoch", long.class).withInvokeExactBehavior();
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Accessed through {@link #GLOBAL_EPOCH}; only ever incremented. */
  private volatile long globalEpoch;

  /** Every slot ever created; replaced (copy-on-write) under {@link #registry} only. */
  private volatile Slot[] slots = new Slot[0];

  private final Object registry = new Object();

  private final ThreadLocal<Slot> mySlot = new ThreadLocal<>();

  /**
   * A direct-mapped cache of slots by thread id, tried before {@link #mySlot}: under a
   * memory-bound workload a {@code ThreadLocal} lookup misses the cache on the thread's map, its
   * table and its entry; this touches one array line and the slot. An entry is used only by the
   * thread that owns the slot in it; two threads whose ids collide fall back to the
   * {@code ThreadLocal}.
   */
  private final Slot[] byThread = new Slot[BY_THREAD];

  private static final int BY_THREAD = 256;

  /** The retired blocks; its own object (and monitor), away from the hot fields. */
  private final RetiredList retired = new RetiredList();

  /** Creates a reclaimer at epoch 0 with no participants and nothing retired. */
  public EpochReclaimer() {}

  // ---------------------------------------------------------------------------------
  // Readers

  /**
   * Enters a critical section: until the matching {@link #exit()}, no block that was
   * still reachable when this call returned is freed. Nestable; allocation-free once
   * the thread is registered (the first call on a thread registers it).
   */
  public void enter() {
    enterSection();
  }

  /**
   * {@link #enter()}, returning the calling thread's {@link Section} for the matching {@link
   * #exit(Section)}: the form for a hot path, whose exit then does not look the thread's slot up
   * again (its thread, the by-thread array, the owner check). On a search of a table larger than
   * the cache that lookup is enough to make the next search's misses start later
   * (docs/persistence.md, "An exit that knows its slot").
   *
   * @return the calling thread's section, to pass to {@link #exit(Section)} on this thread only
   */
  public Section enterSection() {
    Slot slot = mySlot();
    int depth = slot.depth;
    slot.depth = depth + 1;
    if (depth == 0) {
      setSlotEpochOpaque(slot, globalEpochVolatile());
      readerFence(); // the published epoch before any read of shared structure
    }
    return slot;
  }

  /**
   * Leaves the critical section the calling thread entered last; the outermost
   * {@code exit} lets retired blocks go.
   *
   * @throws IllegalStateException if the calling thread is not inside
   */
  public void exit() {
    Thread me = Thread.currentThread();
    Slot slot = byThread[(int) me.threadId() & (BY_THREAD - 1)];
    if (slot == null || slot.owner != me) {
      slot = mySlot.get();
    }
    if (slot == null) {
      throw notInside();
    }
    leave(slot);
  }

  /**
   * {@link #exit()} with the section {@link #enterSection()} returned on this thread: the same
   * effect without the lookup of the thread's slot. Passing a section another thread entered, or
   * one of another reclaimer, is a bug of the caller that this method does not detect in
   * production (with assertions enabled, as in the tests, it fails).
   *
   * @param section what the matching {@link #enterSection()} returned, on this thread
   * @throws IllegalStateException if the thread is not inside (more exits than enters)
   */
  public void exit(Section section) {
    Slot slot = (Slot) section;
    assert isCallersSlot(slot) : "exit(Section) with a section this thread did not enter in this reclaimer";
    leave(slot);
  }

  /** Whether {@code slot} is the calling thread's slot in this reclaimer. */
  private boolean isCallersSlot(Slot slot) {
    Thread me = Thread.currentThread();
    return slot.owner == me && (byThread[(int) me.threadId() & (BY_THREAD - 1)] == slot || mySlot.get() == slot);
  }

  private static void leave(Slot slot) {
    int depth = slot.depth;
    if (depth == 0) {
      throw notInside();
    }
    depth--;
    slot.depth = depth;
    if (depth == 0) {
      setSlotEpochRelease(slot, INACTIVE); // every read of the section happens before
    }
  }

  /**
   * Whether the calling thread is inside a critical section of this reclaimer.
   *
   * @return {@code true} between an {@link #enter()} and its matching {@link #exit()}
   */
  public boolean isInside() {
    Slot slot = mySlot.get();
    return slot != null && slot.depth > 0;
  }

  /**
   * Gives up the calling thread's participant slot so another thread can reuse it. A
   * thread that never calls this keeps its slot until it terminates; the next scan or
   * registration that finds it dead frees it. A later {@link #enter()} registers the
   * thread again.
   *
   * @throws IllegalStateException if the calling thread is inside a critical section
   */
  public void unregister() {
    Slot slot = mySlot.get();
    if (slot == null) {
      return;
    }
    if (slot.depth != 0) {
      throw new IllegalStateException(
          "unregister() inside a critical section (depth " + slot.depth + ")");
    }
    mySlot.remove();
    synchronized (registry) {
      release(slot);
    }
  }

  // ---------------------------------------------------------------------------------
  // Writers

  /**
   * Retires an unlinked block: {@code deallocator.free(offset, size)} runs once no
   * thread that could have reached the block is inside, during a later {@link
   * #reclaim()}, {@link #drainAll()} or {@link #close()}. The caller must have made the
   * block unreachable for new readers before calling this. Allocates one record.
   *
   * @param offset the block's offset (opaque to this class)
   * @param size the block's size (opaque to this class)
   * @param deallocator frees the block
   * @throws IllegalStateException if the reclaimer is closed
   */
  public void retire(long offset, long size, Deallocator deallocator) {
    Retired r = new Retired(offset, size, deallocator);
    VarHandle.fullFence(); // the caller's unlink before the epoch read
    synchronized (retired) {
      if (retired.closed) {
        throw new IllegalStateException("retire() on a closed EpochReclaimer");
      }
      // Read under the lock, so that epochs never decrease along the list.
      r.epoch = globalEpochVolatile();
      retired.append(r);
    }
  }

  /**
   * Advances the global epoch by one if every thread inside a critical section has
   * observed the current epoch. Frees nothing; see {@link #reclaim()}.
   *
   * @return {@code true} if the epoch advanced (by this call or a concurrent one)
   */
  public boolean tryAdvance() {
    writerFence(); // pairs with readerFence() in enter()
    long epoch = globalEpochVolatile();
    for (Slot slot : slots) {
      long observed = slotEpochVolatile(slot);
      if (observed != INACTIVE && observed != epoch && !releaseIfOwnerDied(slot)) {
        return false;
      }
    }
    return casGlobalEpoch(epoch, epoch + 1) || globalEpochVolatile() != epoch;
  }

  /**
   * How many threads other than the caller are inside a critical section now, after the full
   * barrier that pairs with the one in {@link #enter()} ({@link #fences()}): a thread that entered
   * before this call is counted, or saw everything the caller published before it.
   *
   * @return the number of other threads inside
   */
  public int othersInside() {
    writerFence(); // pairs with readerFence() in enter()
    return inside(mySlot.get());
  }

  /**
   * Waits until no thread other than the caller is inside a critical section: for a pool that is
   * about to unmap its memory. The caller first makes every later entry fail (it publishes a state
   * that each section checks after {@link #enter()}, such as a pool mapping whose accesses throw);
   * by {@link #othersInside()}'s barrier a thread either is seen inside or sees that state.
   * Threads that stay inside longer than the timeout are left inside. The clock is read only
   * while a deadline applies: not when nobody is inside, nor with {@code Long.MAX_VALUE}.
   *
   * @param timeoutNanos how long to wait at most; {@code Long.MAX_VALUE} waits without a deadline
   * @return the number of other threads still inside (0 when every one has left)
   */
  public int awaitOthersOutside(long timeoutNanos) {
    int others = othersInside();
    boolean deadline = timeoutNanos != Long.MAX_VALUE;
    long start = others != 0 && deadline ? System.nanoTime() : 0;
    for (int spins = 0; others != 0 && (!deadline || System.nanoTime() - start < timeoutNanos); spins++) {
      if (spins < 1_000) {
        Thread.onSpinWait();
      } else {
        Thread.yield();
      }
      others = inside(mySlot.get());
    }
    return others;
  }

  /**
   * Tries once to advance the epoch, then frees every block whose grace period has
   * passed (retired at least two epochs before the current one).
   *
   * @return the number of blocks freed by this call
   */
  public int reclaim() {
    tryAdvance();
    Retired chain;
    synchronized (retired) {
      chain = retired.detachUpTo(globalEpochVolatile() - GRACE);
    }
    return free(chain);
  }

  /**
   * Frees everything retired, regardless of epochs; for closing a pool once no thread
   * can enter any more. The caller must guarantee that no thread enters during the
   * call; this method checks that none is inside when it starts.
   *
   * @return the number of blocks freed
   * @throws IllegalStateException if a thread is inside a critical section (nothing is
   *     freed then)
   */
  public int drainAll() {
    return drain("drainAll()", false);
  }

  /**
   * {@linkplain #drainAll() Frees everything retired} and refuses further {@link
   * #retire}s. Idempotent.
   *
   * @throws IllegalStateException if a thread is inside a critical section (the
   *     reclaimer stays open then)
   */
  @Override
  public void close() {
    drain("close()", true);
  }

  // ---------------------------------------------------------------------------------
  // Diagnostics

  /**
   * The current global epoch.
   *
   * @return the number of times the epoch has advanced
   */
  public long epoch() {
    return globalEpochVolatile();
  }

  /**
   * The number of blocks retired and not yet freed.
   *
   * @return the pending count
   */
  public long pending() {
    synchronized (retired) {
      return retired.count;
    }
  }

  /**
   * The number of threads holding a participant slot, after freeing the slots of
   * threads that have terminated.
   *
   * @return the registered thread count
   */
  public int participants() {
    int n = 0;
    for (Slot slot : slots) {
      if (slot.owner != null && !releaseIfOwnerDied(slot)) {
        n++;
      }
    }
    return n;
  }

  @Override
  public String toString() {
    return "EpochReclaimer[epoch="
        + epoch()
        + ", pending="
        + pending()
        + ", participants="
        + participants()
        + "]";
  }

  // ---------------------------------------------------------------------------------
  // Internals

  /** The calling thread's slot, registering the thread on its first call. */
  private Slot mySlot() {
    Thread me = Thread.currentThread();
    Slot slot = byThread[(int) me.threadId() & (BY_THREAD - 1)];
    if (slot != null && slot.owner == me) {
      return slot;
    }
    slot = mySlot.get();
    return slot != null ? slot : register();
  }

  private Slot register() {
    Thread me = Thread.currentThread();
    Slot slot = null;
    synchronized (registry) {
      Slot[] current = slots;
      for (Slot s : current) {
        if (s.owner == null || !s.owner.isAlive()) {
          release(s);
          slot = s;
          break;
        }
      }
      if (slot == null) {
        slot = new Slot();
        Slot[] grown = Arrays.copyOf(current, current.length + 1);
        grown[current.length] = slot;
        slots = grown;
      }
      slot.owner = me;
      int i = (int) me.threadId() & (BY_THREAD - 1);
      Slot cached = byThread[i];
      if (cached == null || cached.owner == null || !cached.owner.isAlive()) {
        byThread[i] = slot;
      }
    }
    mySlot.set(slot);
    return slot;
  }

  /** Frees the slot of a terminated thread. Returns whether the owner had died. */
  private boolean releaseIfOwnerDied(Slot slot) {
    Thread owner = slot.owner;
    if (owner == null || owner.isAlive()) {
      return false;
    }
    synchronized (registry) {
      if (slot.owner == owner) {
        release(slot);
      }
    }
    return true;
  }

  /** Under {@link #registry}. */
  private static void release(Slot slot) {
    slot.owner = null;
    slot.depth = 0;
    setSlotEpochVolatile(slot, INACTIVE);
  }

  /** Live threads currently inside; a momentary count. */
  private int inside() {
    return inside(null);
  }

  /** Live threads currently inside, but for the one holding slot {@code except}; a momentary count. */
  private int inside(Slot except) {
    int n = 0;
    for (Slot slot : slots) {
      if (slot != except && slotEpochVolatile(slot) != INACTIVE && !releaseIfOwnerDied(slot)) {
        n++;
      }
    }
    return n;
  }

  private int drain(String what, boolean close) {
    Retired chain;
    synchronized (retired) {
      if (close && retired.closed) {
        return 0;
      }
      int inside = inside();
      if (inside != 0) {
        throw new IllegalStateException(
            what + " while " + inside + " thread(s) are inside a critical section");
      }
      retired.closed |= close;
      chain = retired.detachUpTo(Long.MAX_VALUE);
    }
    return free(chain);
  }

  /** Runs the callbacks of a detached chain; returns how many ran. */
  private static int free(Retired chain) {
    Throwable failure = null;
    int count = 0;
    for (Retired r = chain; r != null; r = r.next) {
      count++;
      try {
        r.deallocator.free(r.offset, r.size);
      } catch (Throwable t) {
        if (failure == null) {
          failure = t;
        } else {
          failure.addSuppressed(t);
        }
      }
    }
    if (failure instanceof RuntimeException e) {
      throw e;
    } else if (failure instanceof Error e) {
      throw e;
    } else if (failure != null) {
      throw new IllegalStateException("a deallocator failed", failure);
    }
    return count;
  }

  private static IllegalStateException notInside() {
    return new IllegalStateException("exit() without a matching enter() on this thread");
  }

  /**
   * True when readers publish their epoch with a compiler barrier only and {@link
   * #tryAdvance()} runs the asymmetric heavy barrier (Linux membarrier through the native shim)
   * before it reads the readers' epochs, as folly's asymmetric fences do. A full fence in every
   * {@link #enter()} stalls the reader until its earlier cache misses complete; the heavy barrier
   * costs microseconds, but only when the epoch advances (after a structural change). Turned off
   * by {@code -Dpmhash.epochs.symmetric=true}, or when membarrier is not available.
   */
  static final boolean ASYMMETRIC =
      NativeShim.heavyBarrierAvailable() && !Boolean.getBoolean("pmhash.epochs.symmetric");

  /**
   * Orders the reader's epoch store before its later reads of shared structure. Asymmetric: a
   * compiler barrier only ({@code acquireFence} is a barrier for every memory access in HotSpot's
   * compilers and emits no instruction on x86); the CPU's store-load reordering is closed by the
   * writer's heavy barrier. Otherwise a full fence.
   */
  private static void readerFence() {
    if (ASYMMETRIC) {
      VarHandle.acquireFence();
    } else {
      VarHandle.fullFence();
    }
  }

  /**
   * @return how readers and writers fence, for benchmark reports: {@code "asymmetric
   *     (membarrier)"} or {@code "symmetric (full fence per enter)"}
   */
  public static String fences() {
    return ASYMMETRIC ? "asymmetric (compiler barrier per enter, membarrier per advance)" : "symmetric (full fence per enter)";
  }

  /** Makes every reader's earlier epoch store visible before the writer reads it. */
  private static void writerFence() {
    if (ASYMMETRIC) {
      NativeShim.heavyBarrier();
    } else {
      VarHandle.fullFence();
    }
  }

  private long globalEpochVolatile() {
    return (long) GLOBAL_EPOCH.getVolatile(this);
  }

  private boolean casGlobalEpoch(long expected, long value) {
    return (boolean) GLOBAL_EPOCH.compareAndSet(this, expected, value);
  }

  private static long slotEpochVolatile(SlotFields slot) {
    return (long) SLOT_EPOCH.getVolatile(slot);
  }

  private static void setSlotEpochVolatile(SlotFields slot, long value) {
    SLOT_EPOCH.setVolatile(slot, value);
  }

  private static void setSlotEpochOpaque(SlotFields slot, long value) {
    SLOT_EPOCH.setOpaque(slot, value);
  }

  private static void setSlotEpochRelease(SlotFields slot, long value) {
    SLOT_EPOCH.setRelease(slot, value);
  }

  /** Retired blocks, oldest first; guarded by its own monitor. */
  private static final class RetiredList {
    /** Epochs never decrease from head to tail (each is read under the monitor). */
    Retired head;

    Retired tail;
    long count;
    boolean closed;

    void append(Retired r) {
      if (tail == null) {
        head = r;
      } else {
        tail.next = r;
      }
      tail = r;
      count++;
    }

    /** Unlinks and returns the prefix retired at or before {@code epoch}, or null. */
    Retired detachUpTo(long epoch) {
      Retired last = null;
      long n = 0;
      for (Retired r = head; r != null && r.epoch <= epoch; r = r.next) {
        last = r;
        n++;
      }
      if (last == null) {
        return null;
      }
      Retired chain = head;
      head = last.next;
      if (head == null) {
        tail = null;
      }
      last.next = null;
      count -= n;
      return chain;
    }
  }

  /** A retired block waiting for its grace period. */
  private static final class Retired {
    final long offset;
    final long size;
    final Deallocator deallocator;
    long epoch;
    Retired next;

    Retired(long offset, long size, Deallocator deallocator) {
      this.offset = offset;
      this.size = size;
      this.deallocator = deallocator;
    }
  }

  /**
   * A thread's place in this reclaimer while it is inside, as {@link #enterSection()} returns it
   * for {@link #exit(Section)}. Opaque: it has no methods, and only this class makes one.
   */
  public abstract static class Section {
    private Section() {}
  }

  /** Left padding: keeps a slot's hot fields off the cache lines of its neighbours. */
  @SuppressWarnings("unused")
  private abstract static class SlotPadLeft extends Section {
    long p00, p01, p02, p03, p04, p05, p06, p07;
    long p10, p11, p12, p13, p14, p15, p16, p17;
  }

  /** The fields one thread writes on every enter and exit. */
  private abstract static class SlotFields extends SlotPadLeft {
    /** The epoch observed at the outermost enter, or {@link #INACTIVE}. */
    volatile long epoch = INACTIVE;

    /** Nesting depth; written only by the owner (and by release while unowned). */
    int depth;

    /** The registered thread, or null when the slot is free; written under registry. */
    volatile Thread owner;
  }

  /**
   * One participant: 128 bytes of padding on each side of the fields (two cache lines,
   * against the adjacent-line prefetcher), as JCTools pads its counters.
   */
  @SuppressWarnings("unused")
  private static final class Slot extends SlotFields {
    long q00, q01, q02, q03, q04, q05, q06, q07;
    long q10, q11, q12, q13, q14, q15, q16, q17;
  }
}
