package io.pmhash.core.crash;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The simulator's model of what is durable, one rule per test. */
class CrashSimulatorTest {
  @TempDir Path dir;

  private CrashSimulator sim;
  private Pool pool;
  private long d;

  @BeforeEach
  void open() throws Exception {
    sim = new CrashSimulator();
    pool = Pool.create(dir.resolve("sim.pool"), Raw.OPTIONS.withDurability(Durability.PROCESS).withPersistence(() -> sim));
    d = Raw.line(pool, 0);
  }

  @AfterEach
  void close() throws Exception {
    pool.close();
  }

  private MemorySegment drained() {
    return sim.materialize(sim.drainedImage());
  }

  private MemorySegment allPending() {
    return sim.materialize(sim.allPendingImage());
  }

  @Test
  void flushedAndDrainedWordIsInTheDrainedImage() {
    Raw.set(pool, d, 42);
    pool.persistence().persist(d, 8);
    assertEquals(42, sim.durableWord(d));
    assertEquals(42, Raw.get(drained(), d));
    assertTrue(sim.pendingWords().isEmpty(), sim.pendingWords().toString());
  }

  @Test
  void writtenButNotFlushedIsInAllPendingNotInDrained() {
    Raw.set(pool, d, 42);
    assertEquals(0, Raw.get(drained(), d));
    assertEquals(42, Raw.get(allPending(), d));
    assertEquals(List.of(new PendingWord(d, 0, 42, false, 0)), sim.pendingWords());
    pool.persistence().drain(); // a drain without a flush makes nothing durable
    assertEquals(0, sim.durableWord(d));
  }

  @Test
  void flushedThenOverwrittenBeforeTheDrainGivesTheFlushTimeValue() {
    Raw.set(pool, d, 1);
    pool.persistence().flush(d, 8);
    Raw.set(pool, d, 2);
    assertArrayEquals(new long[] {0, 1, 2}, sim.pendingWords().get(0).candidates());
    pool.persistence().drain();
    assertEquals(1, sim.durableWord(d));
    assertEquals(1, Raw.get(drained(), d));
    assertEquals(2, Raw.get(allPending(), d));
  }

  @Test
  void storedBackAfterItsFlushIsStillPending() {
    Raw.set(pool, d, 5);
    pool.persistence().flush(d, 8);
    Raw.set(pool, d, 0);
    assertEquals(List.of(new PendingWord(d, 0, 0, true, 5)), sim.pendingWords());
    pool.persistence().drain();
    assertEquals(5, sim.durableWord(d));
    assertEquals(List.of(new PendingWord(d, 5, 0, false, 0)), sim.pendingWords());
  }

  @Test
  void aFlushCoversWholeLinesOnly() {
    Raw.set(pool, d + 56, 7);       // same line as d
    Raw.set(pool, d + 64, 8);       // next line
    pool.persistence().persist(d, 1);
    assertEquals(7, sim.durableWord(d + 56));
    assertEquals(0, sim.durableWord(d + 64));
  }

  @Test
  void aDrainIsACrashPointBeforeItsFlushesApply() {
    List<String> seen = new ArrayList<>();
    sim.onCrashPoint((s, drain, before) -> seen.add(drain + ":" + before + ":" + s.durableWord(d) + ":" + s.pendingWords().size()));
    pool.persistence().persist(d, 8); // disarmed: not a crash point
    sim.arm();
    Raw.set(pool, d, 3);
    pool.persistence().persist(d, 8);
    sim.offerCrashPoint();
    sim.disarm();
    pool.persistence().drain();
    assertEquals(List.of("1:true:0:1", "2:false:3:0"), seen);
    assertEquals(3, sim.drains());
  }

