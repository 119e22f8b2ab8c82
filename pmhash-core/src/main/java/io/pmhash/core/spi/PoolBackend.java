package io.pmhash.core.spi;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A pool backend other than the built-in FFM file: it hosts the bytes of a pmhash pool (header,
 * lanes, heap: the same layout, {@code docs/format/pool.md}) in memory that another library
 * manages, and {@link io.pmhash.core.Pool} does everything else (validation, persistence,
 * allocation, logs, recovery) exactly as for a file, through a {@link
 * java.lang.foreign.MemorySegment} over the region. Found through {@link java.util.ServiceLoader}
 * by {@link #name()}; the {@code pmhash-llpl} module provides {@code "llpl"}.
 *
 * <p>A backend must not load its library, or print anything, before {@link #create} or {@link
 * #open} is called: the FFM default never touches it.
 */
public interface PoolBackend {
  /** @return the name {@link io.pmhash.core.PoolOptions#withBackend} takes, e.g. {@code "llpl"} */
  String name();

  /**
   * Creates the backend's file at {@code path} with a zero-filled region of at least {@code
   * size} bytes, 4096-byte aligned, for a new pool.
   *
   * @param path the file to create; does not exist
   * @param size the region size the pool needs
   * @return the open region
   * @throws io.pmhash.core.BackendUnavailableException if the backend's library cannot load
   * @throws IOException if the file cannot be created; it is deleted again
   */
  Region create(Path path, long size) throws IOException;

  /**
   * Opens the region of an existing file the backend created.
   *
   * @param path the file
   * @return the open region
   * @throws io.pmhash.core.BackendUnavailableException if the backend's library cannot load
   * @throws io.pmhash.core.NotAPoolException if the file holds no region (an interrupted create)
   * @throws IOException if the backend refuses the file
   */
  Region open(Path path) throws IOException;

  /** The memory a backend hosts a pool in: fixed in place and size while open. */
  interface Region extends AutoCloseable {
    /** @return the address of the region's first byte, 4096-byte aligned */
    long address();

    /** @return the region's size in bytes */
    long size();

    /** @return how the region is held, for the pool's log line */
    String describe();

    /**
     * Releases the region; its memory must no longer be touched.
     *
     * @throws IOException if the backend cannot close it
     */
    @Override
    void close() throws IOException;
  }
}
