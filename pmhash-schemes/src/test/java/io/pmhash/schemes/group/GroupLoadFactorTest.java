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
 * <p>The asserted range is derived from those figures and from a model of the scheme. A level-1
 * group of G cells that receives X keys keeps about G(1 - e^(-X/G)) of them and sends the rest to
 * its level-2 group, which overflows once X exceeds y G with y + e^(-y) = 2, y = 1.84 (471 keys
 * for G = 256). X is Poisson with mean 2aG at load factor a, and the first insert fails when the
 * most loaded of the N/G groups crosses that threshold: about 3.5 to 3.9 standard deviations above
 * the mean for 2^12 to 2^14 groups, which gives a = 0.78 (G = 256), 0.86 (G = 1024) and 0.65
 * (G = 64); the spread of the level-1 occupancy, left out of the model, lowers these a little
 * (most for small G). Measured with the seeds below: 0.615, 0.696, 0.765, 0.815, 0.861 for G = 64
 * .. 1024 at 2^20 cells per level, and 0.572, 0.688, 0.773, 0.801, 0.836 at the paper's 2^22 (its
 * 2^23 cells). The paper's 82 % at G = 256 is four to five points above the model and these
 * figures; it does not say what table size Fig. 7 used. The range asserted at G = 256, 0.74 ..
 * 0.86, spans the model's value less a margin for what it leaves out, up to the paper's figure
 * plus its spread across traces: a table whose level-2 groups were not shared (about 0.3) or were
 * one global pool (above 0.9) fails it.
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
    assertTrue(at256 > 0.74 && at256 < 0.86, "utilisation at group size 256: " + at256 + ", the paper ~0.82, the model ~0.78");
    for (int i = 1; i < sizes.length; i++) {
      assertTrue(lf[i] > lf[i - 1], "utilisation rises with the group size: " + sizes[i - 1] + " -> " + sizes[i] + ": " + lf[i - 1] + " -> " + lf[i]);
    }
  }
}
