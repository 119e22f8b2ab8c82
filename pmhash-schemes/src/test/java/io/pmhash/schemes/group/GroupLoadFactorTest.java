package io.pmhash.schemes.group;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Space utilisation as the paper defines it (§4.4): the load factor when an insert first fails,
 * in a fixed-size table ({@code expand=0}), with seeded random keys (the RandomNum trace: random
 * integers). The paper reports about 82 % at group size 256 (Fig. 7) and a ratio that rises with
 * the group size, "over 80 %" from 256 on (Fig. 8b, group sizes 64..1024).
 *
 * <p>The asserted range is derived from those figures and from a model of the scheme: at load
 * factor a, a level-1 group receives about 2aG keys (Poisson), keeps G(1 - e^(-2a)) of them and
 * sends the rest to its level-2 group. The mean overflow reaches G only near a = 0.92; the first
 * failure comes when the most loaded of the N/G groups overflows, a few standard deviations
 * (about sqrt(2aG) keys) earlier, hence closer to the limit for larger groups and lower for more
 * groups. For G = 256 that predicts 0.79 with 2^12 groups and 0.77 with 2^14 groups (the paper's
 * 2^23 cells), which is what this code measures (0.773 at 2^22 cells per level, seeded), about five
 * points below the paper's 82 %; the paper does not say what table size its Fig. 7 used. The range
 * asserted at G = 256 is 0.76 .. 0.86: the model's value at the paper's size up to the paper's
 * figure plus its spread across traces.
 *
 * <p>N = 2^20 cells per level by default (a quarter of the paper's table, for the test's run time);
 * {@code -Dpmhash.group.lfCellBits=22} runs the paper's size.
 */
class GroupLoadFactorTest {
  static final long CELLS = 1L << Integer.getInteger("pmhash.group.lfCellBits", 20);

  /** Inserts random keys until one fails; returns the load factor just before it. */
  static double utilisation(int groupSize, long seed) {
    TableOptions o = TableOptions.scheme(GroupProvider.NAME)
        .withParam(GroupProvider.GROUP_SIZE, groupSize)
        .withParam(GroupProvider.EXPAND, 0)
        .withInitialCapacity(CELLS * 2 * 3 / 4);
    try (GroupTable t = (GroupTable) PmHash.createVolatile(o)) {
      assertEquals(CELLS, t.tableSize());
      SplittableRandom rnd = new SplittableRandom(seed);
      for (;;) {
        long key = rnd.nextLong();
        long before = t.size();
        try {
          t.put(key, ~key);
        } catch (GroupFullException e) {
          assertEquals(before, t.size(), "a failed insert changes nothing");
          assertTrue(!t.containsKey(key), "the failed key is absent");
          assertThrows(GroupFullException.class, () -> t.put(key, 1), "the same insert fails again");
          return t.loadFactor();
        }
      }
    }
  }

  @Test
  void utilisationIsAbout82PercentAtGroupSize256AndRisesWithGroupSize() {
    int[] sizes = {64, 128, 256, 512, 1024};
    double[] lf = new double[sizes.length];
    for (int i = 0; i < sizes.length; i++) {
      lf[i] = utilisation(sizes[i], 0x6A09E667F3BCC908L + i);
      System.out.printf("GroupLoadFactorTest: group size %4d, %d cells per level: space utilisation %.4f%n", sizes[i], CELLS, lf[i]);
    }
    double at256 = lf[2];
    assertTrue(at256 > 0.76 && at256 < 0.86, "utilisation at group size 256: " + at256 + ", the paper ~0.82");
    for (int i = 1; i < sizes.length; i++) {
      assertTrue(lf[i] > lf[i - 1], "utilisation rises with the group size: " + sizes[i - 1] + " -> " + sizes[i] + ": " + lf[i - 1] + " -> " + lf[i]);
    }
  }
}
