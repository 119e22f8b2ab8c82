package io.pmhash.llpl;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * libpmemobj's documented C API as FFM downcalls into the {@code libpmemobj.so.1} llpl's JNI
 * library has loaded (the same PMDK instance, the same {@code PMEMobjpool*}): the transactions
 * ({@link PmdkTransactions}) and the allocator ({@link PmdkAllocation}). Bound at the first llpl
 * pool's open; {@link #FAILURE} says why not.
 */
final class Pmemobj {
  /** {@code PMEMoid}: {@code uint64_t pool_uuid_lo; uint64_t off;}, passed and returned by value. */
  static final StructLayout OID = MemoryLayout.structLayout(
      ValueLayout.JAVA_LONG.withName("pool_uuid_lo"), ValueLayout.JAVA_LONG.withName("off"));
  /**
   * {@code struct pobj_action} (libpmemobj/action_base.h): {@code enum type; uint32_t data[3];
   * union { struct pobj_action_heap heap; uint64_t data2[14]; }} = 4 + 12 + 112 bytes.
   */
  static final long ACTION_BYTES = 128;

  static final MethodHandle BEGIN;
  static final MethodHandle ADD_RANGE;
  static final MethodHandle COMMIT;
  static final MethodHandle ABORT;
  static final MethodHandle END;
  static final MethodHandle STAGE;
  static final MethodHandle ERRORMSG;
  static final MethodHandle TX_XALLOC;
  static final MethodHandle TX_XFREE;
  static final MethodHandle XRESERVE;
  static final MethodHandle SET_VALUE;
  static final MethodHandle DEFER_FREE;
  static final MethodHandle PUBLISH;
  static final MethodHandle CANCEL;
  static final MethodHandle FIRST;
  static final MethodHandle NEXT;
  static final MethodHandle TYPE_NUM;
  static final MethodHandle USABLE_SIZE;
  static final MethodHandle OID_OF;
  static final MethodHandle XALLOC;
  static final Throwable FAILURE;

  static {
    MethodHandle[] h = new MethodHandle[20];
    Throwable failure = null;
    try {
      bindAll(h);
    } catch (RuntimeException | LinkageError e) {
      failure = e;
    }
    BEGIN = h[0];
    ADD_RANGE = h[1];
    COMMIT = h[2];
    ABORT = h[3];
    END = h[4];
    STAGE = h[5];
    ERRORMSG = h[6];
    TX_XALLOC = h[7];
    TX_XFREE = h[8];
    XRESERVE = h[9];
    SET_VALUE = h[10];
    DEFER_FREE = h[11];
    PUBLISH = h[12];
    CANCEL = h[13];
    FIRST = h[14];
    NEXT = h[15];
    TYPE_NUM = h[16];
    USABLE_SIZE = h[17];
    OID_OF = h[18];
    XALLOC = h[19];
    FAILURE = failure;
  }

