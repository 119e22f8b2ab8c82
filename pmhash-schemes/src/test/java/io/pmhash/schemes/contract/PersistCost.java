package io.pmhash.schemes.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pmhash.core.PersistenceStats;
import io.pmhash.map.LongHashTable;

/** The assertion of every persist-count test: drains and lines flushed since a snapshot. */
public final class PersistCost {
  private PersistCost() {}

  /**
   * @param t a table
   * @return its pool's persistence counters now
   */
  public static PersistenceStats stats(LongHashTable t) {
    return t.pool().persistence().stats();
  }

  /**
   * Asserts what the table's pool persisted since {@code before}.
   *
   * @param t the table
   * @param before counters taken before the operation
   * @param drains drains expected
   * @param lines cache lines flushed expected
   * @param what the operation, for messages
   */
  public static void assertCost(LongHashTable t, PersistenceStats before, long drains, long lines, String what) {
    PersistenceStats d = stats(t).minus(before);
    assertEquals(drains, d.drains(), what + ": drains");
    assertEquals(lines, d.linesFlushed(), what + ": lines flushed");
  }
}
