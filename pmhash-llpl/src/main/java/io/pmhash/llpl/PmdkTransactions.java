package io.pmhash.llpl;

import io.pmhash.core.BackendUnavailableException;
import io.pmhash.core.spi.PoolBackend;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * PMDK's undo-log transactions over an llpl pool's region: the {@link PoolBackend.Transactions}
 * the pool's {@link io.pmhash.core.log.UndoLog} runs in on the llpl backend.
 *
 * <p>They are libpmemobj's public C API ({@code pmemobj_tx_begin}, {@code
 * pmemobj_tx_xadd_range_direct}, {@code pmemobj_tx_commit}, {@code pmemobj_tx_abort}, {@code
 * pmemobj_tx_end}, {@code pmemobj_tx_stage}), called through FFM downcalls into the {@code
 * libpmemobj.so.1} that llpl's JNI library has already loaded (the dynamic linker hands back the
 * same library, so the transaction runs in the same PMDK instance, on the {@code PMEMobjpool*}
 * llpl opened). llpl's own API cannot carry them: llpl 1.2.0's only public transaction is {@code
 * Transaction.run(Runnable)}, a body that begins and ends inside one call, while a pmhash
 * transaction spans the scheme's code between {@code UndoLog.begin()} and {@code Tx.close()};
 * its begin/commit/abort are private natives of {@code Transaction}. PMDK's C API is the
 * documented, versioned interface those natives wrap.
 *
 * <p>PMDK keeps a transaction per OS thread. {@link #begin} refuses a virtual thread (it could
 * move to another carrier thread inside the transaction) and a thread already in a PMDK
 * transaction (pmhash's transactions do not nest). Ranges are added with {@code
 * POBJ_XADD_NO_ABORT}, so a failure to log one throws and leaves the transaction open for the
 * caller's rollback, instead of PMDK aborting it behind the caller's back. Every call checks
 * PMDK's stage first: PMDK ends the process on a call in the wrong stage.
 *
 * <p>PMDK persists its log and, at commit, the added ranges with its own flushes ({@code
 * pmem_persist} where PMDK takes the file for persistent memory, {@code msync} elsewhere; {@code
 * PMEM_IS_PMEM_FORCE=1} makes it use the flush instructions on any file). pmhash's {@link
 * io.pmhash.core.Persistence} does not see or count them.
 *
 * <p>Test switch: {@code -Dpmhash.llpl.haltInCommit=before} ({@code after}) halts the JVM
 * ({@code Runtime.halt}) in the first commit just before {@code pmemobj_tx_commit} (just after
 * it, before {@code pmemobj_tx_end}); {@code LlplTransactionTest} uses it to crash a child JVM
 * on either side of the commit point.
 */
final class PmdkTransactions implements PoolBackend.Transactions {
  private static final int TX_STAGE_NONE = 0;
  private static final int TX_STAGE_WORK = 1;
  private static final int TX_PARAM_NONE = 0;
  /** libpmemobj/base.h: POBJ_XADD_NO_ABORT = POBJ_FLAG_TX_NO_ABORT = 1 &lt;&lt; 4. */
  private static final long POBJ_XADD_NO_ABORT = 1L << 4;
  /** Linux errno ECANCELED: the reason an abort gives PMDK. */
  private static final int ECANCELED = 125;
  private static final String HALT = System.getProperty("pmhash.llpl.haltInCommit", "");
  private static final boolean HALT_BEFORE = HALT.equals("before");
  private static final boolean HALT_AFTER = HALT.equals("after");

  private final long pool;

  private PmdkTransactions(long pool) {
    this.pool = pool;
  }

  /**
   * Binds PMDK's transactions to an open llpl heap's pool.
   *
   * @param path the pool file, for messages
   * @param pool the heap's {@code PMEMobjpool*}, which is region offset 0
   * @return the transactions
   * @throws BackendUnavailableException if libpmemobj's transaction functions cannot be bound
   */
  static PmdkTransactions bind(Path path, long pool) throws BackendUnavailableException {
    Throwable failed = Pmemobj.FAILURE;
    if (failed != null) {
      throw new BackendUnavailableException(path + ": the llpl backend cannot bind PMDK's transaction functions in"
          + " libpmemobj.so.1 (" + failed + "): install PMDK's libpmemobj1 (1.x) and run with"
          + " --enable-native-access=ALL-UNNAMED; see docs/llpl.md", failed);
    }
    return new PmdkTransactions(pool);
  }

