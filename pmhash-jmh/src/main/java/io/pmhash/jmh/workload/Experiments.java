package io.pmhash.jmh.workload;

import io.pmhash.core.Durability;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The papers' experiments, scripted over the workload command ({@link TableWorkload}) and the
 * table API, each writing one CSV file that {@code io.pmhash.jmh.charts.Charts} draws. Scaled by
 * default to finish on 2 cores and 24 GiB; {@code --paper} switches to the papers' parameters.
 *
 * <table class="striped">
 *   <caption>Experiments</caption>
 *   <tr><th>name</th><th>paper</th><th>what</th></tr>
 *   <tr><td>dash-per-op</td><td>Dash §6.3</td><td>the workload (insert, search+, search-, delete) on one thread, per scheme</td></tr>
 *   <tr><td>dash-scaling</td><td>Dash §6.4</td><td>the same for 1..T threads</td></tr>
 *   <tr><td>dash-load-factor</td><td>Dash Fig. 12</td><td>load factor sampled as records are inserted, per scheme (Dash-EH with 2 and 4 stash buckets)</td></tr>
 *   <tr><td>dash-stash-sweep</td><td>Dash Fig. 11</td><td>load factor as records are inserted, per stash-bucket count 2..4 (segment size is fixed in this build's Dash-EH, so the sweep is over stash buckets)</td></tr>
 *   <tr><td>dash-recovery</td><td>Dash Table 1</td><td>time to open a crash image (a copy of the pool taken while open) against records</td></tr>
 *   <tr><td>dash-after-crash</td><td>Dash Fig. 14</td><td>positive-search throughput in 10 ms slices after opening a crash image</td></tr>
 *   <tr><td>group-load-factor, group-recovery, group-size-sweep</td><td>Group hashing Fig. 7, Table 3, Fig. 8</td><td>scheme {@code group}: skipped with a message until it is in the build</td></tr>
 *   <tr><td>esh-load-factor, esh-scaling, esh-recovery</td><td>ESH Fig. 4.8, 4.6–4.7, Table 4.1</td><td>scheme {@code esh}: likewise</td></tr>
 *   <tr><td>nvlh-value-size</td><td>NVLH Fig. 2–3</td><td>needs variable-size values (pointer mode): skipped with a message</td></tr>
 * </table>
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -cp pmhash-jmh/target/benchmarks.jar
 * io.pmhash.jmh.workload.Experiments --out DIR [options] EXPERIMENT...} ({@code --help} lists
 * the options); {@code pmhash-jmh/bench/run-experiments.sh} runs the committed set.
 */
public final class Experiments {
  private final Path out;
  private final Path dir;
  private final Durability durability;
  private final List<String> schemes;
  private final boolean paper;
  private final int maxThreads;
  private final String command;
  private final PrintStream log;

  private Experiments(Path out, Path dir, Durability durability, List<String> schemes, boolean paper, int maxThreads,
      String command, PrintStream log) {
    this.out = out;
    this.dir = dir;
    this.durability = durability;
    this.schemes = schemes;
    this.paper = paper;
    this.maxThreads = maxThreads;
    this.command = command;
    this.log = log;
  }

  static String usage() {
    return """
        usage: Experiments --out DIR [options] EXPERIMENT...   (or: all)
          --out DIR          where the CSV files go (one per experiment)
          --dir DIR          where pool files go (default the temp directory; /dev/shm is tmpfs)
          --durability MODE  PMEM_EMULATED (default), PROCESS, MSYNC, PMEM, VOLATILE
          --schemes a,b      the schemes to compare (default: dash-eh, cceh, level where present)
          --threads-max T    the largest thread count of the scaling experiments (default: cores)
          --paper            the papers' sizes instead of the scaled ones (hours, and 100+ GiB)
        experiments: %s
        Numbers measured on DRAM or tmpfs are not persistent-memory numbers.
        """.formatted(String.join(", ", EXPERIMENTS.keySet()));
  }

  private interface Experiment {
    void run(Experiments e, String name) throws IOException;
  }

  private static final Map<String, Experiment> EXPERIMENTS = new LinkedHashMap<>();

