/**
 * pmhash core: the pool file and its header, the persistence seam with its native
 * flush shim, allocation, version locks, epoch reclamation, hashing, logs and the
 * crash simulator. See {@code docs/persistence.md}.
 */
module io.pmhash.core {
  requires jdk.nio.mapmode;

  exports io.pmhash.core;
  exports io.pmhash.core.alloc;
  exports io.pmhash.core.concurrent;
  exports io.pmhash.core.crash;
  exports io.pmhash.core.hash;
  exports io.pmhash.core.log;
  exports io.pmhash.map;
  exports io.pmhash.map.spi;
  exports io.pmhash.core.spi;

  uses io.pmhash.map.spi.SchemeProvider;
  uses io.pmhash.core.spi.PoolBackend;
}