  @Override
  public void begin() {
    if (Thread.currentThread().isVirtual()) {
      throw new IllegalStateException("a transaction on an llpl pool runs in PMDK, which keeps it per OS thread, and a"
          + " virtual thread may change carrier threads inside it: run transactions on a platform thread");
    }
    int stage = stage();
    if (stage != TX_STAGE_NONE) {
      throw new IllegalStateException("this thread is already in a PMDK transaction (stage " + stage + "): pmhash"
          + " transactions do not nest; close the open one first");
    }
    int r;
    try {
      r = (int) Pmemobj.BEGIN.invokeExact(MemorySegment.ofAddress(pool), MemorySegment.NULL, TX_PARAM_NONE);
    } catch (Throwable t) {
      throw unexpected("pmemobj_tx_begin", t);
    }
    if (r != 0) {
      String why = error(r);
      endIfStarted();
      throw new IllegalStateException("PMDK could not begin a transaction (" + why + "): nothing was changed");
    }
  }

  @Override
  public void addRange(long offset, long length) {
    requireWork("add a range to");
    int r;
    try {
      r = (int) Pmemobj.ADD_RANGE.invokeExact(MemorySegment.ofAddress(pool + offset), length, POBJ_XADD_NO_ABORT);
    } catch (Throwable t) {
      throw unexpected("pmemobj_tx_xadd_range_direct", t);
    }
    if (r != 0) {
      throw new IllegalStateException("PMDK could not log the " + length + " bytes at region offset " + offset + " ("
          + error(r) + "): its undo log grows into the PMDK pool's free space beside the pmhash pool's block; the"
          + " transaction stays open and rolls back when closed");
    }
  }

  @Override
  public void commit() {
    requireWork("commit");
    if (HALT_BEFORE) {
      Runtime.getRuntime().halt(77);
    }
    int r;
    try {
      Pmemobj.COMMIT.invokeExact();
      if (HALT_AFTER) {
        Runtime.getRuntime().halt(78);
      }
      r = (int) Pmemobj.END.invokeExact();
    } catch (Throwable t) {
      throw unexpected("pmemobj_tx_commit", t);
    }
    if (r != 0) {
      throw new IllegalStateException("PMDK's commit failed (" + error(r) + "): the transaction was rolled back");
    }
  }

  @Override
  public void abort() {
    int stage = stage();
    if (stage == TX_STAGE_NONE) {
      return;
    }
    try {
      if (stage == TX_STAGE_WORK) {
        Pmemobj.ABORT.invokeExact(ECANCELED);
      }
      int ignored = (int) Pmemobj.END.invokeExact(); // the abort's own errnum, ECANCELED
    } catch (Throwable t) {
      throw unexpected("pmemobj_tx_abort", t);
    }
  }

  @Override
  public String describe() {
    return "PMDK's undo log (libpmemobj.so.1 pmemobj_tx_*, through FFM)";
  }

  static void requireWork(String what) {
    int stage = stage();
    if (stage != TX_STAGE_WORK) {
      throw new IllegalStateException("cannot " + what + " the PMDK transaction: this thread's transaction is in stage "
          + stage + ", not in progress (begin, use and close a transaction on one thread)");
    }
  }

  private static void endIfStarted() {
    if (stage() != TX_STAGE_NONE) {
      try {
        int ignored = (int) Pmemobj.END.invokeExact();
      } catch (Throwable t) {
        throw unexpected("pmemobj_tx_end", t);
      }
    }
  }

  static int stage() {
    try {
      return (int) Pmemobj.STAGE.invokeExact();
    } catch (Throwable t) {
      throw unexpected("pmemobj_tx_stage", t);
    }
  }

  @SuppressWarnings("restricted") // PMDK's static, NUL-terminated message buffer
  static String error(int errnum) {
    try {
      MemorySegment msg = (MemorySegment) Pmemobj.ERRORMSG.invokeExact();
      String text = msg.equals(MemorySegment.NULL) ? "" : msg.reinterpret(4096).getString(0);
      return "errno " + errnum + (text.isEmpty() ? "" : ": " + text);
    } catch (Throwable t) {
      return "errno " + errnum;
    }
  }

  static IllegalStateException unexpected(String call, Throwable t) {
    if (t instanceof Error e) {
      throw e;
    }
    return new IllegalStateException(call + " failed unexpectedly: " + t, t);
  }
}