  static {
    EXPERIMENTS.put("dash-per-op", (e, n) -> e.throughput(n, e.schemes, List.of(1)));
    EXPERIMENTS.put("dash-scaling", (e, n) -> e.throughput(n, e.schemes, e.threadCounts()));
    EXPERIMENTS.put("dash-load-factor", (e, n) -> e.loadFactor(n, e.loadFactorSeries()));
    // Dash-EH accepts 2..4 stash buckets (the paper's Fig. 12 shows 2 and 4).
    EXPERIMENTS.put("dash-stash-sweep", (e, n) -> e.loadFactor(n, List.of(
        Series.of("dash-eh", "stashBuckets", 2), Series.of("dash-eh", "stashBuckets", 3),
        Series.of("dash-eh", "stashBuckets", 4))));
    EXPERIMENTS.put("dash-recovery", (e, n) -> e.recovery(n, e.schemes));
    EXPERIMENTS.put("dash-after-crash", (e, n) -> e.afterCrash(n, e.schemes));
    EXPERIMENTS.put("group-load-factor", (e, n) -> e.ifScheme(n, "group", () -> e.loadFactor(n, List.of(Series.of("group")))));
    EXPERIMENTS.put("group-recovery", (e, n) -> e.ifScheme(n, "group", () -> e.recovery(n, List.of("group"))));
    EXPERIMENTS.put("group-size-sweep", (e, n) -> e.ifScheme(n, "group", () -> e.loadFactor(n, List.of(
        Series.of("group", "groupSize", 64), Series.of("group", "groupSize", 256), Series.of("group", "groupSize", 1024)))));
    EXPERIMENTS.put("esh-load-factor", (e, n) -> e.ifScheme(n, "esh", () -> e.loadFactor(n, List.of(Series.of("esh"), Series.of("cceh"), Series.of("dash-eh")))));
    EXPERIMENTS.put("esh-scaling", (e, n) -> e.ifScheme(n, "esh", () -> e.throughput(n, List.of("esh", "cceh", "dash-eh"), e.threadCounts())));
    EXPERIMENTS.put("esh-recovery", (e, n) -> e.ifScheme(n, "esh", () -> e.recovery(n, List.of("esh", "cceh", "dash-eh"))));
    EXPERIMENTS.put("nvlh-value-size", (e, n) -> e.log.printf("%s: skipped: NVLH's figures vary the value size (8 B to 1 KiB); "
        + "this harness drives LongHashTable (8-byte values). It runs once pointer mode (PmHashMap) and the nvlh scheme are in the build.%n", n));
  }

  private interface Body {
    void run() throws IOException;
  }

  private void ifScheme(String name, String scheme, Body body) throws IOException {
    if (!PmHash.schemes().containsKey(scheme)) {
      log.printf("%s: skipped: scheme '%s' is not in this build (available: %s)%n", name, scheme, PmHash.schemes().keySet());
      return;
    }
    body.run();
  }

  /** One curve of a load-factor experiment: a scheme and, optionally, one parameter. */
  record Series(String scheme, String param, long value) {
    static Series of(String scheme) {
      return new Series(scheme, null, 0);
    }

    static Series of(String scheme, String param, long value) {
      return new Series(scheme, param, value);
    }

    String label() {
      return param == null ? scheme : scheme + " (" + param + "=" + value + ")";
    }

    TableOptions options(Durability d) {
      TableOptions o = TableOptions.scheme(scheme).withDurability(d);
      return param == null ? o : o.withParam(param, value);
    }
  }

  private List<Series> loadFactorSeries() {
    List<Series> s = new ArrayList<>();
    for (String scheme : schemes) {
      if (scheme.equals("dash-eh")) {
        s.add(Series.of("dash-eh", "stashBuckets", 2));
        s.add(Series.of("dash-eh", "stashBuckets", 4));
      } else {
        s.add(Series.of(scheme));
      }
    }
    return s;
  }

  private List<Integer> threadCounts() {
    List<Integer> t = new ArrayList<>();
    for (int i = 1; i < maxThreads; i *= 2) {
      t.add(i);
    }
    t.add(maxThreads);
    return t;
  }

