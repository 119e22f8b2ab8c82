package io.pmhash.core.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pool header's clean-shutdown marker across a close and a reopen: what the harness, which
 * always crashes a freshly created pool, never sees. A clean close must leave the marker durable
 * (else every open after a clean close runs recovery), and the reopen must make its clearing
 * durable before the pool is written (else a crash after it looks clean and skips recovery).
 */
class PoolHeaderCrashTest {
  @TempDir Path dir;

  @Test
  void aCleanCloseIsDurableAndAReopenClearsItBeforeAnyWrite() throws Exception {
    Path file = dir.resolve("pool");
    CrashSimulator created = new CrashSimulator();
    try (Pool pool = Pool.create(file, Raw.OPTIONS.withPersistence(() -> created))) {
      Raw.set(pool, Raw.line(pool, 0), 7);
      pool.persistence().persist(Raw.line(pool, 0), 8);
    }
    Path afterClose = dir.resolve("after-close");
    created.writeImage(created.drainedImage(), afterClose);
    try (Pool pool = Pool.open(afterClose, Raw.OPTIONS)) {
      check(() -> assertTrue(pool.lastShutdownClean(), "the durable image after close() is a clean shutdown"));
    }

    // Reopen under a simulator and crash at every drain after the reopen's own: the durable
    // image must not claim a clean shutdown once the pool may have been written.
    List<Boolean> cleanAtPoint = new ArrayList<>();
    int[] n = {0};
    CrashSimulator reopened = new CrashSimulator();
    reopened.onCrashPoint((s, drain, before) -> {
      Path image = dir.resolve("image-" + n[0]++);
      try {
        s.writeImage(s.drainedImage(), image);
        try (Pool p = Pool.open(image, Raw.OPTIONS)) {
          cleanAtPoint.add(p.lastShutdownClean());
        }
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    try (Pool pool = Pool.open(file, Raw.OPTIONS.withPersistence(() -> reopened))) {
      reopened.arm();
      Raw.set(pool, Raw.line(pool, 1), 8);
      pool.persistence().persist(Raw.line(pool, 1), 8);
      reopened.offerCrashPoint();
      reopened.disarm();
    }
    check(() -> assertEquals(List.of(false, false), cleanAtPoint, "a crash after the reopen is not a clean shutdown"));
  }

  /** Runs a check of crash images; a failure is reported to a running mutation check too. */
  private static void check(Runnable assertion) {
    try {
      assertion.run();
    } catch (AssertionError e) {
      MutationSession.crashImageFailed();
      throw e;
    }
  }
}
