package io.pmhash.stress;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Silences the pool's INFO line ("pool created") in the jcstress forks, where every trial
 * creates a pool: thousands of log lines would slow the trials down and bury jcstress's output.
 * Warnings still show.
 */
public final class QuietPools {
  private static final Logger POOL = Logger.getLogger("io.pmhash.pool");

  static {
    POOL.setLevel(Level.WARNING);
  }

  private QuietPools() {}

  /** Makes sure the level is set (the class initializer does it); call before creating pools. */
  public static void install() {
    POOL.getLevel(); // the class is initialized by now
  }
}