  /** Dash §6.3 / §6.4: the workload's phases per scheme and thread count. */
  private void throughput(String name, List<String> which, List<Integer> threads) throws IOException {
    long preload = paper ? 10_000_000 : 1_000_000;
    long ops = paper ? 190_000_000 : 2_000_000;
    try (Csv csv = csv(name, "scheme,durability,threads,phase,ops,seconds,mops,flushes_per_op,drains_per_op,load_factor",
        "preload " + preload + " records, then " + ops + " operations per phase (Dash §6.2 uses 10M + 190M)")) {
      for (String scheme : which) {
        for (int t : threads) {
          List<String> args = new ArrayList<>(List.of("--scheme", scheme, "--durability", durability.name(),
              "--file", pool(name).toString(), "--preload", Long.toString(preload), "--ops", Long.toString(ops),
              "--threads", Integer.toString(t)));
          WorkloadOptions o = WorkloadOptions.parse(args.toArray(String[]::new));
          for (PhaseResult r : TableWorkload.run(o, log)) {
            csv.row(scheme, durability.name(), t, r.phase(), r.ops(), r.seconds(), r.mops(), r.flushesPerOp(),
                r.drainsPerOp(), r.loadFactor());
          }
        }
      }
    }
  }

  /** Dash Fig. 11/12: load factor after every {@code step} inserted records. */
  private void loadFactor(String name, List<Series> series) throws IOException {
    long total = paper ? 40_000_000 : 4_000_000;
    long step = total / 200;
    try (Csv csv = csv(name, "series,records,load_factor", "insert " + total + " records into an empty table, load factor every " + step)) {
      for (Series s : series) {
        if (!PmHash.schemes().containsKey(s.scheme())) {
          log.printf("%s: %s skipped: not in this build%n", name, s.label());
          continue;
        }
        log.printf("%s: %s%n", name, s.label());
        long[] keys = Keys.range(42, 0, total);
        try (LongHashTable t = create(name, s.options(durability))) {
          for (long i = 0; i < total; i++) {
            t.put(keys[(int) i], i);
            if ((i + 1) % step == 0) {
              csv.row(s.label(), i + 1, t.loadFactor());
            }
          }
        } finally {
          Files.deleteIfExists(pool(name));
        }
      }
    }
  }

  /** Dash Table 1: open a crash image (the file copied while the table is open) against records. */
  private void recovery(String name, List<String> which) throws IOException {
    long[] sizes = paper ? new long[] {40_000_000, 80_000_000, 160_000_000, 320_000_000}
        : new long[] {500_000, 1_000_000, 2_000_000, 4_000_000};
    if (durability == Durability.VOLATILE) {
      log.printf("%s: skipped: a VOLATILE table has no file to recover%n", name);
      return;
    }
    try (Csv csv = csv(name, "scheme,durability,records,recovery_ms,records_after",
        "load N records, copy the pool file while the table is open (what kill -9 leaves), time PmHash.open of the copy")) {
      for (String scheme : which) {
        for (long n : sizes) {
          Path image = crashImage(name, scheme, n, t -> { });
          try {
            long t0 = System.nanoTime();
            try (LongHashTable t = PmHash.open(image, TableOptions.any().withDurability(durability))) {
              double ms = (System.nanoTime() - t0) / 1e6;
              long size = t.size();
              if (size != n) {
                throw new IllegalStateException(scheme + ": the crash image holds " + size + " records, expected " + n);
              }
              csv.row(scheme, durability.name(), n, ms, size);
              log.printf("%s: %s, %,d records: %.2f ms%n", name, scheme, n, ms);
            }
          } finally {
            Files.deleteIfExists(image);
          }
        }
      }
    }
  }