  @SuppressWarnings("restricted") // libpmemobj's documented C API, loaded by llpl already
  private static void bindAll(MethodHandle[] h) {
    Linker linker = Linker.nativeLinker();
    SymbolLookup lib = SymbolLookup.libraryLookup("libpmemobj.so.1", Arena.global());
    ValueLayout addr = ValueLayout.ADDRESS;
    ValueLayout i32 = ValueLayout.JAVA_INT;
    ValueLayout u64 = ValueLayout.JAVA_LONG;
    // int pmemobj_tx_begin(PMEMobjpool *pop, jmp_buf env, ...): env NULL (errors are returned,
    // no longjmp), then the parameter list ended by TX_PARAM_NONE.
    h[0] = linker.downcallHandle(find(lib, "pmemobj_tx_begin"), FunctionDescriptor.of(i32, addr, addr, i32),
        Linker.Option.firstVariadicArg(2));
    // int pmemobj_tx_xadd_range_direct(const void *ptr, size_t size, uint64_t flags)
    h[1] = linker.downcallHandle(find(lib, "pmemobj_tx_xadd_range_direct"), FunctionDescriptor.of(i32, addr, u64, u64));
    // void pmemobj_tx_commit(void)
    h[2] = linker.downcallHandle(find(lib, "pmemobj_tx_commit"), FunctionDescriptor.ofVoid());
    // void pmemobj_tx_abort(int errnum)
    h[3] = linker.downcallHandle(find(lib, "pmemobj_tx_abort"), FunctionDescriptor.ofVoid(i32));
    // int pmemobj_tx_end(void)
    h[4] = linker.downcallHandle(find(lib, "pmemobj_tx_end"), FunctionDescriptor.of(i32));
    // enum pobj_tx_stage pmemobj_tx_stage(void)
    h[5] = linker.downcallHandle(find(lib, "pmemobj_tx_stage"), FunctionDescriptor.of(i32));
    // const char *pmemobj_errormsg(void)
    h[6] = linker.downcallHandle(find(lib, "pmemobj_errormsg"), FunctionDescriptor.of(addr));
    // PMEMoid pmemobj_tx_xalloc(size_t size, uint64_t type_num, uint64_t flags)
    h[7] = linker.downcallHandle(find(lib, "pmemobj_tx_xalloc"), FunctionDescriptor.of(OID, u64, u64, u64));
    // int pmemobj_tx_xfree(PMEMoid oid, uint64_t flags)
    h[8] = linker.downcallHandle(find(lib, "pmemobj_tx_xfree"), FunctionDescriptor.of(i32, OID, u64));
    // PMEMoid pmemobj_xreserve(PMEMobjpool *pop, struct pobj_action *act, size_t size,
    //     uint64_t type_num, uint64_t flags)
    h[9] = linker.downcallHandle(find(lib, "pmemobj_xreserve"), FunctionDescriptor.of(OID, addr, addr, u64, u64, u64));
    // void pmemobj_set_value(PMEMobjpool *pop, struct pobj_action *act, uint64_t *ptr, uint64_t value)
    h[10] = linker.downcallHandle(find(lib, "pmemobj_set_value"), FunctionDescriptor.ofVoid(addr, addr, addr, u64));
    // void pmemobj_defer_free(PMEMobjpool *pop, PMEMoid oid, struct pobj_action *act)
    h[11] = linker.downcallHandle(find(lib, "pmemobj_defer_free"), FunctionDescriptor.ofVoid(addr, OID, addr));
    // int pmemobj_publish(PMEMobjpool *pop, struct pobj_action *actv, size_t actvcnt)
    h[12] = linker.downcallHandle(find(lib, "pmemobj_publish"), FunctionDescriptor.of(i32, addr, addr, u64));
    // void pmemobj_cancel(PMEMobjpool *pop, struct pobj_action *actv, size_t actvcnt)
    h[13] = linker.downcallHandle(find(lib, "pmemobj_cancel"), FunctionDescriptor.ofVoid(addr, addr, u64));
    // PMEMoid pmemobj_first(PMEMobjpool *pop)
    h[14] = linker.downcallHandle(find(lib, "pmemobj_first"), FunctionDescriptor.of(OID, addr));
    // PMEMoid pmemobj_next(PMEMoid oid)
    h[15] = linker.downcallHandle(find(lib, "pmemobj_next"), FunctionDescriptor.of(OID, OID));
    // uint64_t pmemobj_type_num(PMEMoid oid)
    h[16] = linker.downcallHandle(find(lib, "pmemobj_type_num"), FunctionDescriptor.of(u64, OID));
    // size_t pmemobj_alloc_usable_size(PMEMoid oid)
    h[17] = linker.downcallHandle(find(lib, "pmemobj_alloc_usable_size"), FunctionDescriptor.of(u64, OID));
    // PMEMoid pmemobj_oid(const void *addr)
    h[18] = linker.downcallHandle(find(lib, "pmemobj_oid"), FunctionDescriptor.of(OID, addr));
    // int pmemobj_xalloc(PMEMobjpool *pop, PMEMoid *oidp, size_t size, uint64_t type_num,
    //     uint64_t flags, pmemobj_constr constructor, void *arg): atomic; oidp may be volatile memory
    h[19] = linker.downcallHandle(find(lib, "pmemobj_xalloc"), FunctionDescriptor.of(i32, addr, addr, u64, u64, u64, addr, addr));
  }

  private static MemorySegment find(SymbolLookup lib, String name) {
    return lib.find(name).orElseThrow(() -> new IllegalStateException("libpmemobj.so.1 has no " + name));
  }

  private Pmemobj() {}
}
