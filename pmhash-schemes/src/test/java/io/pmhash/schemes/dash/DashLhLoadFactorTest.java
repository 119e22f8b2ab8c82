package io.pmhash.schemes.dash;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Load factor of Dash-LH with seeded uniform keys (Dash §6, Fig. 11), §6.2's parameters (first
 * array 64, stride 8) and 2 or 4 stash buckets: the curve over a growing table (records over the
 * slots of every segment and chained bucket). Linear hashing splits in a fixed order, not the
 * fullest segment: the curve oscillates (measured: about 0.52 to 0.85 with 2 stash buckets), low
 * after a burst of splits when many segments overflowed at once, high before it. The bounds
 * below are that measurement with a margin, not the paper's figures.
 */
class DashLhLoadFactorTest {
  @Test
  void loadFactorCurveOverAGrowingTable() {
    for (int stash : new int[] {2, 4}) {
      try (DashLhTable t = DashLhTable.create(Pool.createVolatile(PoolOptions.defaults().withScheme("dash-lh", DashLhLayout.LAYOUT_VERSION, stash, 64, 8)), stash, 64, 8)) {
        SplittableRandom r = new SplittableRandom(11);
        StringBuilder curve = new StringBuilder();
        double min = 1;
        double max = 0;
        for (int n = 1; n <= 400_000; n++) {
          t.put(r.nextLong(), n);
          if (n % 25_000 == 0) {
            double lf = t.loadFactor();
            max = Math.max(max, lf);
            if (n >= 50_000) {
              min = Math.min(min, lf);
            }
            curve.append(String.format(" %dk:%.2f", n / 1000, lf));
          }
        }
        System.out.println("DashLhLoadFactorTest: stash " + stash + " curve" + curve + " " + t.stats().details());
        assertTrue(max >= (stash == 2 ? 0.8 : 0.85), "highest load factor on the curve " + max);
        assertTrue(min >= 0.45, "lowest load factor on the curve after 50k records " + min);
      }
    }
  }
}
