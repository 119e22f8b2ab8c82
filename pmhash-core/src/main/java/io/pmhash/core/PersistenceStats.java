package io.pmhash.core;

/**
 * Counters of a pool's persistence seam since the pool was opened.
 *
 * @param linesFlushed cache lines (64 bytes) written back by {@link Persistence#flush}
 * @param drains drains issued ({@link Persistence#drain}, including those inside {@link
 *     Persistence#persist})
 */
public record PersistenceStats(long linesFlushed, long drains) {
  /**
   * The counts between an earlier snapshot and this one.
   *
   * @param earlier a snapshot taken before this one
   * @return this minus {@code earlier}
   */
  public PersistenceStats minus(PersistenceStats earlier) {
    return new PersistenceStats(linesFlushed - earlier.linesFlushed, drains - earlier.drains);
  }
}
