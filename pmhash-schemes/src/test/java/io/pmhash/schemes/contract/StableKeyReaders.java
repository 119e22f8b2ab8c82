package io.pmhash.schemes.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.LongHashTable;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A concurrent run for the growing schemes' concurrency tests: readers look up keys that are
 * present for the whole run while writers insert and delete enough to make the table grow
 * (splits, doublings, overflow), then the table must hold exactly what the writers left. No
 * sleeps and no clock: the readers run until the writers are done. Each scheme's test adds what
 * the run must have exercised (its structural counters) and its invariants.
 */
public final class StableKeyReaders {
  private StableKeyReaders() {}

  /**
   * Keys {@code 0..stable-1} with value {@code ~k} are put first. Then {@code writers} threads
   * each insert {@code perWriter} keys of their own ({@code 1,000,000 × (w + 1) + i}, value
   * {@code i}) and, after every third, delete the one before it; two readers meanwhile check that
   * every stable key reads as {@code ~k}. Afterwards: every stable key, every writer key that
   * should be there with its value and none of the deleted ones, and {@code size()} equal to
   * that count.
   *
   * @param t an empty table
   * @param stable how many stable keys
   * @param writers how many writer threads
   * @param perWriter inserts per writer
   * @throws Exception if a thread is interrupted
   */
  public static void growWhileReading(LongHashTable t, int stable, int writers, int perWriter) throws Exception {
    List<Writer> bodies = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      long base = writerBase(w);
      bodies.add(() -> {
        for (long i = 0; i < perWriter; i++) {
          assertTrue(t.put(base + i, i));
          if (i % 3 == 2) {
            assertTrue(t.remove(base + i - 1), "remove " + (base + i - 1));
          }
        }
      });
    }
    whileReading(t, stable, bodies);
    long expected = stable;
    for (int w = 0; w < writers; w++) {
      long base = writerBase(w);
      for (long i = 0; i < perWriter; i++) {
        boolean present = i % 3 != 1 || i == perWriter - 1;
        assertEquals(present ? i : -1, t.get(base + i, -1), "writer " + w + " key " + i);
        expected += present ? 1 : 0;
      }
    }
    assertEquals(expected, t.size());
  }

  /** A writer thread's work; what it throws fails the run. */
  @FunctionalInterface
  public interface Writer {
    /**
     * @throws Exception on failure
     */
    void run() throws Exception;
  }

  /** What a stable key may read as while the writers run. */
  @FunctionalInterface
  public interface StableValue {
    /**
     * @param key a stable key
     * @param value what a reader read for it
     * @return whether that is one of its values
     */
    boolean holds(long key, long value);
  }

  /**
   * {@link #whileReading(LongHashTable, int, List, StableValue)} where a stable key keeps its
   * first value, {@code ~k}.
   *
   * @param t the table
   * @param stable how many stable keys; the writers must leave them alone
   * @param writers the writers' work
   * @return how many lookups the readers made
   * @throws Exception if a thread is interrupted
   */
  public static long whileReading(LongHashTable t, int stable, List<Writer> writers) throws Exception {
    return whileReading(t, stable, writers, (k, v) -> v == ~k);
  }

  /**
   * Puts keys {@code 0..stable-1} with value {@code ~k}, runs each writer in a thread of its own
   * while two readers look up stable keys and check each value read with {@code valid}, and stops
   * the readers when the writers are done. Afterwards every stable key still reads as a valid
   * value.
   *
   * @param t the table
   * @param stable how many stable keys; writers may only change them to values {@code valid} holds
   * @param writers the writers' work
   * @param valid what a stable key may read as
   * @return how many lookups the readers made
   * @throws Exception if a thread is interrupted
   * @throws AssertionError the first failure of a writer or a reader
   */
  public static long whileReading(LongHashTable t, int stable, List<Writer> writers, StableValue valid) throws Exception {
    for (long k = 0; k < stable; k++) {
      t.put(k, ~k);
    }
    AtomicBoolean done = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicLong reads = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    for (Writer w : writers) {
      threads.add(new Thread(() -> {
        try {
          w.run();
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }));
    }
    for (int r = 0; r < 2; r++) {
      long seed = r;
      threads.add(new Thread(() -> {
        try {
          long k = seed;
          long n = 0;
          while (!done.get()) {
            k = k * 6364136223846793005L + 1442695040888963407L;
            long key = Math.floorMod(k >>> 1, stable);
            long v = t.get(key, 1);
            if (!valid.holds(key, v)) {
              throw new AssertionError("stable key " + key + " read as " + v + " (table: " + t.stats() + ")");
            }
            n++;
          }
          reads.addAndGet(n);
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }));
    }
    threads.forEach(Thread::start);
    for (int i = 0; i < writers.size(); i++) {
      threads.get(i).join();
    }
    done.set(true);
    for (Thread th : threads) {
      th.join();
    }
    if (failure.get() != null) {
      throw new AssertionError(failure.get());
    }
    for (long k = 0; k < stable; k++) {
      long v = t.get(k, 1);
      assertTrue(valid.holds(k, v), "stable key " + k + " ends as " + v);
    }
    return reads.get();
  }

  private static long writerBase(int w) {
    return 1_000_000L * (w + 1);
  }
}
