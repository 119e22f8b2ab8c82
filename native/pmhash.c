/*
 * pmhash native shim: cache-line write-back and store fence for persistent memory.
 *
 * The Java side (io.pmhash.core.internal.NativeShim) binds these symbols with
 * java.lang.foreign downcalls marked Linker.Option.critical(false): they neither
 * allocate, block nor call back into Java, so they are safe to run without a
 * thread-state transition.
 *
 * The flush instruction is chosen once, when the library is loaded, from CPUID:
 * clwb (writes the line back and keeps it cached), else clflushopt (writes back
 * and evicts, weakly ordered), else clflush (writes back and evicts, strongly
 * ordered). The encodings are spelled as bytes so that any gcc builds this file
 * without -mclwb / -mclflushopt. On aarch64 "dc cvac" + "dsb ish" is used
 * (compiled, not tested on such a machine).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/membarrier.h>

#define PMHASH_LINE 64u

/* Values of pmhash_flush_instruction(); mirrored by NativeShim.Instruction. */
#define PMHASH_FLUSH_CLFLUSH 1
#define PMHASH_FLUSH_CLFLUSHOPT 2
#define PMHASH_FLUSH_CLWB 3
#define PMHASH_FLUSH_DC_CVAC 4

/* Bumped whenever a signature below changes; the Java side refuses a mismatch. */
#define PMHASH_ABI_VERSION 2

#if defined(__x86_64__)
#include <cpuid.h>

static void flush_clflush(uintptr_t line) {
  __asm__ volatile("clflush %0" : "+m"(*(volatile char *)line));
}
static void flush_clflushopt(uintptr_t line) {
  __asm__ volatile(".byte 0x66; clflush %0" : "+m"(*(volatile char *)line));
}
static void flush_clwb(uintptr_t line) {
  __asm__ volatile(".byte 0x66; xsaveopt %0" : "+m"(*(volatile char *)line));
}

static int flush_kind = PMHASH_FLUSH_CLFLUSH;
static void (*flush_line)(uintptr_t) = flush_clflush;

__attribute__((constructor)) static void pmhash_choose_flush(void) {
  unsigned int eax, ebx, ecx, edx;
  if (__get_cpuid_max(0, 0) >= 7) {
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (ebx & (1u << 24)) { /* CPUID.(EAX=7,ECX=0):EBX[24] = CLWB */
      flush_kind = PMHASH_FLUSH_CLWB;
      flush_line = flush_clwb;
      return;
    }
    if (ebx & (1u << 23)) { /* CPUID.(EAX=7,ECX=0):EBX[23] = CLFLUSHOPT */
      flush_kind = PMHASH_FLUSH_CLFLUSHOPT;
      flush_line = flush_clflushopt;
      return;
    }
  }
  /* CPUID.1:EDX[19] = CLFSH is architectural on every x86_64 CPU. */
  flush_kind = PMHASH_FLUSH_CLFLUSH;
  flush_line = flush_clflush;
}

static inline void drain_fence(void) { __asm__ volatile("sfence" ::: "memory"); }

#elif defined(__aarch64__)

static int flush_kind = PMHASH_FLUSH_DC_CVAC;
static inline void flush_line(uintptr_t line) {
  __asm__ volatile("dc cvac, %0" ::"r"(line) : "memory");
}
static inline void drain_fence(void) { __asm__ volatile("dsb ish" ::: "memory"); }

#else
#error "pmhash native shim: unsupported architecture (the Java fallback path is used instead)"
#endif

/** ABI version of this library; NativeShim checks it before binding anything else. */
int pmhash_abi_version(void) { return PMHASH_ABI_VERSION; }

/** Which flush instruction pmhash_flush issues (PMHASH_FLUSH_* above). */
int pmhash_flush_instruction(void) { return flush_kind; }

/**
 * Writes back every cache line that overlaps [addr, addr + len). No ordering:
 * the lines are durable only after a following pmhash_drain().
 */
void pmhash_flush(uintptr_t addr, size_t len) {
  uintptr_t line = addr & ~(uintptr_t)(PMHASH_LINE - 1);
  uintptr_t end = addr + len;
  for (; line < end; line += PMHASH_LINE) flush_line(line);
}

/** Waits until every flush issued by this thread has reached the persistence domain. */
void pmhash_drain(void) { drain_fence(); }

/** pmhash_flush(addr, len) followed by pmhash_drain(). */
void pmhash_persist(uintptr_t addr, size_t len) {
  pmhash_flush(addr, len);
  drain_fence();
}

/*
 * Asymmetric fence for epoch-based reclamation (as folly's asymmetricHeavyBarrier): readers
 * publish their epoch with a plain store and a compiler barrier only; a reclaimer calls
 * pmhash_heavy_barrier() before it scans the readers' epochs, which runs a full memory barrier
 * on every CPU currently running a thread of this process (membarrier(2),
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED), so every reader's earlier epoch store is visible after it.
 */

/**
 * Registers this process for private expedited membarrier. Returns 0 on success, -1 when the
 * kernel does not offer it (the Java side then keeps a full fence in every reader).
 */
int pmhash_heavy_barrier_init(void) {
  long supported = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (supported < 0 || !(supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return -1;
  return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 ? 0 : -1;
}

/** A full memory barrier on every CPU running this process; 0 on success. */
int pmhash_heavy_barrier(void) {
  return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0 ? 0 : -1;
}
