package io.pmhash.jmh.workload;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The Zipfian generator draws the distribution it claims: ranks in range, the same sequence for
 * the same seed, and empirical frequencies of the hot ranks within a few standard errors of
 * {@code 1 / ((r + 1)^theta * zeta(n))}.
 */
class ZipfianTest {
  private static final int DRAWS = 2_000_000;

  @Test
  void sameSeedSameSequenceOtherSeedOtherSequence() {
    assertArrayEquals(new Zipfian(1000, 0.99, 7).ranks(1000), new Zipfian(1000, 0.99, 7).ranks(1000));
    assertTrue(!java.util.Arrays.equals(new Zipfian(1000, 0.99, 7).ranks(1000), new Zipfian(1000, 0.99, 8).ranks(1000)));
  }

  @Test
  void frequenciesMatchTheDistribution() {
    for (double theta : new double[] {0.5, 0.99}) {
      int n = 10_000;
      Zipfian z = new Zipfian(n, theta, 42);
      long[] count = new long[n];
      for (int i = 0; i < DRAWS; i++) {
        long r = z.next();
        assertTrue(r >= 0 && r < n, "rank " + r + " out of 0.." + (n - 1));
        count[(int) r]++;
      }
      for (int r : new int[] {0, 1, 2, 3, 9, 99}) {
        double p = z.probability(r);
        double expected = p * DRAWS;
        double sigma = Math.sqrt(DRAWS * p * (1 - p));
        assertTrue(Math.abs(count[r] - expected) < 5 * sigma + 0.01 * expected,
            "theta " + theta + " rank " + r + ": drawn " + count[r] + " times, expected " + expected);
      }
    }
  }

  @Test
  void probabilitiesSumToOne() {
    Zipfian z = new Zipfian(5000, 0.99, 1);
    double sum = 0;
    for (int r = 0; r < 5000; r++) {
      sum += z.probability(r);
    }
    assertEquals(1.0, sum, 1e-9);
  }

  @Test
  void badParametersAreRefusedWithTheRange() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> new Zipfian(1, 0.99, 0)).getMessage().contains("at least 2"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> new Zipfian(10, 1.0, 0)).getMessage().contains("(0, 1)"));
  }
}
