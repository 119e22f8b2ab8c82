package io.pmhash.core.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the harness tells a verifier, what it reports, and how it cleans up. */
class CrashHarnessTest {
  @TempDir Path dir;

  /** Three operations, each one word in its own line, persisted once. */
  private static final CrashHarness.Workload THREE_OPS =
      (pool, ops) -> {
        for (int i = 0; i < 3; i++) {
          ops.begin(i);
          Raw.set(pool, Raw.line(pool, i), i + 1);
          pool.persistence().persist(Raw.line(pool, i), 8);
          ops.end(i);
        }
      };

  private static CrashHarness.Verifier recording(List<CrashPoint> seen) {
    return (pool, point) -> {
      seen.add(point);
      assertFalse(pool.lastShutdownClean(), "an image is a crashed pool");
      for (int i = 0; i < point.opsCompleted(); i++) {
        assertEquals(i + 1, Raw.get(pool, Raw.line(pool, i)), "completed op " + i);
      }
    };
  }

  @Test
  void everyDrainAndTheEndAreCrashPointsWithTheirOperations() {
    List<CrashPoint> seen = new ArrayList<>();
    CrashHarness.Report r = CrashHarness.builder(dir, Raw.OPTIONS).images(ImageKind.DRAINED).run(THREE_OPS, recording(seen));
    assertEquals(4, r.crashPoints());
    assertEquals(4, r.imagesChecked());
    for (int i = 0; i < 3; i++) {
      CrashPoint p = seen.get(i);
      assertEquals(i, p.drainIndex());
      assertTrue(p.beforeDrain());
      assertEquals(i, p.opsCompleted());
      assertEquals(OptionalLong.of(i), p.inFlightOp());
      assertEquals(i == 0 ? OptionalLong.empty() : OptionalLong.of(i - 1), p.lastCompletedOp());
      assertFalse(p.duringRecovery());
    }
    CrashPoint end = seen.get(3);
    assertFalse(end.beforeDrain());
    assertEquals(3, end.drainIndex());
    assertEquals(3, end.opsCompleted());
    assertEquals(OptionalLong.empty(), end.inFlightOp());
    assertTrue(end.describe().startsWith("the end of the workload (after 3 drains) (3 ops completed)"), end.describe());
  }

  @Test
  void setupDrainsAreNotCrashPointsButAreCounted() {
    List<CrashPoint> seen = new ArrayList<>();
    CrashHarness.builder(dir, Raw.OPTIONS)
        .images(ImageKind.DRAINED)
        .setup(pool -> {
          Raw.set(pool, Raw.line(pool, 8), 5);
          pool.persistence().persist(Raw.line(pool, 8), 8);
        })
        .run(THREE_OPS, recording(seen));
    assertEquals(List.of(1, 2, 3, 4), seen.stream().map(CrashPoint::drainIndex).toList());
  }

  @Test
  void onlyDrainReplaysTheSameImages() {
    CrashHarness.Workload commitFirst = (pool, ops) -> {
      ops.begin(0);
      for (int i = 0; i < 6; i++) {
        Raw.set(pool, Raw.line(pool, i), 1);
      }
      pool.persistence().persist(Raw.line(pool, 5), 8);
      for (int i = 0; i < 5; i++) {
        pool.persistence().persist(Raw.line(pool, i), 8);
      }
      ops.end(0);
    };
    CrashHarness.Verifier prefix = (pool, point) -> {
      if (Raw.get(pool, Raw.line(pool, 5)) == 1) {
        for (int i = 0; i < 5; i++) {
          assertEquals(1, Raw.get(pool, Raw.line(pool, i)), "word " + i);
        }
      }
    };
    CrashHarness.Report full = CrashHarness.builder(dir, Raw.OPTIONS).images(ImageKind.RANDOM).randomImages(6, 99L)
        .collect(commitFirst, prefix);
    assertFalse(full.passed());
    CrashPoint first = full.failures().get(0).point();
    CrashHarness.Report replay = CrashHarness.builder(dir, Raw.OPTIONS).images(ImageKind.RANDOM).randomImages(6, 99L)
        .onlyDrain(first.drainIndex()).collect(commitFirst, prefix);
    assertEquals(1, replay.crashPoints());
    assertEquals(
        full.failures().stream().filter(f -> f.point().drainIndex() == first.drainIndex()).map(f -> f.point().seed()).toList(),
        replay.failures().stream().map(f -> f.point().seed()).toList());
  }

