package io.pmhash.schemes.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pmhash.core.Pool;
import io.pmhash.schemes.internal.DirectoryRoute;
import io.pmhash.schemes.internal.ExtendibleDirectory;
import java.lang.foreign.MemorySegment;

/** The invariant of {@link DirectoryRoute} on a quiescent table, for the extendible schemes' checkers. */
public final class Routes {
  private Routes() {}

  /**
   * No doubling or halving in flight: the route names the directory the table header names, with
   * that directory's depth.
   *
   * @param pool the table's pool
   * @param route the table's route
   * @param at what the caller checks, for messages
   */
  public static void assertPublished(Pool pool, DirectoryRoute route, String at) {
    MemorySegment m = pool.memory();
    long dir = route.directory(m);
    long r = route.get();
    assertEquals(dir, DirectoryRoute.directoryOf(r), at + ": the route's directory");
    assertEquals(ExtendibleDirectory.depth(m, dir), DirectoryRoute.depthOf(r), at + ": the route's depth");
  }
}
