package io.pmhash.jmh.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The {@code --latency} histogram: buckets, percentiles within 1/16 of the exact ones, exact max, merging. */
class LatencyHistogramTest {
  @Test
  void bucketsCoverEveryValueOnceAndInOrder() {
    for (long v : new long[] {0, 1, 15, 16, 17, 31, 32, 33, 1000, 123_456_789, Long.MAX_VALUE}) {
      int i = LatencyHistogram.index(v);
      assertTrue(v <= LatencyHistogram.upperBound(i), v + " within its bucket's bound");
      assertTrue(i == 0 || v > LatencyHistogram.upperBound(i - 1), v + " above the previous bucket's bound");
    }
    for (int i = 1; i <= LatencyHistogram.index(Long.MAX_VALUE); i++) {
      assertEquals(i, LatencyHistogram.index(LatencyHistogram.upperBound(i)), "bound of bucket " + i);
      assertEquals(i, LatencyHistogram.index(LatencyHistogram.upperBound(i - 1) + 1), "start of bucket " + i);
    }
  }

  @Test
  void percentilesAreWithinASixteenthAndMaxIsExact() {
    SplittableRandom rnd = new SplittableRandom(7);
    int n = 100_000;
    long[] values = new long[n];
    LatencyHistogram a = new LatencyHistogram();
    LatencyHistogram b = new LatencyHistogram();
    for (int i = 0; i < n; i++) {
      values[i] = (long) Math.exp(rnd.nextDouble() * 16); // 1 ns .. 8.9 ms, log-uniform
      (i % 2 == 0 ? a : b).record(values[i]);
    }
    a.add(b);
    Arrays.sort(values);
    assertEquals(n, a.count());
    assertEquals(values[n - 1], a.max());
    for (double q : new double[] {0.5, 0.99, 0.999}) {
      long exact = values[(int) Math.ceil(q * n) - 1];
      long got = a.percentile(q);
      assertTrue(got >= exact && got <= exact + exact / 16 + 1, "p" + q + ": " + got + " vs exact " + exact);
    }
    assertEquals(a.max(), a.percentile(1.0));
  }

  @Test
  void emptyAndNegative() {
    LatencyHistogram h = new LatencyHistogram();
    assertEquals(0, h.percentile(0.999));
    h.record(-5);
    assertEquals(0, h.max());
    assertEquals(1, h.count());
  }
}
