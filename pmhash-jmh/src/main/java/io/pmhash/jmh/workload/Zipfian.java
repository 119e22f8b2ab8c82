package io.pmhash.jmh.workload;

import java.util.SplittableRandom;

/**
 * A seeded Zipfian generator of ranks {@code 0..n-1}: rank {@code r} is drawn with probability
 * proportional to {@code 1 / (r + 1)^theta}, exactly. The method is rejection-inversion
 * (Hörmann and Derflinger, "Rejection-inversion to generate variates from monotone discrete
 * distributions", ACM TOMACS 1996): invert the integral of the continuous density {@code x^-theta}
 * and accept the nearest integer unless it falls in the small region where the integral and the
 * sum differ. Construction and each draw are O(1); the default skew is YCSB's {@link
 * #DEFAULT_THETA} = 0.99. (YCSB's own closed-form method, from Gray et al. 1994, is an
 * approximation: its ranks 2, 3, ... are off by several percent, which {@code ZipfianTest}
 * would catch.)
 *
 * <p>Benchmarks draw ranks in setup into precomputed arrays and never in a measured region. Rank
 * {@code r} maps to key {@link Keys#key(long, long) Keys.key(seed, r)}, so the hot ranks are
 * scattered over the table rather than clustered in one segment.
 */
public final class Zipfian {
  /** YCSB's default skew. */
  public static final double DEFAULT_THETA = 0.99;

  private final long n;
  private final double theta;
  private final double hLow;
  private final double hHigh;
  private final double squeeze;
  private final SplittableRandom random;

  /**
   * A generator over {@code n} ranks.
   *
   * @param n the number of ranks, at least 2
   * @param theta the skew, in {@code (0, 1)}
   * @param seed the seed: equal seeds draw equal sequences
   * @throws IllegalArgumentException if {@code n} or {@code theta} is out of range
   */
  public Zipfian(long n, double theta, long seed) {
    if (n < 2) {
      throw new IllegalArgumentException("a Zipfian distribution needs at least 2 ranks, got " + n);
    }
    if (!(theta > 0 && theta < 1)) {
      throw new IllegalArgumentException("Zipfian skew theta must be in (0, 1), got " + theta + "; YCSB uses 0.99");
    }
    this.n = n;
    this.theta = theta;
    // Values k = 1..n (rank k - 1). The continuous envelope covers [0.5, n + 0.5]; k = 1 gets
    // the mass of [0.5, 1.5] shifted so that it is exactly 1 = h(1).
    this.hLow = integral(1.5) - 1;
    this.hHigh = integral(n + 0.5);
    this.squeeze = 2 - inverse(integral(2.5) - density(2));
    this.random = new SplittableRandom(seed);
  }

  /** The density {@code x^-theta}. */
  private double density(double x) {
    return Math.exp(-theta * Math.log(x));
  }

  /** {@code (x^(1-theta) - 1) / (1-theta)}: the integral of the density from 1 to x. */
  private double integral(double x) {
    double log = Math.log(x);
    return expm1Over((1 - theta) * log) * log;
  }

  /** The inverse of {@link #integral}. */
  private double inverse(double y) {
    double t = y * (1 - theta);
    if (t < -1) {
      t = -1; // rounding at the lower end: x = 0
    }
    return Math.exp(log1pOver(t) * y);
  }

  /** {@code (e^x - 1) / x}, 1 at 0. */
  private static double expm1Over(double x) {
    return Math.abs(x) > 1e-8 ? Math.expm1(x) / x : 1 + x / 2;
  }

  /** {@code ln(1 + x) / x}, 1 at 0. */
  private static double log1pOver(double x) {
    return Math.abs(x) > 1e-8 ? Math.log1p(x) / x : 1 - x / 2;
  }

  /**
   * The probability of rank {@code r} under this distribution. Sums {@code n} powers: for tests
   * and reports, not for a hot path.
   *
   * @param r a rank in {@code 0..n-1}
   * @return {@code 1 / ((r + 1)^theta * zeta(n))}, where {@code zeta(n) = sum_{i=1..n} i^-theta}
   */
  public double probability(long r) {
    double zeta = 0;
    for (long i = 1; i <= n; i++) {
      zeta += density(i);
    }
    return density(r + 1) / zeta;
  }

  /** @return the next rank, in {@code 0..n-1} */
  public long next() {
    while (true) {
      double u = hHigh + random.nextDouble() * (hLow - hHigh);
      double x = inverse(u);
      long k = Math.max(1, Math.min(n, (long) (x + 0.5)));
      // Accept if k is inside the squeeze, or u lies under the envelope of k's own bar.
      if (k - x <= squeeze || u >= integral(k + 0.5) - density(k)) {
        return k - 1;
      }
    }
  }

  /**
   * Fills an array with ranks: the precomputed probe sequence of a benchmark.
   *
   * @param count how many
   * @return {@code count} ranks
   */
  public long[] ranks(int count) {
    long[] out = new long[count];
    for (int i = 0; i < count; i++) {
      out[i] = next();
    }
    return out;
  }
}
