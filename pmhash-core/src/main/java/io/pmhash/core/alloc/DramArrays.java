package io.pmhash.core.alloc;

import io.pmhash.core.internal.Libc;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * DRAM arrays for the side structures a scheme keeps beside its pool (fingerprints, hints): never
 * persistent, rebuilt after every open, read at random on hot paths.
 */
public final class DramArrays {
  private DramArrays() {}

  /**
   * A zero-filled array freed when it becomes unreachable. On Linux an array of at least 2 MiB is
   * an anonymous mapping that starts on a 2 MiB boundary and is advised {@code MADV_HUGEPAGE}
   * before it is touched: where the kernel's transparent huge pages are in {@code madvise} or
   * {@code always} mode, a random access then needs one TLB entry per 2 MiB instead of one per 4
   * KiB (the advice is a hint; the array works the same without huge pages). Smaller arrays, and
   * every array elsewhere, come from {@code Arena.ofAuto().allocate(bytes, 64)}.
   *
   * @param bytes the array's size
   * @return the array: {@code bytes} long, 64-byte aligned, zero-filled
   */
  @SuppressWarnings("restricted") // a view of our own mapping, unmapped by its cleanup
  public static MemorySegment zeroed(long bytes) {
    if (!Libc.available() || bytes < Libc.HUGE_PAGE) {
      return Arena.ofAuto().allocate(bytes, 64);
    }
    long mapped = (bytes + 4095) & -4096L;
    long address = Libc.reserveHugePageAligned(mapped);
    Libc.adviseHugePages(address, mapped);
    return MemorySegment.ofAddress(address).reinterpret(bytes, Arena.ofAuto(), ignored -> Libc.release(address, mapped));
  }
}
