package io.pmhash.jmh.workload;

import java.io.PrintStream;
import java.util.concurrent.atomic.LongAdder;

/**
 * A progress bar on standard error for one phase: redrawn in place five times a second on a
 * terminal, printed as a line every quarter otherwise (CI logs). Workers report completed
 * operations in batches through {@link #add(long)}.
 */
final class Progress implements AutoCloseable {
  private static final int WIDTH = 30;

  private final String phase;
  private final long total;
  private final PrintStream out;
  private final boolean terminal;
  private final LongAdder done = new LongAdder();
  private final long startNanos = System.nanoTime();
  private final Thread painter;
  private volatile boolean finished;
  private int lastQuarter;

  Progress(String phase, long total, PrintStream out) {
    this.phase = phase;
    this.total = Math.max(1, total);
    this.out = out;
    this.terminal = System.console() != null;
    this.painter = Thread.ofPlatform().daemon().name("pmhash-progress").start(this::paint);
  }

  void add(long ops) {
    done.add(ops);
  }

  private void paint() {
    while (!finished) {
      draw(false);
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private synchronized void draw(boolean last) {
    long n = Math.min(done.sum(), total);
    double fraction = (double) n / total;
    double seconds = (System.nanoTime() - startNanos) / 1e9;
    double mops = seconds > 0 ? n / seconds / 1e6 : 0;
    if (terminal) {
      int filled = (int) (fraction * WIDTH);
      out.printf("\r  %-16s [%s%s] %3d%%  %8.2f Mops/s%s", phase, "#".repeat(filled),
          " ".repeat(WIDTH - filled), (int) (fraction * 100), mops, last ? "\n" : "");
      out.flush();
    } else {
      int quarter = (int) (fraction * 4);
      if (quarter > lastQuarter && quarter < 4) {
        lastQuarter = quarter;
        out.printf("  %-16s %3d%%  %8.2f Mops/s%n", phase, quarter * 25, mops);
      }
    }
  }

  @Override
  public void close() {
    finished = true;
    painter.interrupt();
    try {
      painter.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    draw(true);
  }
}