  @Test
  void recoveredEndsTheCrashPointsOfARecovery() {
    CrashHarness.Workload one = (pool, ops) -> {
      ops.begin(0);
      Raw.set(pool, Raw.line(pool, 0), 1);
      pool.persistence().persist(Raw.line(pool, 0), 8);
      ops.end(0);
    };
    // A verifier that writes after recovery (exercising the structure): those drains must not
    // be crash points once it says recovery is done.
    List<CrashPoint> marked = new ArrayList<>();
    CrashHarness.Report r = CrashHarness.builder(dir, Raw.OPTIONS).images(ImageKind.DRAINED).crashDuringRecovery(true)
        .run(one, (pool, point) -> {
          marked.add(point);
          CrashHarness.recovered(pool);
          Raw.set(pool, Raw.line(pool, 9), 1);
          pool.persistence().persist(Raw.line(pool, 9), 8);
        });
    // Per top-level image: the open's header drain and the end of recovery.
    assertEquals(2 * r.crashPoints(), r.recoveryCrashPoints(), r.summary());
    List<CrashPoint> nested = marked.stream().filter(CrashPoint::duringRecovery).toList();
    assertTrue(nested.stream().anyMatch(p -> p.beforeDrain() && p.drainIndex() == 0), nested.toString());
    assertTrue(nested.stream().anyMatch(p -> !p.beforeDrain()), nested.toString());
    assertTrue(nested.stream().allMatch(p -> p.parent() != null && p.opsCompleted() == p.parent().opsCompleted()));

    CrashHarness.Report unmarked = CrashHarness.builder(dir, Raw.OPTIONS).images(ImageKind.DRAINED).crashDuringRecovery(true)
        .run(one, (pool, point) -> {
          Raw.set(pool, Raw.line(pool, 9), 1);
          pool.persistence().persist(Raw.line(pool, 9), 8);
        });
    assertEquals(3 * unmarked.crashPoints(), unmarked.recoveryCrashPoints(), unmarked.summary());
  }

  @Test
  void anImageThePoolRefusesToOpenIsAFailure() {
    // The workload damages a root word: open refuses the images where it is durable.
    CrashHarness.Report r = CrashHarness.builder(dir, Raw.OPTIONS).images(ImageKind.DRAINED, ImageKind.ALL_PENDING)
        .collect((pool, ops) -> {
          long root = pool.rootWord(0);
          Raw.setRelease(pool, root, 3);
          pool.persistence().persist(root, 8);
        }, (pool, point) -> {});
    assertFalse(r.passed(), r.summary());
    assertTrue(r.failures().get(0).describe().contains("root 0 = 3"), r.failures().get(0).describe());
  }

