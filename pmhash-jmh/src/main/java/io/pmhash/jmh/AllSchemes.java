package io.pmhash.jmh;

import io.pmhash.map.PmHash;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * JMH's main with {@code -p scheme=} set to every scheme this build registers ({@link
 * PmHash#schemes()}), unless the command line sets it: schemes merged later join {@link
 * TableBenchmark} without an edit to its {@code @Param} list.
 *
 * <p>Run: {@code java -cp pmhash-jmh/target/benchmarks.jar io.pmhash.jmh.AllSchemes TableBenchmark
 * [JMH options]}
 */
public final class AllSchemes {
  private AllSchemes() {}

  /**
   * Runs JMH.
   *
   * @param args JMH's options
   * @throws Exception what JMH throws
   */
  public static void main(String[] args) throws Exception {
    org.openjdk.jmh.Main.main(withSchemes(args));
  }

  /**
   * Adds {@code -p scheme=a,b,...} unless the arguments already set {@code scheme}.
   *
   * @param args JMH's options
   * @return the options with every registered scheme
   */
  static String[] withSchemes(String[] args) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals("-p") && args[i + 1].startsWith("scheme=")) {
        return args;
      }
    }
    List<String> out = new ArrayList<>(Arrays.asList(args));
    out.add("-p");
    out.add("scheme=" + String.join(",", PmHash.schemes().keySet()));
    return out.toArray(String[]::new);
  }
}
