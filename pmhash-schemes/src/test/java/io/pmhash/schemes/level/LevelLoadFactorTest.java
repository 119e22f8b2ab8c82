package io.pmhash.schemes.level;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import org.junit.jupiter.api.Test;

/**
 * The load factor a resize starts at, as Dash Fig. 12 plots it (level hashing: about 90 %):
 * inserts into a growing table, recording the load factor just before each resize from the
 * fourth on.
 */
class LevelLoadFactorTest {
  @Test
  void resizesStartAtAHighLoadFactor() {
    try (LevelTable t = (LevelTable) PmHash.createVolatile(TableOptions.scheme(LevelProvider.NAME))) {
      double min = 1;
      double max = 0;
      double last = 0;
      long resizes = 0;
      for (long i = 0; i < 3_000_000; i++) {
        t.put(i * 0x9E3779B97F4A7C15L, i);
        if (t.resizes.get() != resizes) {
          resizes = t.resizes.get();
          if (resizes > 3) {
            min = Math.min(min, last);
            max = Math.max(max, last);
          }
        }
        last = t.loadFactor();
      }
      System.out.printf("LevelLoadFactorTest: load factor at resize %.3f .. %.3f over %d resizes%n", min, max, resizes);
      assertTrue(min > 0.80, "load factor at resize " + min);
    }
  }
}
