package io.pmhash.jmh;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pmhash.map.PmHash;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link AllSchemes} adds every registered scheme unless the command line names one. */
class AllSchemesTest {
  @Test
  void addsEveryRegisteredScheme() {
    String[] out = AllSchemes.withSchemes(new String[] {"TableBenchmark", "-f", "1"});
    assertEquals(List.of("TableBenchmark", "-f", "1", "-p", "scheme=" + String.join(",", PmHash.schemes().keySet())), List.of(out));
    assertEquals(true, PmHash.schemes().keySet().containsAll(List.of("dash-eh", "cceh", "level")));
  }

  @Test
  void keepsTheSchemeTheCommandLineChose() {
    String[] in = {"TableBenchmark", "-p", "scheme=cceh"};
    assertArrayEquals(in, AllSchemes.withSchemes(in));
  }
}
