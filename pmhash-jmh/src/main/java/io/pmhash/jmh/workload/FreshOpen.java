package io.pmhash.jmh.workload;

import io.pmhash.core.Durability;
import io.pmhash.map.Codec;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.PmHashMap;
import io.pmhash.map.TableOptions;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What a restarted service pays to reopen a pool after a kill: the workload's crash copy opened by
 * a new JVM ({@code --fresh-open}; issue 3's "reopening a 10M-record pool after a kill"). The
 * child times the first {@code PmHash.open} of its life, which carries the JVM's one-time work
 * (class loading, the FFM linker's bootstrap, the logger's start, interpretation before the JIT)
 * beside the scheme's own open, and reports how long the JVM ran before its {@code main}. It then
 * halts without closing, as a killed process would, so the file stays "not clean".
 *
 * <p>The child runs the same {@code java} on this JVM's class path (with its module path, as in the
 * tests, joined to it); the parent reads one line.
 */
public final class FreshOpen {
  private FreshOpen() {}

  /** The line the child prints, followed by {@code <open ns> <uptime at main, ms> <records>}. */
  static final String RESULT = "pmhash-fresh-open";

  /** What the child measured. */
  record Result(double openMillis, long jvmMillisBeforeMain, long records) {}

  /**
   * The child: opens {@code args[1]} with durability {@code args[0]} (as a map of byte arrays if
   * {@code args[2]} is {@code map}), prints {@link #RESULT} and its figures, and halts.
   *
   * @param args durability, pool file, {@code table} or {@code map}
   * @throws IOException if the open fails
   */
  public static void main(String[] args) throws IOException {
    long atMain = System.nanoTime();
    // Nothing before the open loads pmhash: the options are built inside the timed call.
    long t0 = System.nanoTime();
    Durability durability = Durability.valueOf(args[0]);
    Object opened = args[2].equals("map")
        ? PmHash.openMap(Path.of(args[1]), Codec.bytes(), Codec.bytes(), TableOptions.any().withDurability(durability))
        : PmHash.open(Path.of(args[1]), TableOptions.any().withDurability(durability));
    long openNanos = System.nanoTime() - t0;
    // Not timed: a size after a crash may touch every segment (their lazy recovery).
    long records = opened instanceof LongHashTable t ? t.size() : ((PmHashMap<?, ?>) opened).size();
    long beforeMain = ManagementFactory.getRuntimeMXBean().getUptime() - (System.nanoTime() - atMain) / 1_000_000;
    System.out.println(RESULT + " " + openNanos + " " + beforeMain + " " + records);
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }

  /**
   * Runs the child on {@code pool} with this JVM's {@code java} and class path.
   *
   * @param durability the durability to open with
   * @param pool the pool file (a crash copy: the child leaves it not clean)
   * @param map whether the pool holds a {@code PmHashMap<byte[], byte[]>} (pointer mode)
   * @return what the child measured
   * @throws IOException if the child cannot be started, fails, or prints no result (the message
   *     carries its output)
   */
  static Result run(Durability durability, Path pool, boolean map) throws IOException {
    // the module path (the tests) joined to the class path, the child on the class path only, as
    // the project's process tests start theirs
    String cp = Stream.of(System.getProperty("jdk.module.path", ""), System.getProperty("java.class.path", ""))
        .filter(e -> !e.isEmpty()).collect(Collectors.joining(File.pathSeparator));
    List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--enable-native-access=ALL-UNNAMED", "-cp", cp, FreshOpen.class.getName(),
        durability.name(), pool.toString(), map ? "map" : "table");
    Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
    StringBuilder output = new StringBuilder();
    Result result = null;
    try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = in.readLine()) != null; ) {
        if (line.startsWith(RESULT + " ")) {
          String[] f = line.split(" ");
          result = new Result(Long.parseLong(f[1]) / 1e6, Long.parseLong(f[2]), Long.parseLong(f[3]));
        } else {
          output.append("\n    ").append(line);
        }
      }
    }
    int exit;
    try {
      exit = child.waitFor();
    } catch (InterruptedException e) {
      child.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while the fresh-JVM open of " + pool + " ran");
    }
    if (exit != 0 || result == null) {
      throw new IOException(String.format(Locale.ROOT, "the fresh-JVM open of %s failed (exit %d); its output:%s", pool, exit, output));
    }
    return result;
  }
}
