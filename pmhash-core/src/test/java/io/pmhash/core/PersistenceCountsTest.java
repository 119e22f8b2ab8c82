package io.pmhash.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pmhash.core.internal.OrderingPersistence;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import org.junit.jupiter.api.Test;

/**
 * {@link Persistence#stats()} counts every thread's flushes and drains exactly, although each
 * thread counts in counters of its own without a locked instruction: while the threads run
 * together, after they end, and when a new thread takes over the counters of one that ended.
 */
class PersistenceCountsTest {
  /** Counts only: flushing and draining do nothing (the PROCESS mode's persistence). */
  static Persistence counting() {
    return new OrderingPersistence("counting only");
  }

  @Test
  void threadsFlushingTogetherAreCountedExactly() throws Exception {
    Persistence p = counting();
    int threads = 4;
    int rounds = 10_000;
    CyclicBarrier start = new CyclicBarrier(threads);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int lines = t + 1;
      Thread w = new Thread(() -> {
        try {
          start.await();
        } catch (Exception e) {
          throw new AssertionError(e);
        }
        for (int i = 0; i < rounds; i++) {
          p.flush(64L * i, 64L * lines); // line-aligned: exactly `lines` lines
          p.drain();
        }
      });
      workers.add(w);
      w.start();
    }
    for (Thread w : workers) {
      w.join();
    }
    PersistenceStats s = p.stats();
    assertEquals((long) rounds * (1 + 2 + 3 + 4), s.linesFlushed());
    assertEquals((long) rounds * threads, s.drains());
  }

  @Test
  void aThreadThatEndedKeepsItsCountsWhenAnotherTakesOverItsCounters() throws Exception {
    Persistence p = counting();
    Thread first = new Thread(() -> {
      p.flush(0, 3 * 64);
      p.drain();
    });
    first.start();
    first.join();
    Thread second = new Thread(() -> { // registers after `first` ended: takes its counters over
      p.flush(0, 5 * 64);
      p.drain();
      p.drain();
    });
    second.start();
    second.join();
    p.persist(10, 1); // this thread: one line, one drain
    PersistenceStats s = p.stats();
    assertEquals(3 + 5 + 1, s.linesFlushed());
    assertEquals(1 + 2 + 1, s.drains());
    assertEquals(s, p.stats(), "reading the counters changes nothing");
  }

  @Test
  void aFlushOfNothingCountsNothing() {
    Persistence p = counting();
    p.flush(128, 0);
    p.flush(128, -5);
    assertEquals(0, p.stats().linesFlushed());
    assertEquals(0, p.stats().drains());
  }
}
