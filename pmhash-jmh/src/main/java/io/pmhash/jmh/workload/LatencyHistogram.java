package io.pmhash.jmh.workload;

/**
 * A cheap histogram of operation latencies in nanoseconds for {@code --latency}: log-linear
 * buckets (16 per power of two, so a reported percentile is at most 1/16 above the true value;
 * exact below 16 ns) and the exact maximum. One per worker thread, recorded without
 * synchronisation, merged with {@link #add} after the phase. 8 KiB, allocated before the phase.
 */
final class LatencyHistogram {
  private static final int SUB_BITS = 4;
  private static final int SUB = 1 << SUB_BITS;

  private final long[] counts = new long[64 * SUB];
  private long total;
  private long max;

  /** @param nanos one operation's latency; negative values (a clock step) count as 0 */
  void record(long nanos) {
    long v = Math.max(0, nanos);
    counts[index(v)]++;
    total++;
    if (v > max) {
      max = v;
    }
  }

  static int index(long v) {
    if (v < SUB) {
      return (int) v;
    }
    int mag = 63 - Long.numberOfLeadingZeros(v);
    int sub = (int) (v >>> (mag - SUB_BITS)) & (SUB - 1);
    return (mag - SUB_BITS + 1) * SUB + sub;
  }

  /** @return the largest value that {@link #index} maps to {@code index} */
  static long upperBound(int index) {
    if (index < SUB) {
      return index;
    }
    int mag = index / SUB + SUB_BITS - 1;
    long width = 1L << (mag - SUB_BITS);
    long lo = (1L << mag) | ((long) (index % SUB) * width);
    return lo + width - 1;
  }

  /** Adds another thread's histogram to this one. */
  void add(LatencyHistogram o) {
    for (int i = 0; i < counts.length; i++) {
      counts[i] += o.counts[i];
    }
    total += o.total;
    max = Math.max(max, o.max);
  }

  /** @return operations recorded */
  long count() {
    return total;
  }

  /** @return the largest latency recorded, exact */
  long max() {
    return max;
  }

  /**
   * @param q a quantile in (0, 1], e.g. 0.999
   * @return the smallest bucket bound at or above which fewer than {@code (1 - q)} of the
   *     operations lie (never above the maximum); 0 when empty
   */
  long percentile(double q) {
    if (total == 0) {
      return 0;
    }
    long rank = (long) Math.ceil(q * total);
    long seen = 0;
    for (int i = 0; i < counts.length; i++) {
      seen += counts[i];
      if (seen >= rank) {
        return Math.min(upperBound(i), max);
      }
    }
    return max;
  }
}
