package io.pmhash.llpl;

import io.pmhash.core.BackendUnavailableException;
import io.pmhash.core.spi.PoolBackend;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The {@code "llpl"} {@link PoolBackend}: a pmhash pool hosted in a PMDK (libpmemobj) pool file
 * through Intel's llpl 1.2.0. {@link io.pmhash.core.Pool} finds it through {@link
 * java.util.ServiceLoader} when a pool is created with {@code PoolOptions.withBackend("llpl")}, or
 * when it opens a file that starts with PMDK's signature.
 *
 * <p>This class touches no llpl class: llpl (its JNI library, libpmemobj, its {@code
 * sun.misc.Unsafe} warnings) loads at the first {@link #create} or {@link #open}, never when the
 * service loader merely lists the backend for an FFM pool. The layout and the reasons for it are
 * in {@link LlplRegion} and {@code docs/llpl.md}.
 */
public final class LlplPoolBackend implements PoolBackend {
  /** For {@link java.util.ServiceLoader}. */
  public LlplPoolBackend() {}

  @Override
  public String name() {
    return "llpl";
  }

  @Override
  public Region create(Path path, long size, long allocationRoom) throws IOException {
    try {
      return LlplRegion.create(path, size, allocationRoom);
    } catch (NoClassDefFoundError e) {
      throw missingJar(path, e);
    }
  }

  @Override
  public Region open(Path path) throws IOException {
    try {
      return LlplRegion.open(path);
    } catch (NoClassDefFoundError e) {
      throw missingJar(path, e);
    }
  }

  /** llpl's jar is not beside this one: {@link LlplRegion} itself cannot load. */
  private static BackendUnavailableException missingJar(Path path, NoClassDefFoundError e) {
    return new BackendUnavailableException(path + ": the llpl backend cannot find llpl's classes (" + e.getMessage()
        + "): put com.intel.pmem:llpl:1.2.0-release on the class or module path beside pmhash-llpl", e);
  }
}
