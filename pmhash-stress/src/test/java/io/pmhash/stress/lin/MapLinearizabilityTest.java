package io.pmhash.stress.lin;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pmhash.map.Codec;
import io.pmhash.map.PmHash;
import io.pmhash.map.PmHashMap;
import io.pmhash.map.TableOptions;
import java.util.List;
import java.util.stream.Stream;
import org.jetbrains.lincheck.LincheckAssertionError;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Linearizability of every scheme's map operations ({@link MapOperations}: get, containsKey,
 * put, putIfAbsent, replace, replace-if, remove, remove-if; size at quiescence) against a {@link
 * SequentialMap}, checked by Lincheck in stress mode: two threads, each running a few random
 * operations on keys 1..4 at once, thousands of scenarios, each history checked for a
 * sequential order that explains every result. The schemes are those {@link PmHash#schemes()}
 * finds, so a scheme added later joins without a change here, and the pointer mode of each
 * scheme that has one ({@code dash-eh/pointer}: a {@code PmHashMap<String, String>} whose keys
 * and values live out of line).
 *
 * <p>{@link NonAtomicPutIfAbsent} is the negative control: the same check must fail on it.
 *
 * <p><b>Model checking</b> ({@link #everySchemeIsLinearizableUnderModelChecking}): Lincheck's
 * model checker runs the threads one at a time and switches between them only at the
 * shared-memory accesses it instruments (fields, arrays, atomics); a load or store through a
 * {@code MemorySegment} view {@code VarHandle}, i.e. any access to pool memory, is none of them.
 * The surefire run therefore sets {@code -Dpmhash.modelCheck=true}, which makes every {@link
 * io.pmhash.core.concurrent.SwitchPoint} (each version-lock read, CAS and release, CCEH's
 * segment lock operations, each wait step, each drain between persist steps) a read of an
 * atomic the checker sees, so it can interleave the threads at every step of the schemes'
 * synchronization protocols; heap locks (level hashing's and NVLH's lock stripes, NVDH's {@code
 * StampedLock}) and the epoch slots are seen without help. The switches it can still not make are
 * inside a run of plain pool reads or writes with no synchronization step between them, which
 * is where no other thread may interleave anyway (a writer holds its locks; a reader validates
 * its snapshot afterwards). {@link #nonAtomicPutIfAbsentIsReportedByModelChecking} shows the
 * mode catching a broken operation.
 *
 * <p>Default: 10 iterations of 1 000 scenarios per scheme, a few seconds each on an idle two-core
 * machine. Lincheck's stress threads meet at a spinning barrier before every scenario, so on an
 * oversubscribed machine (load far above the core count) it slows down many times over. Long mode:
 * {@code -Dpmhash.lincheck.long=true} (100 iterations of 10 000 scenarios per scheme, three
 * threads).
 */
class MapLinearizabilityTest {
  private static final boolean LONG = Boolean.getBoolean("pmhash.lincheck.long");

  /**
   * Iterations of one loop, summed over its thread's switches, after which the model checker
   * reports a hang. Lincheck switches away from a loop after a few iterations ("active lock")
   * and counts on: a reader spinning on a lock that a writer holds while it scans a group of
   * group hashing's level-2 cells (up to 64 words) crosses a small bound although the writer
   * finishes; a real livelock crosses any bound.
   */
  static final int LOOP_BOUND = 1_000;

  /** Runs of the stress check the negative control gets to be caught. */
  static final int CONTROL_RUNS = 5;

  @AfterAll
  static void closeTables() {
    MapOperations.closeAll();
  }

  @TestFactory
  Stream<DynamicTest> everySchemeIsLinearizableUnderStress() {
    return schemes().map(s -> DynamicTest.dynamicTest(s, () -> {
      MapOperations.use(s);
      stress().check(MapOperations.class);
    }));
  }

  /**
   * The control must be caught. The race needs the two stress threads to overlap inside a window
   * of a few hundred nanoseconds; on an idle machine the first run of 10 000 scenarios finds it,
   * on an oversubscribed one (a load average of 10 on two cores) one run sometimes did not, so
   * the control gets up to {@link #CONTROL_RUNS} runs and passes at the first report. The schemes'
   * checks get one run each: a budget that lets the control through only by luck would show here
   * as a failure, not as a silent pass.
   */
  @Test
  void nonAtomicPutIfAbsentIsReportedNonLinearizable() {
    MapOperations.use(PmHash.schemes().keySet().iterator().next());
    for (int run = 1; run <= CONTROL_RUNS; run++) {
      try {
        stress().check(NonAtomicPutIfAbsent.class);
      } catch (LincheckAssertionError e) {
        assertTrue(e.getMessage().contains("putIfAbsent"), e::getMessage);
        System.out.println("negative control reported non-linearizable in run " + run + " of " + CONTROL_RUNS);
        return;
      }
    }
    fail("Lincheck accepted a check-then-act putIfAbsent in " + CONTROL_RUNS
        + " runs: the check as configured cannot catch a broken scheme");
  }

  @TestFactory
  Stream<DynamicTest> everySchemeIsLinearizableUnderModelChecking() {
    return schemes().map(s -> DynamicTest.dynamicTest(s, () -> {
      MapOperations.use(s);
      MapOperations.freshTables(true);
      try {
        modelChecking().check(MapOperations.class);
      } finally {
        MapOperations.freshTables(false);
      }
    }));
  }

  /**
   * The control must be caught by the model checker too, with the options the schemes get; it
   * explores interleavings systematically, so no retries are needed: it either finds the race
   * in the scenarios it generates or the configuration is too weak to check anything.
   */
  @Test
  void nonAtomicPutIfAbsentIsReportedByModelChecking() {
    MapOperations.use(PmHash.schemes().keySet().iterator().next());
    MapOperations.freshTables(true);
    try {
      LincheckAssertionError e = assertThrows(LincheckAssertionError.class,
          () -> modelChecking().check(NonAtomicPutIfAbsent.class),
          "model checking accepted a check-then-act putIfAbsent: it cannot switch threads inside the"
              + " tables' operations, so it cannot check them");
      assertTrue(e.getMessage().contains("putIfAbsent"), e::getMessage);
    } finally {
      MapOperations.freshTables(false);
    }
  }

  /**
   * The schemes {@link PmHash#schemes()} finds, and the pointer mode ({@link MapOperations#POINTER})
   * of each that has one, whose names match {@code -Dpmhash.lincheck.schemes} (default: all).
   */
  private static Stream<String> schemes() {
    List<String> inline = List.copyOf(PmHash.schemes().keySet());
    assertFalse(inline.isEmpty(), "no scheme found through ServiceLoader");
    List<String> all = Stream.concat(inline.stream(),
        inline.stream().filter(MapLinearizabilityTest::hasPointerMode).map(s -> s + MapOperations.POINTER)).toList();
    assertTrue(all.contains("dash-eh" + MapOperations.POINTER), "Dash-EH's pointer mode is among " + all);
    String only = System.getProperty("pmhash.lincheck.schemes", ".*");
    List<String> chosen = all.stream().filter(s -> s.matches(only)).toList();
    assertFalse(chosen.isEmpty(), "-Dpmhash.lincheck.schemes=" + only + " matches none of " + all);
    return chosen.stream();
  }

  /** Whether the scheme makes a map of {@code String}s, which only a pointer mode can. */
  private static boolean hasPointerMode(String scheme) {
    try (PmHashMap<String, String> m = PmHash.createVolatileMap(Codec.utf8(), Codec.utf8(), TableOptions.scheme(scheme))) {
      return m.pointerMode();
    } catch (IllegalArgumentException e) {
      return false; // "needs a pointer mode the scheme does not have" (PmHash.createVolatileMap)
    }
  }

  private static StressOptions stress() {
    StressOptions o = new StressOptions()
        .sequentialSpecification(SequentialMap.class)
        .actorsBefore(2)
        .actorsAfter(1);
    return LONG
        ? o.iterations(100).invocationsPerIteration(10_000).threads(3).actorsPerThread(3)
        : o.iterations(10).invocationsPerIteration(1_000).threads(2).actorsPerThread(3);
  }

  private static ModelCheckingOptions modelChecking() {
    ModelCheckingOptions o = new ModelCheckingOptions().sequentialSpecification(SequentialMap.class)
        .actorsBefore(1)
        .actorsAfter(1)
        .loopBound(LOOP_BOUND);
    return LONG
        ? o.iterations(100).invocationsPerIteration(2_000).threads(3).actorsPerThread(3)
        : o.iterations(10).invocationsPerIteration(200).threads(2).actorsPerThread(2);
  }
}
