package io.pmhash.core.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The binding to {@code native/pmhash.c}: an optional provider, loaded once. If the library
 * cannot be found or loaded (another OS or CPU, a build without gcc, native access denied), one
 * warning names the cause and {@link #available()} is false; the pool then uses the JDK's own
 * {@code MemorySegment.force} path.
 *
 * <p>The library is packaged in the pmhash-core jar at {@code /native/<os>-<arch>/libpmhash.so}
 * and loaded from an in-memory file (Linux {@code memfd_create}; a temporary file elsewhere or
 * with {@code -Dpmhash.native.tempfile=true}). {@code -Dpmhash.native.path=FILE} loads another
 * build instead; {@code -Dpmhash.native.disable=true} skips the native path altogether.
 *
 * <p>Downcalls are bound with {@link Linker.Option#critical(boolean) critical(false)}: the C
 * functions neither block, allocate, nor call back, so they run without a thread-state
 * transition, and are invoked with {@code invokeExact}.
 */
@SuppressWarnings("restricted") // loads and binds our own shim, signatures from native/pmhash.c
public final class NativeShim {
  private NativeShim() {}

  /** Flush instruction the shim chose by CPUID; the values match {@code PMHASH_FLUSH_*}. */
  public enum Instruction {
    /** The shim is not loaded. */
    NONE,
    /** {@code clflush}: writes back and evicts, strongly ordered. */
    CLFLUSH,
    /** {@code clflushopt}: writes back and evicts, weakly ordered. */
    CLFLUSHOPT,
    /** {@code clwb}: writes back and may keep the line cached. */
    CLWB,
    /** aarch64 {@code dc cvac}. */
    DC_CVAC;

    /** @return the assembler mnemonic, lower case */
    public String mnemonic() {
      return name().toLowerCase(Locale.ROOT).replace('_', ' ');
    }
  }

  /** ABI version this binding expects ({@code PMHASH_ABI_VERSION}). */
  static final int ABI_VERSION = 2;

  /** {@code MFD_CLOEXEC} from linux/memfd.h. */
  private static final int MFD_CLOEXEC = 1;

  private static final System.Logger LOG = System.getLogger("io.pmhash.native");
  private static final Binding BINDING;
  private static final String UNAVAILABLE_REASON;
  private static final MethodHandle FLUSH;
  private static final MethodHandle DRAIN;
  private static final MethodHandle PERSIST;
  private static final MethodHandle HEAVY_BARRIER;

  static {
    Binding binding = null;
    String reason;
    try {
      binding = load();
      reason = null;
    } catch (LoadFailure e) {
      reason = e.getMessage();
      LOG.log(
          System.Logger.Level.WARNING,
          "pmhash native flush shim not loaded: " + reason
              + "; using the JDK's MemorySegment.force path instead (slower; PMEM_EMULATED"
              + " then has msync costs). See docs/persistence.md.");
    }
    BINDING = binding;
    UNAVAILABLE_REASON = reason;
    FLUSH = binding == null ? null : binding.flush;
    DRAIN = binding == null ? null : binding.drain;
    PERSIST = binding == null ? null : binding.persist;
    HEAVY_BARRIER = binding == null ? null : binding.heavyBarrier;
  }

  /** A loaded library's entry points. */
  record Binding(
      Path library, Instruction instruction, MethodHandle flush, MethodHandle drain,
      MethodHandle persist, MethodHandle heavyBarrier) {}

  /** Why the library could not be loaded. */
  static final class LoadFailure extends Exception {
    private static final long serialVersionUID = 1L;

    LoadFailure(String message) {
      super(message);
    }

    LoadFailure(String message, Throwable cause) {
      super(message + ": " + cause, cause);
    }
  }

  /**
   * @return true when {@link #heavyBarrier()} is available (Linux membarrier with private
   *     expedited commands, through the shim)
   */
  public static boolean heavyBarrierAvailable() {
    return HEAVY_BARRIER != null;
  }

  /**
   * Runs a full memory barrier on every CPU that currently runs a thread of this process
   * (membarrier(2)). After it returns, every store another thread issued before the call is
   * visible to the caller. Requires {@link #heavyBarrierAvailable()}.
   */
  public static void heavyBarrier() {
    int rc;
    try {
      rc = (int) HEAVY_BARRIER.invokeExact();
    } catch (Throwable t) {
      throw rethrow(t);
    }
    if (rc != 0) {
      throw new IllegalStateException("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed");
    }
  }

  /** @return true when the native flush path is in use */
  public static boolean available() {
    return BINDING != null;
  }

  /** @return why the shim is not loaded, or null when it is */
  public static String unavailableReason() {
    return UNAVAILABLE_REASON;
  }

  /** @return the flush instruction the shim chose, {@link Instruction#NONE} when not loaded */
  public static Instruction instruction() {
    return BINDING == null ? Instruction.NONE : BINDING.instruction();
  }

  /** @return e.g. {@code "native clwb + sfence (libpmhash, linux-x86_64)"} or the fallback */
  public static String describe() {
    if (BINDING == null) {
      return PersistenceChoice.FALLBACK_PREFIX + UNAVAILABLE_REASON + ")";
    }
    String fence = platform().endsWith("aarch64") ? "dsb ish" : "sfence";
    return "native " + BINDING.instruction().mnemonic() + " + " + fence + " (libpmhash, "
        + platform() + ")";
  }

  /**
   * Writes back the lines of {@code [address, address + length)}.
   *
   * @param address a native address inside a mapping
   * @param length bytes
   */
  public static void flush(long address, long length) {
    try {
      FLUSH.invokeExact(address, length);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** Waits for this thread's flushes (sfence). */
  public static void drain() {
    try {
      DRAIN.invokeExact();
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /**
   * Flush then drain.
   *
   * @param address a native address inside a mapping
   * @param length bytes
   */
  public static void persist(long address, long length) {
    try {
      PERSIST.invokeExact(address, length);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  private static RuntimeException rethrow(Throwable t) {
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    throw new IllegalStateException("native flush shim failed", t);
  }

  /** @return {@code <os>-<arch>} as the build script names its output folder */
  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    String osPart = os.startsWith("linux") ? "linux" : os.replace(' ', '_');
    String archPart =
        switch (arch) {
          case "amd64", "x86_64" -> "x86_64";
          case "aarch64", "arm64" -> "aarch64";
          default -> arch;
        };
    return osPart + "-" + archPart;
  }

  private static Binding load() throws LoadFailure {
    if (Boolean.getBoolean("pmhash.native.disable")) {
      throw new LoadFailure("disabled by -Dpmhash.native.disable=true");
    }
    String explicit = System.getProperty("pmhash.native.path");
    Path library = explicit != null ? Path.of(explicit) : extract("/native/" + platform() + "/libpmhash.so");
    return bind(library);
  }

  /**
   * Makes a packaged library loadable: on Linux an anonymous in-memory file ({@code
   * memfd_create}, reached as {@code /proc/self/fd/N}), else a temporary file deleted at exit.
   *
   * <p>The in-memory file is the default because it costs a few milliseconds where a temporary
   * file costs 30-40 (seeding {@code SecureRandom} for its name), leaves nothing behind when the
   * JVM is killed ({@code deleteOnExit} never runs then), and works where the temporary folder is
   * mounted {@code noexec}. Its descriptor stays open for the life of the process (close-on-exec).
   * Where {@code memfd_create} is missing or refused (an old kernel, {@code vm.memfd_noexec=2}),
   * the temporary file is used, as {@code -Dpmhash.native.tempfile=true} forces.
   *
   * @param resource the resource path in this module
   * @return a path {@link SymbolLookup#libraryLookup(String, Arena)} can load
   * @throws LoadFailure if the resource is not packaged or cannot be copied
   */
  static Path extract(String resource) throws LoadFailure {
    byte[] bytes;
    try (InputStream in = NativeShim.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new LoadFailure(
            "no native library for " + platform() + " in the pmhash-core jar (" + resource
                + "); it is built by native/build.sh when gcc is present on a supported OS/CPU");
      }
      bytes = in.readAllBytes();
    } catch (IOException e) {
      throw new LoadFailure("cannot read " + resource, e);
    }
    Path inMemory = Boolean.getBoolean("pmhash.native.tempfile") ? null : inMemoryFile(bytes);
    return inMemory != null ? inMemory : temporaryFile(bytes, resource);
  }

  /** The library's bytes in a memfd, or null where Linux's memfd_create is not there or refuses. */
  static Path inMemoryFile(byte[] bytes) {
    if (!platform().startsWith("linux-")) {
      return null;
    }
    Linker linker = Linker.nativeLinker();
    var symbol = linker.defaultLookup().find("memfd_create");
    if (symbol.isEmpty()) {
      return null;
    }
    MethodHandle memfdCreate = linker.downcallHandle(symbol.get(), FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    int fd;
    try (Arena arena = Arena.ofConfined()) {
      fd = (int) memfdCreate.invokeExact(arena.allocateFrom("libpmhash"), MFD_CLOEXEC);
    } catch (Throwable t) {
      return null;
    }
    if (fd < 0) {
      return null;
    }
    Path file = Path.of("/proc/self/fd/" + fd);
    try {
      Files.write(file, bytes);
      return file;
    } catch (IOException e) {
      return null; // the descriptor stays open (one, close-on-exec); the temporary file is used
    }
  }

  /** The library's bytes in a temporary file deleted at exit. */
  static Path temporaryFile(byte[] bytes, String resource) throws LoadFailure {
    try {
      Path file = Files.createTempFile("libpmhash-", ".so");
      file.toFile().deleteOnExit();
      Files.write(file, bytes);
      return file;
    } catch (IOException e) {
      throw new LoadFailure("cannot copy " + resource + " to a temporary file", e);
    }
  }

  /**
   * Loads a library file and binds its entry points.
   *
   * @param library the shared object
   * @return the binding
   * @throws LoadFailure with the cause when any step fails
   */
  static Binding bind(Path library) throws LoadFailure {
    SymbolLookup lookup;
    try {
      // The name form goes to dlopen as it is; the Path form resolves the real path first,
      // which for an in-memory file (/proc/self/fd/N) names no file.
      lookup = SymbolLookup.libraryLookup(library.toAbsolutePath().toString(), Arena.global());
    } catch (IllegalArgumentException | IllegalCallerException e) {
      throw new LoadFailure("cannot load " + library, e);
    }
    Linker linker = Linker.nativeLinker();
    Linker.Option critical = Linker.Option.critical(false);
    try {
      MethodHandle abi = downcall(linker, lookup, "pmhash_abi_version", FunctionDescriptor.of(JAVA_INT), critical);
      int version = (int) abi.invokeExact();
      if (version != ABI_VERSION) {
        throw new LoadFailure(library + " has ABI version " + version + ", this pmhash needs " + ABI_VERSION);
      }
      MethodHandle which = downcall(linker, lookup, "pmhash_flush_instruction", FunctionDescriptor.of(JAVA_INT), critical);
      int code = (int) which.invokeExact();
      Instruction[] all = Instruction.values();
      if (code <= 0 || code >= all.length) {
        throw new LoadFailure(library + " reports an unknown flush instruction code " + code);
      }
      FunctionDescriptor range = FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG);
      // membarrier is a system call that sends IPIs: bound without critical(), it may take
      // microseconds and must let the JVM reach a safepoint meanwhile.
      MethodHandle barrierInit = linker.downcallHandle(
          lookup.find("pmhash_heavy_barrier_init").orElseThrow(() -> new LoadFailure("symbol pmhash_heavy_barrier_init missing from the native library")),
          FunctionDescriptor.of(JAVA_INT));
      MethodHandle barrier = (int) barrierInit.invokeExact() == 0
          ? linker.downcallHandle(
              lookup.find("pmhash_heavy_barrier").orElseThrow(() -> new LoadFailure("symbol pmhash_heavy_barrier missing from the native library")),
              FunctionDescriptor.of(JAVA_INT))
          : null;
      return new Binding(
          library,
          all[code],
          downcall(linker, lookup, "pmhash_flush", range, critical),
          downcall(linker, lookup, "pmhash_drain", FunctionDescriptor.ofVoid(), critical),
          downcall(linker, lookup, "pmhash_persist", range, critical),
          barrier);
    } catch (LoadFailure e) {
      throw e;
    } catch (Throwable t) {
      throw new LoadFailure("cannot bind the entry points of " + library, t);
    }
  }

  private static MethodHandle downcall(
      Linker linker, SymbolLookup lookup, String name, FunctionDescriptor descriptor,
      Linker.Option option) throws LoadFailure {
    var symbol = lookup.find(name);
    if (symbol.isEmpty()) {
      throw new LoadFailure("symbol " + name + " missing from the native library");
    }
    return linker.downcallHandle(symbol.get(), descriptor, option);
  }
}
