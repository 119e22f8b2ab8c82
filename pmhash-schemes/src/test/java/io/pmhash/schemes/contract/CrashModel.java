package io.pmhash.schemes.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.crash.CrashPoint;
import io.pmhash.map.LongHashTable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The scheme-independent half of a crash test's oracle, for any {@link LongHashTable}: operations
 * that apply to a table and to a {@link HashMap} model alike, the model's state after each of
 * them, and the check of a recovered table against the crash point's states (no completed write
 * lost, no removed key back, the in-flight operation all or nothing, no key twice, {@code size()}
 * equal to a scan, {@code get} and the scan agreeing) and that it keeps working. Each scheme's
 * crash support adds its structural invariants.
 */
public final class CrashModel {
  private CrashModel() {}

  /** The operation kinds of a crash workload. */
  public enum Kind {
    /** {@link LongHashTable#put}. */
    PUT,
    /** {@link LongHashTable#remove(long)}. */
    REMOVE,
    /** {@link LongHashTable#putIfAbsent}. */
    PUT_IF_ABSENT,
    /** {@link LongHashTable#replace(long, long)}. */
    REPLACE,
    /**
     * {@link LongHashTable#get}: changes no record, but a scheme that recovers lazily may persist
     * on a read (a segment recovered on first touch, a split finished by the next thread there).
     */
    GET
  }

  /**
   * One operation of a crash workload.
   *
   * @param kind what it does
   * @param key its key
   * @param value its value (unused by {@link Kind#REMOVE} and {@link Kind#GET})
   */
  public record Op(Kind kind, long key, long value) {
    /**
     * @param k key
     * @param v value
     * @return a put
     */
    public static Op put(long k, long v) {
      return new Op(Kind.PUT, k, v);
    }

    /**
     * @param k key
     * @return a remove
     */
    public static Op remove(long k) {
      return new Op(Kind.REMOVE, k, 0);
    }

    /**
     * @param k key
     * @return a get
     */
    public static Op get(long k) {
      return new Op(Kind.GET, k, 0);
    }

    /** @param t the table to apply it to */
    public void apply(LongHashTable t) {
      switch (kind) {
        case PUT -> t.put(key, value);
        case REMOVE -> t.remove(key);
        case PUT_IF_ABSENT -> t.putIfAbsent(key, value);
        case REPLACE -> t.replace(key, value);
        case GET -> t.get(key, 0);
      }
    }

    /** @param m the model to apply it to */
    public void apply(Map<Long, Long> m) {
      switch (kind) {
        case PUT -> m.put(key, value);
        case REMOVE -> m.remove(key);
        case PUT_IF_ABSENT -> m.putIfAbsent(key, value);
        case REPLACE -> m.replace(key, value);
        case GET -> { }
      }
    }
  }

  /**
   * The model's states: index 0 after the setup, index i + 1 after work operation i.
   *
   * @param setup operations before the crash points
   * @param work the crashed operations
   * @return the states
   */
  public static List<Map<Long, Long>> states(List<Op> setup, List<Op> work) {
    Map<Long, Long> s = new HashMap<>();
    setup.forEach(o -> o.apply(s));
    List<Map<Long, Long>> states = new ArrayList<>();
    states.add(new HashMap<>(s));
    for (Op o : work) {
      o.apply(s);
      states.add(new HashMap<>(s));
    }
    return states;
  }

  /**
   * Checks a recovered table against the states a crash at {@code point} allows.
   *
   * @param t the table, recovered from the crash image
   * @param point the crash point
   * @param states from {@link #states}
   * @param work the crashed operations
   */
  public static void checkRecovered(LongHashTable t, CrashPoint point, List<Map<Long, Long>> states, List<Op> work) {
    String at = point.describe();
    int done = point.opsCompleted();
    Map<Long, Long> before = states.get(done);
    Map<Long, Long> after = point.inFlightOp().isPresent() ? states.get(done + 1) : before;
    Long inFlightKey = point.inFlightOp().isPresent() ? work.get((int) point.inFlightOp().getAsLong()).key() : null;
    Map<Long, Long> seen = new HashMap<>();
    t.forEach((k, v) -> {
      if (seen.put(k, v) != null) {
        throw new AssertionError(at + ": key " + k + " twice");
      }
    });
    assertEquals(seen.size(), t.size(), at + ": size equals a scan");
    Set<Long> keys = new HashSet<>(before.keySet());
    keys.addAll(after.keySet());
    keys.addAll(seen.keySet());
    for (long k : keys) {
      Long got = seen.get(k);
      Long viaGet = t.containsKey(k) ? t.get(k, 0) : null;
      assertEquals(got, viaGet, at + ": get and scan agree on " + k);
      if (inFlightKey != null && k == inFlightKey) {
        assertTrue(Objects.equals(got, before.get(k)) || Objects.equals(got, after.get(k)),
            at + ": in-flight key " + k + " is " + got + ", neither " + before.get(k) + " nor " + after.get(k));
      } else {
        assertEquals(before.get(k), got, at + ": key " + k);
      }
    }
  }

  /**
   * Puts, reads and removes three keys no workload uses.
   *
   * @param t a recovered table
   * @param at where, for messages
   */
  public static void checkStillWorks(LongHashTable t, String at) {
    for (long k = 1; k <= 3; k++) {
      long key = -k * 0x7F4A7C159E3779B9L;
      t.put(key, k);
      assertEquals(k, t.get(key, -1), at + ": the table works after recovery");
      t.remove(key);
    }
  }

  /**
   * @param i the index of a workload key
   * @return key {@code i} of a workload: spread over the key space
   */
  public static long key(int i) {
    return (i + 1) * 0x9E3779B97F4A7C15L;
  }

  /**
   * @param from first index
   * @param to end index (exclusive)
   * @return puts of {@code key(i)} with value {@code i}, for {@code i} in {@code [from, to)}
   */
  public static List<Op> inserts(int from, int to) {
    List<Op> ops = new ArrayList<>();
    for (int i = from; i < to; i++) {
      ops.add(Op.put(key(i), i));
    }
    return ops;
  }
}