  /**
   * Dash Fig. 14: positive searches in 10 ms slices from the moment a crash image is opened. The
   * JVM compiles the search path first (the same loop on the live table for a second, before
   * the image is taken), so that the curve shows the scheme's lazy recovery, not the JIT warming
   * up; recovery code itself runs cold, as it would after a real restart.
   */
  private void afterCrash(String name, List<String> which) throws IOException {
    long n = paper ? 40_000_000 : 2_000_000;
    if (durability == Durability.VOLATILE) {
      log.printf("%s: skipped: a VOLATILE table has no file to recover%n", name);
      return;
    }
    try (Csv csv = csv(name, "scheme,durability,elapsed_ms,mops",
        "load " + n + " records, warm the search path up, copy the pool while open, then open the copy and search present keys"
            + " on one thread; throughput per 10 ms from the start of open (the first row, 0 Mops/s, is when open returned)")) {
      for (String scheme : which) {
        long[] keys = Keys.range(42, 0, n);
        int[] probe = new int[1 << 20];
        java.util.SplittableRandom r = new java.util.SplittableRandom(7);
        for (int i = 0; i < probe.length; i++) {
          probe[i] = r.nextInt((int) n);
        }
        Path image = crashImage(name, scheme, n, t -> searchSlices(t, keys, probe, System.nanoTime(), 100, null, scheme));
        try {
          long start = System.nanoTime();
          try (LongHashTable t = PmHash.open(image, TableOptions.any().withDurability(durability))) {
            csv.row(scheme, durability.name(), (System.nanoTime() - start) / 1e6, 0.0); // back online
            searchSlices(t, keys, probe, start, 150, csv, scheme);
          }
        } finally {
          Files.deleteIfExists(image);
        }
      }
    }
  }

  /** Searches present keys in 10 ms slices, a CSV row per slice (none if {@code csv} is null). */
  private void searchSlices(LongHashTable t, long[] keys, int[] probe, long start, int slices, Csv csv, String scheme) {
    long sliceNanos = 10_000_000;
    int p = 0;
    long wrong = 0;
    for (int s = 0; s < slices; s++) {
      long sliceStart = System.nanoTime();
      long end = sliceStart + sliceNanos;
      long done = 0;
      long now;
      do {
        for (int i = 0; i < 256; i++) {
          int k = probe[p++ & (probe.length - 1)];
          wrong += t.get(keys[k], -1) == k ? 0 : 1;
        }
        done += 256;
        now = System.nanoTime();
      } while (now < end);
      if (csv != null) {
        csv.row(scheme, durability.name(), (now - start) / 1e6, done / ((now - sliceStart) / 1e3));
      }
    }
    if (wrong != 0) {
      throw new IllegalStateException(scheme + ": " + wrong + " searches did not find their value");
    }
  }

  private interface TableAction {
    void run(LongHashTable t);
  }

