package io.pmhash.schemes.group;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Space utilisation as the paper defines it (§4.4): the load factor when an insert first fails, in
 * a fixed-size table ({@code expand=0}) filled with seeded random keys (the RandomNum trace: random
 * integers), for group sizes 64 .. 1024 (Fig. 8b).
 *
 * <p>The measured load factors are compared with {@link GroupSpaceModel}, the distribution that
 * the paper's insertion rule implies for the same table size and group size, computed without any
 * code of the table: for each group size the mean of {@link #SEEDS} fills must lie within three
 * standard errors of the model's mean (plus 0.005 for the model's approximations), and the
 * measured means must rise with the group size, as Fig. 8b shows.
 *
 * <p><b>Is the paper's 82 % reachable?</b> Not by its rule at its table size. The paper reports
 * "about 82 %" at group size 256 (Fig. 7) on 2^23 cells (N = 2^22 per level). The model gives a
 * mean of 0.759 there, and 82 % lies above its 99.9 % quantile (0.784): the first insert fails
 * when the most loaded of the N/G groups overflows its level-2 group, and with 16 Ki groups that
 * happens well before the average group is full (a group overflows on average only at load 0.92).
 * The rule reaches 82 % at G = 256 only with about 64 groups (N = 2^14), or with G = 512 at
 * N = 2^20. Measured at N = 2^20 (previous run, busy machine): 0.615, 0.696, 0.765, 0.815, 0.861
 * for G = 64 .. 1024; the model: 0.620, 0.707, 0.772, 0.819, 0.852. {@link
 * #thePapersFigureIsBeyondItsRuleAtItsTableSize} pins the model's side of this statement.
 *
 * <p>N = 2^20 cells per level by default (a quarter of the paper's table, for the test's run time);
 * {@code -Dpmhash.group.lfCellBits=22} runs the paper's size, {@code -Dpmhash.group.lfSeeds} sets
 * the fills per group size.
 */
class GroupLoadFactorTest {
  static final long CELLS = 1L << Integer.getInteger("pmhash.group.lfCellBits", 20);
  static final int SEEDS = Integer.getInteger("pmhash.group.lfSeeds", 3);

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
  void utilisationMatchesThePaperRulesModelAndRisesWithGroupSize() {
    int[] sizes = {64, 128, 256, 512, 1024};
    double[] means = new double[sizes.length];
    for (int i = 0; i < sizes.length; i++) {
      GroupSpaceModel model = GroupSpaceModel.of(CELLS, sizes[i]);
      double sum = 0;
      StringBuilder each = new StringBuilder();
      for (int s = 0; s < SEEDS; s++) {
        double lf = utilisation(sizes[i], 0x6A09E667F3BCC908L + 31L * i + s);
        each.append(String.format(" %.4f", lf));
        sum += lf;
      }
      means[i] = sum / SEEDS;
      double bound = 3 * model.sd / Math.sqrt(SEEDS) + 0.005;
      System.out.printf("GroupLoadFactorTest: G %4d, N %d: space utilisation%s, mean %.4f; %s; bound +-%.4f%n", sizes[i], CELLS, each,
          means[i], model, bound);
      assertEquals(model.mean, means[i], bound, "mean utilisation at group size " + sizes[i] + " against " + model);
    }
    for (int i = 1; i < sizes.length; i++) {
      assertTrue(means[i] > means[i - 1],
          "utilisation rises with the group size: " + sizes[i - 1] + " -> " + sizes[i] + ": " + means[i - 1] + " -> " + means[i]);
    }
  }

  /** The model's side of the statement in the class comment (no table involved). */
  @Test
  void thePapersFigureIsBeyondItsRuleAtItsTableSize() {
    GroupSpaceModel paper = GroupSpaceModel.of(1L << 22, 256);
    System.out.println("GroupLoadFactorTest: the paper's table: " + paper);
    assertEquals(0.76, paper.mean, 0.01, paper.toString());
    assertTrue(paper.quantile(0.999) < 0.82, paper.toString());
    GroupSpaceModel small = GroupSpaceModel.of(1L << 14, 256);
    assertTrue(small.mean > 0.815, small.toString());
    double previous = 0;
    for (int g = 64; g <= 1024; g *= 2) {
      GroupSpaceModel m = GroupSpaceModel.of(1L << 22, g);
      assertTrue(m.mean > previous, m.toString());
      previous = m.mean;
    }
  }
}
