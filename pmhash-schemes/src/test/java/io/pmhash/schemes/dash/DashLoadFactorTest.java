package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Load factor with seeded uniform keys (Dash §6, Fig. 11–12): the load factor a one-segment
 * table reaches before its first split, and the curve over a growing table. The paper reports
 * up to about 80 % with 2 stash buckets and 90 % with 4.
 */
class DashLoadFactorTest {
  private static double beforeFirstSplit(int stash, long seed) {
    try (DashEhTable t = DashEhTable.create(Pool.createVolatile(PoolOptions.defaults().withScheme("dash-eh", 1, stash).withInitialSize(4 << 20)), stash, 0)) {
      SplittableRandom r = new SplittableRandom(seed);
      for (long n = 0; ; n++) {
        long k = r.nextLong();
        double lf = (double) n / t.slots(1);
        t.put(k, n);
        if (t.splits.get() > 0) {
          return lf;
        }
      }
    }
  }

  @Test
  void segmentFillsBeforeItsFirstSplit() {
    for (int stash : new int[] {2, 4}) {
      double min = 1;
      double sum = 0;
      int runs = 20;
      for (int seed = 0; seed < runs; seed++) {
        double lf = beforeFirstSplit(stash, seed);
        min = Math.min(min, lf);
        sum += lf;
      }
      System.out.printf("DashLoadFactorTest: stash %d, load factor at the first split: mean %.3f, min %.3f (%d seeds)%n", stash, sum / runs, min, runs);
      assertTrue(sum / runs >= (stash == 2 ? 0.75 : 0.85), "mean load factor before the first split " + sum / runs);
    }
  }

  @Test
  void loadFactorCurveOverAGrowingTable() {
    for (int stash : new int[] {2, 4}) {
      try (DashEhTable t = DashEhTable.create(Pool.createVolatile(PoolOptions.defaults().withScheme("dash-eh", 1, stash)), stash, 0)) {
        SplittableRandom r = new SplittableRandom(11);
        StringBuilder curve = new StringBuilder();
        double max = 0;
        for (int n = 1; n <= 400_000; n++) {
          t.put(r.nextLong(), n);
          if (n % 25_000 == 0) {
            double lf = t.loadFactor();
            max = Math.max(max, lf);
            curve.append(String.format(" %dk:%.2f", n / 1000, lf));
          }
        }
        System.out.println("DashLoadFactorTest: stash " + stash + " curve" + curve);
        assertTrue(max >= (stash == 2 ? 0.7 : 0.8), "highest load factor on the curve " + max);
      }
    }
  }
}