  @Test
  void randomImagesAreReproducibleFromTheirSeed() {
    for (int i = 0; i < 12; i++) {
      Raw.set(pool, d + 40L * i, i + 1);
      if (i % 3 == 0) {
        pool.persistence().flush(d + 40L * i, 8);
        Raw.set(pool, d + 40L * i, 100 + i);
      }
    }
    List<PendingWord> pending = sim.pendingWords();
    assertEquals(12, pending.size());
    CrashImage a = sim.randomImage(1234);
    CrashImage b = sim.randomImage(1234);
    assertEquals(1234, a.seed());
    assertTrue(a.sameWords(b));
    assertEquals(-1, sim.materialize(a).mismatch(sim.materialize(b)));
    // Over many seeds every candidate of every word appears, and images differ.
    Set<String> seenValues = new HashSet<>();
    Set<Integer> distinct = new HashSet<>();
    for (long seed = 0; seed < 200; seed++) {
      CrashImage r = sim.randomImage(seed);
      distinct.add(r.wordsHash());
      MemorySegment m = sim.materialize(r);
      for (PendingWord w : pending) {
        seenValues.add(w.offset() + "=" + Raw.get(m, w.offset()));
      }
    }
    int candidates = pending.stream().mapToInt(w -> w.candidates().length).sum();
    assertEquals(4 * 3 + 8 * 2, candidates);
    assertEquals(candidates, seenValues.size());
    assertTrue(distinct.size() > 100, "distinct random images: " + distinct.size());
  }

  @Test
  void eachLineGivesOneImagePerDirtyLine() {
    Raw.set(pool, d, 1);
    Raw.set(pool, d + 8, 2);
    Raw.set(pool, d + 64 * 3, 3);
    Raw.set(pool, d + 64 * 5 + 16, 4);
    List<CrashImage> images = sim.eachLineImages(64);
    assertEquals(3, images.size());
    assertEquals(3, sim.dirtyLineCount());
    assertEquals(d, images.get(0).line());
    assertEquals(2, images.get(0).overrideCount());
    assertEquals(d + 64 * 5, images.get(2).line());
    MemorySegment third = sim.materialize(images.get(2));
    assertEquals(4, Raw.get(third, d + 64 * 5 + 16));
    assertEquals(0, Raw.get(third, d));
    assertEquals(0, Raw.get(third, d + 64 * 3));
    assertEquals(2, sim.eachLineImages(2).size());
  }

  @Test
  void duplicateImagesAreLeftOut() {
    EnumSet<ImageKind> all = EnumSet.allOf(ImageKind.class);
    assertEquals(1, sim.images(all, 64, 1, 2, 3).size()); // nothing pending: one image
    Raw.set(pool, d, 1);
    // one pending word: DRAINED and ALL_PENDING (= its only line, = every random pick)
    assertEquals(2, sim.images(all, 64, 1, 2, 3, 4, 5, 6).size());
  }

  @Test
  void writtenImagesAreSparseFilesOfThePoolsSize() throws Exception {
    Raw.set(pool, d, 77);
    Path file = dir.resolve("image.pool");
    sim.writeImage(sim.allPendingImage(), file);
    assertEquals(pool.size(), Files.size(file));
    byte[] bytes = Files.readAllBytes(file);
    assertEquals(-1, MemorySegment.ofArray(bytes).mismatch(sim.materialize(sim.allPendingImage())));
  }

  @Test
  void growthExtendsTheShadowWithZeros() {
    long old = pool.size();
    sim.arm();
    List<Long> sizes = new ArrayList<>();
    sim.onCrashPoint((s, drain, before) -> sizes.add(s.size()));
    pool.ensureSize(old + 1);
    sim.disarm();
    // the drain that persists the new file size; growth adds a quarter, at least a chunk
    assertEquals(List.of(old + Math.max(old / 4, 64 << 10)), sizes);
    long tail = old + 64;
    assertEquals(0, sim.durableWord(tail));
    Raw.set(pool, tail, 9);
    assertEquals(List.of(new PendingWord(tail, 0, 9, false, 0)), sim.pendingWords());
    pool.persistence().persist(tail, 8);
    assertEquals(9, Raw.get(drained(), tail));
  }

  @Test
  void aDrainFromASecondThreadIsRefused() throws Exception {
    pool.persistence().drain();
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread t = new Thread(() -> {
      try {
        pool.persistence().drain();
      } catch (Throwable e) {
        thrown.set(e);
      }
    }, "second");
    t.start();
    t.join();
    assertTrue(thrown.get() instanceof IllegalStateException, String.valueOf(thrown.get()));
    assertTrue(thrown.get().getMessage().contains("single-threaded"), thrown.get().getMessage());
  }

  @Test
  void aFlushOutsideThePoolIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> pool.persistence().flush(pool.size() - 8, 16));
    assertFalse(sim.armed());
  }
}
