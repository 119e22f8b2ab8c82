package io.pmhash.core.crash;

/**
 * Which durable images the {@link CrashSimulator} materialises at a crash point. A word is
 * <em>pending</em> at a crash point when it may or may not have reached the media: its current
 * value, or the value it had when its line was last flushed, differs from its durable value.
 */
public enum ImageKind {
  /** Only what was flushed and drained: every pending word keeps its durable value. */
  DRAINED,
  /** Everything written: every pending word takes its current value (the cache was evicted). */
  ALL_PENDING,
  /**
   * One image per cache line holding pending words: that line's current words, every other
   * pending word durable. Catches a commit word that reaches the media before the data it
   * publishes when they lie in different lines.
   */
  EACH_LINE,
  /**
   * Seeded random subsets: each pending word independently takes one of its candidate values
   * (durable, flushed-but-undrained, current). Reproducible from the seed the image reports.
   */
  RANDOM
}
