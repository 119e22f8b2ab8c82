package io.pmhash.stress.lin;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.concurrent.SwitchPoint;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.jetbrains.lincheck.LincheckAssertionError;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.junit.jupiter.api.Test;

/**
 * The machinery of {@link MapLinearizabilityTest}'s model checking: Lincheck's model checker
 * cannot switch threads at a {@code MemorySegment} access, only at a {@link SwitchPoint} (with
 * {@code -Dpmhash.modelCheck=true}, which the module's surefire run sets). A read-modify-write
 * of one word of native memory with a switch point between its load and its store, and no other
 * shared access, must be reported: two threads can both load 0 and both return it.
 */
class SwitchPointTest {
  /** The broken counter: its only shared state is native memory. */
  public static class SegmentCounter {
    private static final MemorySegment WORD = Arena.global().allocate(ValueLayout.JAVA_LONG);

    /** A scenario's instance: the word reset. */
    public SegmentCounter() {
      WORD.set(ValueLayout.JAVA_LONG, 0, 0L);
    }

    /** @return the value before the increment */
    @Operation
    public long increment() {
      long v = WORD.get(ValueLayout.JAVA_LONG, 0);
      SwitchPoint.here();
      WORD.set(ValueLayout.JAVA_LONG, 0, v + 1);
      return v;
    }
  }

  /** The specification: an atomic counter. */
  public static class SequentialCounter {
    private long value;

    /** @return the value before the increment */
    public long increment() {
      return value++;
    }
  }

  @Test
  void aSwitchPointBetweenTwoNativeAccessesIsWhereTheModelCheckerInterleaves() {
    assertTrue(SwitchPoint.ENABLED, "run with -Dpmhash.modelCheck=true (the module's surefire argLine sets it)");
    LincheckAssertionError e = assertThrows(LincheckAssertionError.class, () -> new ModelCheckingOptions()
        .sequentialSpecification(SequentialCounter.class)
        .iterations(5).invocationsPerIteration(100).threads(2).actorsPerThread(1)
        .check(SegmentCounter.class));
    assertTrue(e.getMessage().contains("increment"), e::getMessage);
  }
}
