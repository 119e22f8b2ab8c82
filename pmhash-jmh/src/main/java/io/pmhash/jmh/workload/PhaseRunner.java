package io.pmhash.jmh.workload;

import io.pmhash.core.Persistence;
import io.pmhash.core.PersistenceStats;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * Runs one phase of a workload: {@code [from, to)} split into equal contiguous slices, one per
 * thread, all started together; timed from the first start to the last finish, with a progress
 * bar, and the persist counters of the pool read before and after; with {@link #runTimed}, also a
 * latency histogram per thread (the untimed path is unchanged).
 */
final class PhaseRunner {
  private PhaseRunner() {}

  /** The work of one thread over {@code [from, to)}; reports progress in batches. */
  interface Slice {
    void run(long from, long to, Progress progress) throws Exception;
  }

  /** A slice that records each operation's latency into its thread's histogram. */
  interface TimedSlice {
    void run(long from, long to, Progress progress, LatencyHistogram latency) throws Exception;
  }

  static PhaseResult run(String name, long from, long to, int threads, Persistence persistence,
      PrintStream human, Slice slice) {
    return run(name, from, to, threads, persistence, human, null, t -> slice);
  }

  /** As {@link #run}, with one latency histogram per thread, merged into the result. */
  static PhaseResult runTimed(String name, long from, long to, int threads, Persistence persistence,
      PrintStream human, TimedSlice slice) {
    LatencyHistogram[] perThread = new LatencyHistogram[threads];
    for (int t = 0; t < threads; t++) {
      perThread[t] = new LatencyHistogram();
    }
    LatencyHistogram merged = new LatencyHistogram();
    PhaseResult r = run(name, from, to, threads, persistence, human, merged,
        t -> (a, b, p) -> slice.run(a, b, p, perThread[t]));
    for (LatencyHistogram h : perThread) {
      merged.add(h);
    }
    return r;
  }

  private static PhaseResult run(String name, long from, long to, int threads, Persistence persistence,
      PrintStream human, LatencyHistogram latency, IntFunction<Slice> slices) {
    long n = to - from;
    PersistenceStats before = persistence.stats();
    long t0;
    long t1;
    try (Progress progress = new Progress(name, n, human)) {
      List<Thread> workers = new ArrayList<>();
      Throwable[] failure = new Throwable[1];
      for (int t = 0; t < threads; t++) {
        long a = from + n * t / threads;
        long b = from + n * (t + 1) / threads;
        Slice slice = slices.apply(t);
        workers.add(Thread.ofPlatform().name("pmhash-workload-" + t).unstarted(() -> {
          try {
            slice.run(a, b, progress);
          } catch (Throwable e) {
            synchronized (failure) {
              failure[0] = e;
            }
          }
        }));
      }
      t0 = System.nanoTime();
      workers.forEach(Thread::start);
      for (Thread w : workers) {
        try {
          w.join();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted", e);
        }
      }
      t1 = System.nanoTime();
      if (failure[0] != null) {
        throw new IllegalStateException("phase " + name + " failed: " + failure[0], failure[0]);
      }
    }
    return new PhaseResult(name, n, (t1 - t0) / 1e9, persistence.stats().minus(before), Double.NaN, latency);
  }
}
