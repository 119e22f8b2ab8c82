package io.pmhash.core.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

/**
 * The libc calls pmhash needs that the JDK does not offer: an anonymous {@code mmap}
 * reservation for {@link io.pmhash.core.Durability#VOLATILE} pools, so that they can grow in
 * place, and its {@code munmap}; and {@code madvise(MADV_HUGEPAGE)} for the large DRAM arrays
 * schemes keep beside a pool ({@link io.pmhash.core.alloc.DramArrays}). Linux only; elsewhere {@link #available()} is
 * false.
 */
@SuppressWarnings("restricted") // binds libc mmap/munmap/madvise with their exact C signatures
public final class Libc {
  private Libc() {}

  private static final int PROT_READ_WRITE = 0x1 | 0x2;
  private static final int MAP_PRIVATE = 0x02;
  private static final int MAP_ANONYMOUS = 0x20;
  private static final int MAP_NORESERVE = 0x4000;
  private static final int MADV_HUGEPAGE = 14;

  private static final MethodHandle MMAP;
  private static final MethodHandle MUNMAP;
  private static final MethodHandle MADVISE;

  static {
    MethodHandle mmap = null;
    MethodHandle munmap = null;
    MethodHandle madvise = null;
    if (System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux")) {
      Linker linker = Linker.nativeLinker();
      var libc = linker.defaultLookup();
      mmap = libc.find("mmap")
          .map(s -> linker.downcallHandle(s, FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG)))
          .orElse(null);
      munmap = libc.find("munmap")
          .map(s -> linker.downcallHandle(s, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG)))
          .orElse(null);
      madvise = libc.find("madvise")
          .map(s -> linker.downcallHandle(s, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT)))
          .orElse(null);
    }
    MMAP = munmap == null ? null : mmap;
    MUNMAP = mmap == null ? null : munmap;
    MADVISE = MMAP == null ? null : madvise;
  }

  /** @return true when anonymous reservations can be made */
  public static boolean available() {
    return MMAP != null;
  }

  /**
   * Reserves {@code bytes} of zero-filled private anonymous memory, committed page by page as
   * it is touched ({@code MAP_NORESERVE}).
   *
   * @param bytes size of the reservation
   * @return the address of the reservation
   * @throws IllegalStateException if mmap fails
   */
  public static long reserveAnonymous(long bytes) {
    try {
      MemorySegment p = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, bytes, PROT_READ_WRITE,
          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0L);
      if (p.address() == -1L || p.address() == 0L) {
        throw new IllegalStateException("mmap of " + bytes + " anonymous bytes failed");
      }
      return p.address();
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException("mmap failed", t);
    }
  }

  /**
   * Releases a reservation made by {@link #reserveAnonymous(long)}.
   *
   * @param address its address
   * @param bytes its size
   */
  public static void release(long address, long bytes) {
    try {
      int rc = (int) MUNMAP.invokeExact(MemorySegment.ofAddress(address), bytes);
      if (rc != 0) {
        throw new IllegalStateException("munmap of " + bytes + " bytes failed");
      }
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException("munmap failed", t);
    }
  }

  /**
   * Advises the kernel to back a range of an anonymous mapping with transparent huge pages
   * ({@code madvise(MADV_HUGEPAGE)}); a hint, to be given before the range is touched.
   *
   * @param address the range's start, 2 MiB aligned for the advice to take effect
   * @param bytes the range's size
   * @return true if the kernel accepted the advice (it may still use small pages)
   */
  public static boolean adviseHugePages(long address, long bytes) {
    if (MADVISE == null) {
      return false;
    }
    try {
      return (int) MADVISE.invokeExact(MemorySegment.ofAddress(address), bytes, MADV_HUGEPAGE) == 0;
    } catch (Throwable t) {
      return false;
    }
  }
}