  /**
   * A workload that ends with a clean close: the images of the marker's drain that hold the
   * marker open clean, and hold every word the workload wrote, also one it never flushed (as a
   * lock word stored while held, or metadata a recovery would rebuild), because the close writes
   * the whole mapping back before the marker. The negative control is the order the close had
   * before: the marker persisted while a word was still only in the cache, which the harness
   * must show as a clean image without the word.
   */
  @Test
  void aCleanCloseWritesEverythingBackBeforeItsMarker() {
    int[] clean = new int[1];
    CrashHarness.Verifier unflushedWordOnClean = (pool, point) -> {
      if (pool.lastShutdownClean()) {
        clean[0]++;
        assertEquals(7, Raw.get(pool, Raw.line(pool, 3)), "a clean image holds the word never flushed");
      }
    };
    CrashHarness.Report closed = CrashHarness.builder(dir, Raw.OPTIONS)
        .images(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE).randomImages(8, 3L)
        .run((pool, ops) -> {
          Raw.set(pool, Raw.line(pool, 3), 7); // never flushed by the workload
          pool.close();
        }, unflushedWordOnClean);
    assertTrue(clean[0] > 0, "some image of the close is clean: " + closed.summary());
    assertEquals(2, closed.crashPoints(), "the write-back's drain and the marker's, no end point: " + closed.summary());

    clean[0] = 0;
    CrashHarness.Report markerFirst = CrashHarness.builder(dir, Raw.OPTIONS).images(ImageKind.DRAINED)
        .collect((pool, ops) -> {
          Raw.set(pool, Raw.line(pool, 3), 7);
          long marker = io.pmhash.core.internal.PoolHeader.CLEAN_SHUTDOWN_OFFSET;
          Raw.setRelease(pool, marker, 1);
          pool.persistence().persist(marker, 8); // the marker durable, the word still only cached
        }, unflushedWordOnClean);
    assertTrue(clean[0] > 0 && !markerFirst.passed(), "the marker-first close is caught: " + markerFirst.summary());
  }

  @Test
  void aFailingWorkloadIsNotACrashFailure() {
    AssertionError e = assertThrows(AssertionError.class, () -> CrashHarness.builder(dir, Raw.OPTIONS)
        .run((pool, ops) -> {
          ops.begin(1);
          ops.begin(2);
        }, (pool, point) -> {}));
    assertTrue(e.getMessage().contains("workload itself failed"), e.getMessage());
    assertTrue(e.getCause() instanceof IllegalStateException, String.valueOf(e.getCause()));
  }

  @Test
  void aCappedEachLineIsNoted() {
    CrashHarness.Report r = CrashHarness.builder(dir, Raw.OPTIONS).images(ImageKind.EACH_LINE).eachLineCap(2)
        .run((pool, ops) -> {
          for (int i = 0; i < 5; i++) {
            Raw.set(pool, Raw.line(pool, i), 1);
          }
        }, (pool, point) -> {});
    assertEquals(1, r.crashPoints()); // no drain: only the end
    assertEquals(2, r.imagesChecked(), r.summary());
    assertTrue(r.notes().get(0).startsWith("1 crash point(s) had more dirty lines than the each-line cap"), r.notes().toString());
  }

  @Test
  void randomImagesComeWithEitherCallOrder() {
    CrashHarness.Workload pending = (pool, ops) -> {
      for (int i = 0; i < 8; i++) {
        Raw.set(pool, Raw.line(pool, i), 1);
      }
    };
    CrashHarness.Report a = CrashHarness.builder(dir, Raw.OPTIONS).randomImages(5, 1L).images(ImageKind.DRAINED)
        .run(pending, (pool, point) -> {});
    CrashHarness.Report b = CrashHarness.builder(dir, Raw.OPTIONS).images(ImageKind.DRAINED).randomImages(5, 1L)
        .run(pending, (pool, point) -> {});
    assertEquals(6, a.imagesChecked() + a.duplicateImagesSkipped(), a.summary());
    assertEquals(a.imagesChecked(), b.imagesChecked());
    CrashHarness.Report named = CrashHarness.builder(dir, Raw.OPTIONS).images(ImageKind.RANDOM).run(pending, (pool, point) -> {});
    assertEquals(4, named.imagesChecked() + named.duplicateImagesSkipped(), named.summary());
  }

  @Test
  void filesAreDeletedAfterwards() throws Exception {
    CrashHarness.builder(dir, Raw.OPTIONS).randomImages(3, 1L).crashDuringRecovery(true).run(THREE_OPS, recording(new ArrayList<>()));
    try (Stream<Path> left = Files.list(dir)) {
      assertEquals("", left.map(Path::toString).collect(Collectors.joining(",")));
    }
  }
}
