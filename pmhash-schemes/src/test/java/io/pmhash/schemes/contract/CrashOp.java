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
 * One operation of a crash-test workload, applied to a table and to a model map, and the check
 * every scheme's crash verifier makes after recovery: no completed write lost, no deleted key
 * back, the in-flight operation all or nothing, no key twice, get and a scan agree, and the
 * table keeps working.
 *
 * @param kind the operation
 * @param key its key
 * @param value its value (puts)
 */
public record CrashOp(Kind kind, long key, long value) {
  /** The operations. */
  public enum Kind { PUT, REMOVE, PUT_IF_ABSENT, REPLACE }

  /** @return a put */
  public static CrashOp put(long k, long v) {
    return new CrashOp(Kind.PUT, k, v);
  }

  /** @return a remove */
  public static CrashOp remove(long k) {
    return new CrashOp(Kind.REMOVE, k, 0);
  }

  /** Applies it to a table. */
  public void apply(LongHashTable t) {
    switch (kind) {
      case PUT -> t.put(key, value);
      case REMOVE -> t.remove(key);
      case PUT_IF_ABSENT -> t.putIfAbsent(key, value);
      case REPLACE -> t.replace(key, value);
    }
  }

  /** Applies it to the model. */
  public void apply(Map<Long, Long> m) {
    switch (kind) {
      case PUT -> m.put(key, value);
      case REMOVE -> m.remove(key);
      case PUT_IF_ABSENT -> m.putIfAbsent(key, value);
      case REPLACE -> m.replace(key, value);
    }
  }

  /** @return key {@code i} of a workload: spread over the key space */
  public static long key(int i) {
    return (i + 1) * 0x9E3779B97F4A7C15L;
  }

  /** @return puts of {@code key(i)} with value {@code i}, for {@code i} in {@code [from, to)} */
  public static List<CrashOp> inserts(int from, int to) {
    List<CrashOp> ops = new ArrayList<>();
    for (int i = from; i < to; i++) {
      ops.add(put(key(i), i));
    }
    return ops;
  }

  /** @return the model after the setup and after each operation of the work: {@code work.size() + 1} maps */
  public static List<Map<Long, Long>> states(List<CrashOp> setup, List<CrashOp> work) {
    Map<Long, Long> s = new HashMap<>();
    setup.forEach(o -> o.apply(s));
    List<Map<Long, Long>> states = new ArrayList<>();
    states.add(new HashMap<>(s));
    for (CrashOp o : work) {
      o.apply(s);
      states.add(new HashMap<>(s));
    }
    return states;
  }

  /**
   * Checks a recovered table against the model at a crash point (see the class comment); the
   * caller checks its scheme's invariants between this and {@link #checkWorks}.
   */
  public static void checkContents(LongHashTable t, CrashPoint point, List<Map<Long, Long>> states, List<CrashOp> work) {
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

  /** Checks that a recovered table takes, returns and removes new keys. */
  public static void checkWorks(LongHashTable t, String at) {
    for (long k = 1; k <= 3; k++) {
      long key = -k * 0x7F4A7C159E3779B9L;
      t.put(key, k);
      assertEquals(k, t.get(key, -1), at + ": the table works after recovery");
      t.remove(key);
    }
  }
}
