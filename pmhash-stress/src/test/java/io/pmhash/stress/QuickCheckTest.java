package io.pmhash.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The verdict of {@link QuickCheck} on jcstress console logs in the layout jcstress 0.16 prints. */
class QuickCheckTest {
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);

  private static List<String> log(List<String> interesting, List<String> failed) {
    List<String> l = new ArrayList<>(List.of("(Results: 16 planned; 16 passed)", "", "RUN RESULTS:",
        "  Interesting tests: " + interesting.size() + " matching test results.", ""));
    interesting.forEach(t -> l.addAll(List.of(".......... [OK] " + t, "", "  Results across all configurations:",
        "  RESULT  SAMPLES     FREQ       EXPECT  DESCRIPTION", "    1, 0       18    0.02%  Interesting  x", "")));
    l.add(failed.isEmpty() ? "  Failed tests: No matches." : "  Failed tests: " + failed.size() + " matching test results.");
    failed.forEach(t -> l.addAll(List.of("", ".......... [FAILED] " + t, "")));
    l.addAll(List.of("", "  Error tests: No matches.", "",
        "  All remaining tests: 10 matching test results. Use -v to print them.",
        ".......... [OK] io.pmhash.stress.EpochReclamation"));
    return l;
  }

  @Test
  void allControlsSeenAndNothingFailedPasses() {
    assertEquals(0, QuickCheck.check(log(QuickCheck.CONTROLS, List.of()), true, out));
    assertTrue(bytes.toString(StandardCharsets.UTF_8).contains("0 failed, 7/7 negative controls seen"));
  }

  @Test
  void aFailedTestFails() {
    assertEquals(1, QuickCheck.check(
        log(QuickCheck.CONTROLS, List.of("io.pmhash.stress.EpochReclamation")), false, out));
    assertTrue(bytes.toString(StandardCharsets.UTF_8).contains("FAILED io.pmhash.stress.EpochReclamation"));
  }

  @Test
  void aMissingControlWarnsOrFailsWhenRequired() {
    List<String> some = QuickCheck.CONTROLS.subList(1, QuickCheck.CONTROLS.size());
    assertEquals(0, QuickCheck.check(log(some, List.of()), false, out));
    assertEquals(1, QuickCheck.check(log(some, List.of()), true, out));
    assertTrue(bytes.toString(StandardCharsets.UTF_8).contains("NOT SEEN " + QuickCheck.CONTROLS.get(0)));
  }

  @Test
  void anUnfinishedRunFails() {
    assertEquals(1, QuickCheck.check(List.of("(Results: 16 planned; 3 passed)"), false, out));
  }
}
