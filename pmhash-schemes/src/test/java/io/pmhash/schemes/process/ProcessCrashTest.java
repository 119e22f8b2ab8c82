package io.pmhash.schemes.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pmhash.core.Durability;
import io.pmhash.core.crash.Evidence;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kill -9: a child JVM ({@link CrashChild}) writes to a table, journaling every operation
 * before and after it; the parent kills it with SIGKILL after a random number of acknowledged
 * operations (no clock: the child reports its progress), reopens the pool, and checks it
 * against the journal: every acknowledged write present, no removed key back, the one
 * operation in flight applied all or nothing, no duplicate keys, size equal to a scan. Then the
 * next round restarts the child on the same pool. {@code -Dpmhash.kills=N} sets the rounds
 * per scheme and mode (default 6: the CI count; the long mode runs hundreds).
 *
 * <p>The second test stops the child at named points instead: at the n-th drain inside a
 * structural change (a split, merge, doubling, halving or resize; {@link
 * HaltInStructuralChange}), with {@link Runtime#halt}, which leaves the pool file exactly as
 * SIGKILL at that instruction would. It prints which structural methods it stopped in.
 */
class ProcessCrashTest {
  static final int KILLS = Integer.getInteger("pmhash.kills", 6);
  static final int KEYS = 20_000;

  @TempDir Path dir;

  /**
   * The pool backend the child creates its table with: null for the default (FFM); {@link
   * LlplProcessCrashTest} runs every case on the llpl backend.
   *
   * @return the backend name or null
   */
  String backend() {
    return null;
  }

  /**
   * The structural drains a halt is chosen among (1 to this), counted over a child's structural
   * changes: enough that a few changes reach it before the pool is full.
   *
   * @param scheme the scheme
   * @return 6 here
   */
  int maxStructuralHalt(String scheme) {
    return 6;
  }

  static Stream<Arguments> cases() {
    List<Arguments> all = new ArrayList<>();
    for (String scheme : PmHash.schemes().keySet()) {
      all.add(Arguments.of(scheme, Durability.PROCESS));
      all.add(Arguments.of(scheme, Durability.PMEM_EMULATED));
    }
    return all.stream();
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("cases")
  void killedWritersLoseNoAcknowledgedWrite(String scheme, Durability mode) throws Exception {
    Path pool = dir.resolve(scheme + ".pool");
    Path journal = dir.resolve(scheme + ".journal");
    SplittableRandom rnd = new SplittableRandom(0xC0DE + scheme.hashCode() + mode.ordinal());
    Map<Long, Long> model = new HashMap<>();
    long nextOp = 0;
    for (int round = 0; round < KILLS; round++) {
      long ackTarget = nextOp + 64L * (1 + rnd.nextInt(40));
      Process child = start(pool, scheme, mode, journal, rnd.nextLong(), nextOp);
      try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = out.readLine()) != null) {
          if (line.startsWith("acked ") && Long.parseLong(line.substring(6)) >= ackTarget) {
            break;
          }
        }
        if (line == null) {
          fail("child exited before it was killed: " + new String(child.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
        }
        child.destroyForcibly(); // SIGKILL
        child.waitFor();
      }
      Journal j = Journal.read(journal);
      String where = scheme + " " + mode + " round " + round + " (killed after op " + j.lastAcked + ")";
      model = verify(pool, mode, j, model, where);
      // The child continues the journal after the last op the table shows.
      nextOp = j.lastOp + 1;
      j.rewriteWithout(journal);
    }
    assertTrue(model.size() > 100, "the rounds wrote enough to check: " + model.size() + " keys");
    Evidence.record("kill -9", scheme, mode == Durability.PROCESS ? "killsProcess" : "killsPmemEmulated", KILLS,
        "opsAcknowledged", nextOp);
  }


  /**
   * Reopens the pool and checks it against the journal: every acknowledged operation applied, the
   * one in flight applied all or nothing, no key twice, size equal to a scan.
   *
   * @return the model including the in-flight operation if the table shows it
   */
  private static Map<Long, Long> verify(Path pool, Durability mode, Journal j, Map<Long, Long> model, String where) throws Exception {
    j.applyAcked(model);
    try (LongHashTable t = PmHash.open(pool, TableOptions.any().withDurability(mode))) {
      assertFalse(t.pool().lastShutdownClean(), where + ": the crash left the pool open");
      Map<Long, Long> seen = new HashMap<>();
      t.forEach((k, v) -> {
        if (seen.put(k, v) != null) {
          fail(where + ": key " + k + " appears twice");
        }
      });
      assertEquals(seen.size(), t.size(), where + ": size equals a scan");
      if (j.inFlight != null) {
        // all or nothing: the table shows the state before the op or after it
        Map<Long, Long> after = new HashMap<>(model);
        j.inFlight.apply(after);
        if (seen.equals(after)) {
          return after;
        }
        assertEquals(model, seen, where + ": neither before nor after the op in flight " + j.inFlight);
      } else {
        assertEquals(model, seen, where);
      }
    }
    return model;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("schemes")
  void haltedInsideStructuralChangesLosesNothing(String scheme) throws Exception {
    haltRounds(scheme, 0, "", maxStructuralHalt(scheme)); // a resize of level hashing issues only a few drains
  }

  /**
   * Dash-LH's contraction halted at each of its drains: the child grows a small table (first
   * array 1, stride 1) with 3,000 fresh keys and deletes them again, wave after wave, and halts
   * at the n-th drain inside {@code DashLhMerge} (the merge, the word going back, the frees).
   */
  @org.junit.jupiter.api.Test
  void haltedInsideDashLhMergesLosesNothing() throws Exception {
    haltRounds("dash-lh:firstArray:1:stride:1", 3_000, "DashLhMerge.", 12); // 7 drains in mergeLocked, then the retreat's and an array's
  }

  private void haltRounds(String scheme, int waveKeys, String expectedFrame, int drains) throws Exception {
    Path pool = dir.resolve(scheme + ".pool");
    Path journal = dir.resolve(scheme + ".journal");
    SplittableRandom rnd = new SplittableRandom(0x5A17 + scheme.hashCode());
    Map<Long, Long> model = new HashMap<>();
    java.util.Set<String> points = new java.util.TreeSet<>();
    long nextOp = 0;
    for (int round = 0; round < KILLS; round++) {
      long haltAt = 1 + rnd.nextInt(drains);
      Process child = start(pool, scheme, Durability.PROCESS, journal, rnd.nextLong(), nextOp, haltAt, waveKeys);
      String halted = null;
      try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = out.readLine()) != null) {
          if (line.startsWith("halting at ")) {
            halted = line;
          } else if (line.startsWith("acked ") && Long.parseLong(line.substring(6)) > nextOp + 2_000_000) {
            child.destroyForcibly();
            fail(scheme + ": no structural change reached drain " + haltAt + " within 2,000,000 inserts");
          }
        }
      }
      int exit = child.waitFor();
      assertEquals(137, exit, scheme + " round " + round + ": the child must stop by halting: " + new String(child.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
      points.add(halted.replaceAll(".* in ", ""));
      assertTrue(halted.contains(" in " + expectedFrame), scheme + " round " + round + ": halted in " + expectedFrame + ": " + halted);
      Journal j = Journal.read(journal);
      model = verify(pool, Durability.PROCESS, j, model, scheme + " round " + round + " (" + halted + ")");
      nextOp = j.lastOp + 1;
      j.rewriteWithout(journal);
    }
    System.out.println(scheme + ": halted inside " + points);
    assertTrue(model.size() > 100, "the rounds wrote enough to check: " + model.size() + " keys");
    Evidence.record("kill -9", scheme, "haltsInStructuralChanges", KILLS, "distinctHaltPoints", points.size());
  }

  static Stream<String> schemes() {
    return PmHash.schemes().keySet().stream();
  }

  private Process start(Path pool, String scheme, Durability mode, Path journal, long seed, long firstOp) throws Exception {
    return start(pool, scheme, mode, journal, seed, firstOp, 0, 0);
  }

  private Process start(Path pool, String scheme, Durability mode, Path journal, long seed, long firstOp, long haltAt, int waveKeys) throws Exception {
    String java = ProcessHandle.current().info().command().orElseThrow();
    String modulePath = System.getProperty("jdk.module.path", "");
    String classPath = System.getProperty("java.class.path", "");
    String testClasses = Path.of(CrashChild.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    String cp = Stream.of(testClasses, modulePath, classPath)
        .filter(s -> !s.isEmpty()).collect(Collectors.joining(File.pathSeparator));
    // java.io.tmpdir: llpl copies its native library there at every start and deletes it only at
    // a normal exit; a killed child would leave one behind in the machine's /tmp (docs/llpl.md)
    return new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xss4m",
        "-Djava.io.tmpdir=" + pool.toAbsolutePath().getParent(), "-Dpmhash.backend=" + (backend() == null ? "" : backend()), "-cp", cp,
        CrashChild.class.getName(), pool.toString(), scheme, mode.name(), journal.toString(),
        Long.toString(seed), Integer.toString(KEYS), Long.toString(firstOp), Long.toString(haltAt), Integer.toString(waveKeys)).start();
  }

  /** One journaled operation. */
  record Op(long op, boolean put, long key, long value) {
    void apply(Map<Long, Long> m) {
      if (put) {
        m.put(key, value);
      } else {
        m.remove(key);
      }
    }
  }

  /** The journal of one child run: acknowledged ops, and the op in flight at the kill. */
  static final class Journal {
    final List<Op> acked = new ArrayList<>();
    Op inFlight;
    long lastAcked = -1;
    long lastOp = -1;

    static Journal read(Path file) throws Exception {
      Journal j = new Journal();
      try (DataInputStream in = new DataInputStream(Files.newInputStream(file))) {
        Op pending = null;
        while (true) {
          int kind;
          Op op;
          try {
            kind = in.readByte();
            op = new Op(in.readLong(), in.readByte() == 1, in.readLong(), in.readLong());
          } catch (EOFException torn) {
            break; // a record cut by the kill: its op never started or never was acknowledged
          }
          if (kind == 1) {
            pending = op;
          } else {
            j.acked.add(op);
            j.lastAcked = op.op();
            pending = null;
          }
          j.lastOp = op.op();
        }
        j.inFlight = pending;
      }
      return j;
    }

    void applyAcked(Map<Long, Long> model) {
      for (Op op : acked) {
        op.apply(model);
      }
    }

    /** The next round appends to an empty journal: what this one says is now in the model. */
    void rewriteWithout(Path file) throws Exception {
      Files.write(file, new byte[0]);
    }
  }
}
