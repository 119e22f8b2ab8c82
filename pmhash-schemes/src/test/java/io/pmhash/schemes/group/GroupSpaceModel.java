package io.pmhash.schemes.group;

/**
 * What the paper's insertion rule predicts for space utilisation — the load factor when an insert
 * first fails in a fixed-size table (§4.4) — as a distribution, computed exactly up to one
 * approximation (independent groups), with no code of the table. {@link GroupLoadFactorTest}
 * compares the table with it.
 *
 * <p><b>One group.</b> The rule (Algorithm 1): a key goes to its home cell if free, else to any
 * free cell of its level-2 group; it fails when both are taken. Feed a group X keys with uniform
 * homes among its G level-1 cells: the number O of occupied level-1 cells is the occupancy of G
 * bins by X balls (a key finds its home free with probability (G - O)/G), the level-2 group holds
 * X - O keys, and the group has not failed after X keys if and only if {@code X - O <= G} (its
 * level-2 count only grows). {@code s(X) = P(X - O_X <= G)} comes from a dynamic program over O:
 * 1 for X ≤ G, 0 for X &gt; 2G.
 *
 * <p><b>The table.</b> At load factor a the table holds 2aN keys; a group receives each with
 * probability G/N, about Poisson with mean λ = 2aG. A group has not failed with probability
 * {@code S(a) = Σ_X Poisson(X; λ) s(X)}, and the table, whose N/G groups are nearly independent
 * (the Poisson approximation of the multinomial), with probability {@code P(A > a) = S(a)^(N/G)}.
 * The mean, standard deviation and quantiles of the first-failure load factor A are taken from
 * this distribution on a grid of step 1/4000.
 *
 * <p>What it says (mean, [0.1 %, 99.9 %] quantiles): at N = 2^20 cells per level, 0.620, 0.707,
 * 0.772, 0.819, 0.852 for G = 64, 128, 256, 512, 1024; at the paper's N = 2^22 (its 2^23 cells)
 * and G = 256, 0.759 [0.709, 0.784]. The paper's "about 82 %" at G = 256 (Fig. 7) is above the
 * 99.9 % quantile at its table size: the rule reaches it on average only with about 64 groups
 * (N = 2^14 cells per level: 0.824) or with G = 512 at N = 2^20 (0.819). The larger the table, the
 * more groups, the earlier the most loaded one overflows.
 */
final class GroupSpaceModel {
  private static final int STEPS = 4000;

  /** Cells per group and per level. */
  final int groupSize;
  /** N, cells per level. */
  final long cells;
  /** {@code cdf[i] = P(A <= i / STEPS)}. */
  private final double[] cdf = new double[STEPS + 1];
  /** The mean of A. */
  final double mean;
  /** The standard deviation of A. */
  final double sd;

  private GroupSpaceModel(long cells, int groupSize) {
    this.cells = cells;
    this.groupSize = groupSize;
    double[] s = groupSurvival(groupSize);
    double groups = (double) (cells / groupSize);
    double[] logFact = new double[s.length];
    for (int x = 1; x < s.length; x++) {
      logFact[x] = logFact[x - 1] + Math.log(x);
    }
    for (int i = 0; i <= STEPS; i++) {
      double lambda = 2.0 * groupSize * i / STEPS;
      double alive = 0;
      if (lambda == 0) {
        alive = 1;
      } else {
        double logLambda = Math.log(lambda);
        for (int x = 0; x < s.length; x++) {
          if (s[x] != 0) {
            alive += Math.exp(x * logLambda - lambda - logFact[x]) * s[x];
          }
        }
      }
      cdf[i] = 1 - Math.pow(Math.min(1, alive), groups);
    }
    double m = 0;
    double m2 = 0;
    for (int i = 1; i <= STEPS; i++) {
      double mid = (i - 0.5) / STEPS;
      double p = cdf[i] - cdf[i - 1];
      m += mid * p;
      m2 += mid * mid * p;
    }
    this.mean = m;
    this.sd = Math.sqrt(Math.max(0, m2 - m * m));
  }

  /**
   * The model for one table geometry.
   *
   * @param cells N, cells per level
   * @param groupSize G
   * @return the distribution of the load factor at the first failed insert
   */
  static GroupSpaceModel of(long cells, int groupSize) {
    return new GroupSpaceModel(cells, groupSize);
  }

  /**
   * {@code s[X]}: the probability that a group has room for all of X keys, X = 0 .. 2G (none
   * beyond: X - O ≥ X - G &gt; G).
   */
  static double[] groupSurvival(int g) {
    double[] s = new double[2 * g + 1];
    double[] p = new double[g + 1]; // p[o] = P(O = o) after x keys
    p[0] = 1;
    s[0] = 1;
    for (int x = 1; x <= 2 * g; x++) {
      double[] q = new double[g + 1];
      for (int o = 0; o <= g; o++) {
        if (p[o] != 0) {
          q[o] += p[o] * o / g;
          if (o < g) {
            q[o + 1] += p[o] * (g - o) / g;
          }
        }
      }
      p = q;
      double alive = 0;
      for (int o = Math.max(0, x - g); o <= g; o++) {
        alive += p[o];
      }
      s[x] = Math.min(1, alive);
    }
    return s;
  }

  /**
   * A quantile of A.
   *
   * @param q the probability, 0 &lt; q &lt; 1
   * @return the smallest grid load factor a with {@code P(A <= a) >= q}
   */
  double quantile(double q) {
    for (int i = 0; i <= STEPS; i++) {
      if (cdf[i] >= q) {
        return (double) i / STEPS;
      }
    }
    return 1;
  }

  @Override
  public String toString() {
    return String.format("model N %d, G %d: mean %.4f, sd %.4f, [0.1%% %.4f, 99.9%% %.4f]", cells, groupSize, mean, sd, quantile(0.001),
        quantile(0.999));
  }
}
