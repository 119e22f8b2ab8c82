package io.pmhash.core.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The libc calls pmhash needs that the JDK does not offer: an anonymous {@code mmap}
 * reservation for {@link io.pmhash.core.Durability#VOLATILE} pools, so that they can grow in
 * place, and its {@code munmap}; {@code madvise(MADV_HUGEPAGE)} for those pools and the large
 * DRAM arrays schemes keep beside a pool ({@link io.pmhash.core.alloc.DramArrays}); and {@code
 * fallocate} for a growing pool file ({@link #allocateFileSpace}). Linux only; elsewhere {@link
 * #available()} is false.
 */
@SuppressWarnings("restricted") // binds libc mmap/munmap/madvise/open/fstat/fallocate/close with their exact C signatures
public final class Libc {
  private Libc() {}

  private static final int PROT_READ_WRITE = 0x1 | 0x2;
  private static final int MAP_PRIVATE = 0x02;
  private static final int MAP_ANONYMOUS = 0x20;
  private static final int MAP_NORESERVE = 0x4000;
  private static final int MADV_HUGEPAGE = 14;

  private static final int O_RDWR = 2;
  private static final int O_CLOEXEC = 0x80000;
  /** The size of the x86-64 and arm64 {@code struct stat}, with room to spare. */
  private static final long STAT_BYTES = 256;

  private static final MethodHandle MMAP;
  private static final MethodHandle MUNMAP;
  private static final MethodHandle MADVISE;
  private static final MethodHandle OPEN;
  private static final MethodHandle FSTAT;
  private static final MethodHandle FALLOCATE;
  private static final MethodHandle CLOSE;

  static {
    MethodHandle mmap = null;
    MethodHandle munmap = null;
    MethodHandle madvise = null;
    MethodHandle open = null;
    MethodHandle fstat = null;
    MethodHandle fallocate = null;
    MethodHandle close = null;
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
      // open is variadic: its mode, unused without O_CREAT, is passed as the variadic argument
      open = libc.find("open")
          .map(s -> linker.downcallHandle(s, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
              Linker.Option.firstVariadicArg(2)))
          .orElse(null);
      fstat = libc.find("fstat") // a symbol of its own from glibc 2.33; older ones go without fallocate
          .map(s -> linker.downcallHandle(s, FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS)))
          .orElse(null);
      fallocate = libc.find("fallocate")
          .map(s -> linker.downcallHandle(s, FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG)))
          .orElse(null);
      close = libc.find("close")
          .map(s -> linker.downcallHandle(s, FunctionDescriptor.of(JAVA_INT, JAVA_INT)))
          .orElse(null);
    }
    MMAP = munmap == null ? null : mmap;
    MUNMAP = mmap == null ? null : munmap;
    MADVISE = MMAP == null ? null : madvise;
    boolean files = open != null && fstat != null && fallocate != null && close != null;
    OPEN = files ? open : null;
    FSTAT = files ? fstat : null;
    FALLOCATE = files ? fallocate : null;
    CLOSE = files ? close : null;
  }

  /** The transparent huge page size of x86-64 and arm64. */
  public static final long HUGE_PAGE = 2L << 20;

  private static final long PAGE = 4096;

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
   * Reserves like {@link #reserveAnonymous(long)}, starting on a 2 MiB boundary, so that {@link
   * #adviseHugePages} can take effect on it. It maps 2 MiB more than asked and unmaps the slack on
   * both sides, so what remains is exactly {@code [address, address + bytes)}.
   *
   * @param bytes size of the reservation, a multiple of 4 KiB
   * @return its address, 2 MiB aligned; release it with {@link #release(long, long)} and
   *     {@code bytes}
   * @throws IllegalArgumentException if {@code bytes} is not a positive multiple of 4 KiB
   * @throws IllegalStateException if mmap fails
   */
  public static long reserveHugePageAligned(long bytes) {
    if (bytes <= 0 || bytes % PAGE != 0) {
      throw new IllegalArgumentException("a reservation is a positive multiple of 4 KiB, not " + bytes + " bytes");
    }
    long mapped = bytes + HUGE_PAGE;
    long raw = reserveAnonymous(mapped);
    long aligned = (raw + HUGE_PAGE - 1) & -HUGE_PAGE;
    if (aligned > raw) {
      release(raw, aligned - raw);
    }
    long end = aligned + bytes;
    if (raw + mapped > end) {
      release(end, raw + mapped - end);
    }
    return aligned;
  }

  /**
   * Releases a reservation made by {@link #reserveAnonymous(long)} or {@link
   * #reserveHugePageAligned(long)}, or a page-aligned part of one.
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
   * ({@code madvise(MADV_HUGEPAGE)}); a hint, to be given before the range is touched. Where the
   * kernel's transparent huge pages are in {@code madvise} or {@code always} mode, a random access
   * then needs one TLB entry per 2 MiB instead of one per 4 KiB; the memory works the same with
   * small pages.
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

  /**
   * Allocates {@code [offset, offset + length)} of a file with {@code fallocate(2)} (mode 0), so
   * that the range reads as zeros and its blocks are reserved: a full file system is reported now,
   * not as a fault on a later store through a mapping, without writing the zeros (on ext4 and xfs
   * the blocks are marked unwritten, on tmpfs the pages are cleared in the kernel). The file is
   * opened by {@code path} and used only if it is still the file {@code (dev, ino)} the caller
   * holds open (so a file put in its place is never touched).
   *
   * @param path the file
   * @param dev the device of the file the caller holds ({@code unix:dev})
   * @param ino its inode ({@code unix:ino})
   * @param offset the first byte; the range may extend the file
   * @param length bytes, positive
   * @return true if the range is allocated; false if it could not be (no binding on this
   *     platform, another file at {@code path}, a file system without {@code fallocate}, no
   *     space, a file size limit): the caller writes zeros instead, which reports the cause
   */
  public static boolean allocateFileSpace(Path path, long dev, long ino, long offset, long length) {
    if (FALLOCATE == null || length <= 0) {
      return false;
    }
    try (Arena arena = Arena.ofConfined()) {
      int fd = (int) OPEN.invokeExact(arena.allocateFrom(path.toString()), O_RDWR | O_CLOEXEC, 0);
      if (fd < 0) {
        return false;
      }
      try {
        MemorySegment stat = arena.allocate(STAT_BYTES, 8);
        // st_dev and st_ino are the first two 8-byte fields on x86-64 and arm64
        if ((int) FSTAT.invokeExact(fd, stat) != 0 || stat.get(JAVA_LONG, 0) != dev || stat.get(JAVA_LONG, 8) != ino) {
          return false;
        }
        return (int) FALLOCATE.invokeExact(fd, 0, offset, length) == 0;
      } finally {
        int ignored = (int) CLOSE.invokeExact(fd);
      }
    } catch (Error e) {
      throw e;
    } catch (Throwable t) {
      return false;
    }
  }
}
