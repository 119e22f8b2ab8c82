package io.pmhash.schemes.contract;

/**
 * The seeds of the contract suites' random operation sequences: fixed, so that CI is reproducible,
 * unless {@code -Dpmhash.seed=N} asks for other sequences (a soak: the suites run again with new
 * seeds). With {@code N} set, each sequence's seed is {@code N ^ fallback}, so that sequences that
 * had different seeds still differ; run again with the same {@code N} to reproduce a failure.
 */
public final class Seeds {
  private Seeds() {}

  /**
   * @param who the sequence, for the printed line
   * @param fallback the fixed seed of this sequence
   * @return {@code fallback}, or {@code N ^ fallback} under {@code -Dpmhash.seed=N}
   */
  public static long seed(String who, long fallback) {
    Long n = Long.getLong("pmhash.seed");
    long seed = n == null ? fallback : n ^ fallback;
    System.out.println(who + " seed " + seed + (n == null ? "" : " (-Dpmhash.seed=" + n + ")"));
    return seed;
  }
}