  /** Loads {@code n} records and copies the pool file while the table is still open. */
  private Path crashImage(String name, String scheme, long n, TableAction beforeCopy) throws IOException {
    Path file = pool(name);
    Path image = file.resolveSibling(file.getFileName() + ".crash");
    long[] keys = Keys.range(42, 0, n);
    try (LongHashTable t = create(name, TableOptions.scheme(scheme).withDurability(durability))) {
      for (int i = 0; i < n; i++) {
        t.put(keys[i], i);
      }
      beforeCopy.run(t);
      Files.copy(file, image, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(file);
    }
    return image;
  }

  private LongHashTable create(String name, TableOptions o) throws IOException {
    if (durability == Durability.VOLATILE) {
      return PmHash.createVolatile(o);
    }
    Files.deleteIfExists(pool(name));
    return PmHash.create(pool(name), o);
  }

  private Path pool(String name) {
    return dir.resolve("pmhash-experiment-" + name + ".pool");
  }

  private Csv csv(String name, String header, String parameters) throws IOException {
    Files.createDirectories(out);
    Csv c = new Csv(out.resolve(name + ".csv"));
    c.comment("experiment: " + name);
    c.comment("parameters: " + parameters + (paper ? " (--paper)" : " (scaled; --paper for the paper's sizes)"));
    c.comment("durability: " + durability + (durability == Durability.PMEM ? "" : " (not persistent memory: DRAM/page cache)"));
    c.comment("pool file system: " + Files.getFileStore(dir).type());
    c.comment("machine: " + Machine.describe());
    c.comment("jdk: " + Runtime.version() + " " + System.getProperty("java.vm.name"));
    c.comment("taken: " + Instant.now().truncatedTo(ChronoUnit.SECONDS));
    c.comment("command: " + command);
    c.line(header);
    return c;
  }

  /** A CSV file written row by row (flushed as it goes, so a partial run leaves partial data). */
  static final class Csv implements AutoCloseable {
    private final PrintStream out;

    Csv(Path file) throws IOException {
      out = new PrintStream(Files.newOutputStream(file), true, StandardCharsets.UTF_8);
    }

    void comment(String text) {
      out.println("# " + text);
    }

    void line(String text) {
      out.println(text);
    }

    void row(Object... cells) {
      StringBuilder b = new StringBuilder();
      for (Object c : cells) {
        if (b.length() > 0) {
          b.append(',');
        }
        b.append(c instanceof Double d ? String.format(Locale.ROOT, "%.4f", d) : String.valueOf(c).replace(',', ';'));
      }
      out.println(b);
    }

    @Override
    public void close() {
      out.close();
    }
  }

  /**
   * Runs the experiments named on the command line.
   *
   * @param args options and experiment names; {@code --help} lists them
   */
  public static void main(String[] args) {
    Path out = null;
    Path dir = Path.of(System.getProperty("java.io.tmpdir"));
    Durability durability = Durability.PMEM_EMULATED;
    List<String> schemes = new ArrayList<>();
    for (String s : List.of("dash-eh", "cceh", "level")) {
      if (PmHash.schemes().containsKey(s)) {
        schemes.add(s);
      }
    }
    boolean paper = false;
    int threads = Runtime.getRuntime().availableProcessors();
    List<String> names = new ArrayList<>();
    try {
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "-h", "--help" -> {
            System.out.print(usage());
            return;
          }
          case "--out" -> out = Path.of(arg(args, ++i));
          case "--dir" -> dir = Path.of(arg(args, ++i));
          case "--durability" -> durability = Durability.valueOf(arg(args, ++i).toUpperCase(Locale.ROOT));
          case "--schemes" -> schemes = Arrays.asList(arg(args, ++i).split(","));
          case "--threads-max" -> threads = Integer.parseInt(arg(args, ++i));
          case "--paper" -> paper = true;
          case "all" -> names.addAll(EXPERIMENTS.keySet());
          default -> {
            if (!EXPERIMENTS.containsKey(args[i])) {
              throw new IllegalArgumentException("unknown option or experiment '" + args[i] + "'");
            }
            names.add(args[i]);
          }
        }
      }
      if (out == null || names.isEmpty()) {
        throw new IllegalArgumentException(out == null ? "--out DIR is required" : "name at least one experiment");
      }
      for (String s : schemes) {
        if (!PmHash.schemes().containsKey(s)) {
          throw new IllegalArgumentException("--schemes: '" + s + "' is not in this build; available: " + PmHash.schemes().keySet());
        }
      }
      if (threads < 1) {
        throw new IllegalArgumentException("--threads-max must be at least 1");
      }
    } catch (IllegalArgumentException e) {
      System.err.println("Experiments: " + e.getMessage());
      System.err.print(usage());
      System.exit(2);
      return;
    }
    Experiments e = new Experiments(out, dir, durability, List.copyOf(schemes), paper, threads,
        "Experiments " + String.join(" ", args), System.err);
    int failed = 0;
    for (String name : names) {
      try {
        EXPERIMENTS.get(name).run(e, name);
      } catch (IOException | RuntimeException ex) {
        failed++;
        System.err.println(name + ": FAILED: " + ex);
      }
    }
    System.exit(failed == 0 ? 0 : 1);
  }

  private static String arg(String[] args, int i) {
    if (i >= args.length) {
      throw new IllegalArgumentException(args[i - 1] + " needs a value");
    }
    return args[i];
  }

  /** The machine a result was taken on, for the CSV header. */
  static final class Machine {
    private Machine() {}

    static String describe() {
      String cpu = "unknown CPU";
      try {
        for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
          if (line.startsWith("model name")) {
            cpu = line.substring(line.indexOf(':') + 1).trim();
            break;
          }
        }
      } catch (IOException | UncheckedIOException e) {
        // not Linux: keep "unknown CPU"
      }
      long mem = 0;
      try {
        for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
          if (line.startsWith("MemTotal:")) {
            mem = Long.parseLong(line.replaceAll("[^0-9]", "")) >> 20;
          }
        }
      } catch (IOException | UncheckedIOException | NumberFormatException e) {
        // unknown
      }
      return cpu + ", " + Runtime.getRuntime().availableProcessors() + " cores" + (mem > 0 ? ", " + mem + " GiB RAM" : "")
          + ", " + System.getProperty("os.name") + " " + System.getProperty("os.version");
    }
  }
}
