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
 *   <tr><td>dash-stash-sweep</td><td>Dash Fig. 12</td><td>load factor as records are inserted, per stash-bucket count 2..4</td></tr>
 *   <tr><td>dash-segment-size</td><td>Dash Fig. 11</td><td>per segment size 1..128 KB (normal buckets 4..512) and 2 or 4 stash buckets: the load factor of a one-segment table just before its first split (several seeds), and the mean load factor of a table while records are inserted; the same first split with fewer insert techniques (Dash-EH's insertTechniques: bucketized, +probing, +balanced insert, +displacement; no stash)</td></tr>
 *   <tr><td>dash-recovery</td><td>Dash Table 1</td><td>time to open a crash image (a copy of the pool taken while open) against records</td></tr>
 *   <tr><td>dash-after-crash</td><td>Dash Fig. 14</td><td>positive-search throughput in 10 ms slices after opening a crash image</td></tr>
 *   <tr><td>group-latency</td><td>Group hashing Fig. 5</td><td>mean latency of 1000 inserts, queries, deletes at load factors 0.5 and 0.75: a fixed-size group table against Dash-EH, after warm-up rounds</td></tr>
 *   <tr><td>group-size-sweep</td><td>Group hashing Fig. 8a</td><td>the same at load factor 0.5 for group sizes 64..1024</td></tr>
 *   <tr><td>group-space</td><td>Group hashing Fig. 7, Fig. 8b</td><td>space utilisation: the load factor at the first failed insert of a fixed-size table, per group size and seed</td></tr>
 *   <tr><td>group-recovery</td><td>Group hashing Table 3</td><td>fill time to load factor 0.5 and recovery time (a full scan) against table size</td></tr>
 *   <tr><td>esh-load-factor</td><td>ESH Fig. 4.8</td><td>load factor as records are inserted: ESH per buckets-per-segment setting (4, 16, 64), CCEH, Dash-EH</td></tr>
 *   <tr><td>esh-scaling</td><td>ESH Fig. 4.6–4.7</td><td>insert, search, delete throughput against threads: ESH, CCEH, Dash-EH</td></tr>
 *   <tr><td>esh-recovery</td><td>ESH Table 4.1</td><td>time to open a crash image against records: ESH, CCEH, Dash-EH</td></tr>
 *   <tr><td>nvlh-value-size</td><td>NVLH Fig. 2–3</td><td>throughput and p99.9/maximum latency against value size (values out of line, not crash-consistent as a whole): NVLH, NVDH, NVDH with transactions</td></tr>
 * </table>
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -cp pmhash-jmh/target/benchmarks.jar
 * io.pmhash.jmh.workload.Experiments --out DIR [options] EXPERIMENT...} ({@code --help} lists
 * the options); {@code pmhash-jmh/bench/run.sh smoke} runs the committed set.
 */
public final class Experiments {
  private final Path out;
  private final Path dir;
  private final Durability durability;
  private final List<String> schemes;
  private final boolean paper;
  /** Sizes small enough for a unit test (seconds): only the CSV's shape and invariants mean anything. */
  private final boolean tiny;
  private final int maxThreads;
  private final String command;
  private final PrintStream log;

  Experiments(Path out, Path dir, Durability durability, List<String> schemes, boolean paper, boolean tiny, int maxThreads,
      String command, PrintStream log) {
    this.out = out;
    this.dir = dir;
    this.durability = durability;
    this.schemes = schemes;
    this.paper = paper;
    this.tiny = tiny;
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

  /** @return the paper's size, the scaled default, or the unit test's */
  private long pick(long paperSize, long scaled, long tinySize) {
    return paper ? paperSize : tiny ? tinySize : scaled;
  }

  /**
   * Runs one experiment by name (for tests, and {@link #main}).
   *
   * @param name an experiment name
   * @throws IOException if a file cannot be written
   */
  void run(String name) throws IOException {
    Experiment x = EXPERIMENTS.get(name);
    if (x == null) {
      throw new IllegalArgumentException("unknown experiment '" + name + "'; known: " + EXPERIMENTS.keySet());
    }
    x.run(this, name);
  }

  private interface Experiment {
    void run(Experiments e, String name) throws IOException;
  }

  private static final Map<String, Experiment> EXPERIMENTS = new LinkedHashMap<>();

  static {
    EXPERIMENTS.put("dash-per-op", (e, n) -> e.throughput(n, e.schemes, List.of(1), e.dashPreload(), e.dashOps()));
    EXPERIMENTS.put("dash-scaling", (e, n) -> e.throughput(n, e.schemes, e.threadCounts(), e.dashPreload(), e.dashOps()));
    EXPERIMENTS.put("dash-load-factor", (e, n) -> e.loadFactor(n, e.loadFactorSeries(), e.dashInserts()));
    // Dash-EH accepts 2..4 stash buckets (the paper's Fig. 12 shows 2 and 4).
    EXPERIMENTS.put("dash-stash-sweep", (e, n) -> e.loadFactor(n, List.of(
        Series.of("dash-eh", "stashBuckets", 2), Series.of("dash-eh", "stashBuckets", 3),
        Series.of("dash-eh", "stashBuckets", 4)), e.dashInserts()));
    EXPERIMENTS.put("dash-segment-size", (e, n) -> e.segmentSize(n));
    EXPERIMENTS.put("dash-recovery", (e, n) -> e.recovery(n, e.schemes, e.paper
        ? new long[] {40_000_000, 80_000_000, 160_000_000, 320_000_000}
        : e.tiny ? new long[] {2_000, 4_000} : new long[] {500_000, 1_000_000, 2_000_000, 4_000_000}));
    EXPERIMENTS.put("dash-after-crash", (e, n) -> e.afterCrash(n, e.schemes));
    EXPERIMENTS.put("group-latency", (e, n) -> e.ifScheme(n, "group", () -> e.groupLatency(n, List.of(
        Series.of("group", "groupSize", 256), Series.of("dash-eh")), new double[] {0.5, 0.75})));
    EXPERIMENTS.put("group-size-sweep", (e, n) -> e.ifScheme(n, "group", () -> e.groupLatency(n, List.of(
        Series.of("group", "groupSize", 64), Series.of("group", "groupSize", 128), Series.of("group", "groupSize", 256),
        Series.of("group", "groupSize", 512), Series.of("group", "groupSize", 1024)), new double[] {0.5})));
    EXPERIMENTS.put("group-space", (e, n) -> e.ifScheme(n, "group", () -> e.groupSpace(n)));
    EXPERIMENTS.put("group-recovery", (e, n) -> e.ifScheme(n, "group", () -> e.groupRecovery(n)));
    EXPERIMENTS.put("esh-load-factor", (e, n) -> e.ifScheme(n, "esh", () -> e.loadFactor(n, List.of(
        Series.of("esh", "bucketsPerSegment", 4), Series.of("esh", "bucketsPerSegment", 16), Series.of("esh", "bucketsPerSegment", 64),
        Series.of("cceh"), Series.of("dash-eh")), e.pick(40_000_000, 2_000_000, 20_000))));
    EXPERIMENTS.put("esh-scaling", (e, n) -> e.ifScheme(n, "esh", () -> e.throughput(n, List.of("esh", "cceh", "dash-eh"),
        e.threadCounts(), e.pick(10_000_000, 500_000, 5_000), e.pick(190_000_000, 1_000_000, 5_000))));
    EXPERIMENTS.put("esh-recovery", (e, n) -> e.ifScheme(n, "esh", () -> e.recovery(n, List.of("esh", "cceh", "dash-eh"),
        e.paper ? new long[] {40_000_000, 80_000_000, 160_000_000, 320_000_000}
            : e.tiny ? new long[] {2_000, 4_000} : new long[] {250_000, 500_000, 1_000_000, 2_000_000})));
    EXPERIMENTS.put("nvlh-value-size", (e, n) -> e.ifScheme(n, "nvlh", () -> e.ifScheme(n, "nvdh", () -> e.nvlhValueSize(n))));
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

  private long dashPreload() {
    return pick(10_000_000, 1_000_000, 5_000);
  }

  private long dashOps() {
    return pick(190_000_000, 2_000_000, 5_000);
  }

  private long dashInserts() {
    return pick(40_000_000, 4_000_000, 20_000);
  }

  private List<Integer> threadCounts() {
    List<Integer> t = new ArrayList<>();
    for (int i = 1; i < maxThreads; i *= 2) {
      t.add(i);
    }
    t.add(maxThreads);
    return t;
  }

  /** Dash §6.3 / §6.4: the workload's phases per scheme and thread count, each run after its warm-up. */
  private void throughput(String name, List<String> which, List<Integer> threads, long preload, long ops) throws IOException {
    try (Csv csv = csv(name, "scheme,durability,threads,phase,ops,seconds,mops,flushes_per_op,drains_per_op,load_factor",
        "preload " + preload + " records, then " + ops + " operations per phase (Dash §6.2 uses 10M + 190M)")) {
      for (String scheme : which) {
        for (int t : threads) {
          List<String> args = new ArrayList<>(List.of("--scheme", scheme, "--durability", durability.name(),
              "--file", pool(name).toString(), "--preload", Long.toString(preload), "--ops", Long.toString(ops),
              "--threads", Integer.toString(t)));
          WorkloadOptions o = WorkloadOptions.parse(args.toArray(String[]::new));
          WorkloadCommand.warmUp(o, log);
          for (PhaseResult r : TableWorkload.run(o, log)) {
            csv.row(scheme, durability.name(), t, r.phase(), r.ops(), r.seconds(), r.mops(), r.flushesPerOp(),
                r.drainsPerOp(), r.loadFactor());
          }
        }
      }
    }
  }

  /** Dash Fig. 11/12: load factor after every {@code step} inserted records. */
  private void loadFactor(String name, List<Series> series, long total) throws IOException {
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

  /** Seed of the first-split runs of {@code dash-segment-size} (seed i uses keys of seed base + i). */
  private static final long SEGMENT_SEED = 1100;

  /**
   * Dash Fig. 11 (§6.6): against the segment size, 1 KB to 128 KB of 256-byte normal buckets
   * (Dash-EH's {@code normalBuckets} 4..512), with 2 and 4 stash buckets: (1) the load factor of
   * one segment when it first has to split: a table of one segment gets random keys until the put
   * that splits it, and the load factor just before is records / ((normal + stash) × 14), per
   * seed; (2) the table's load factor, the mean of samples taken every 1 % of a run of random
   * inserts into an empty table. Only Fig. 11's "Dash" bars (all of balanced insert, displacement
   * and stashing) are measured: this build's Dash-EH has no switch that turns a technique off.
   */
  private void segmentSize(String name) throws IOException {
    int seeds = (int) pick(10, 5, 2);
    long total = pick(10_000_000, 500_000, 4_000);
    long step = total / 100;
    try (Csv csv = csv(name, "series,stash_buckets,normal_buckets,segment_kib,seed,records,load_factor",
        "first split: a one-segment table, random keys until its first split, " + seeds + " seeds; table: " + total
            + " random inserts into an empty table, mean of the load factor every " + step + " (Dash §6.6 Fig. 11: one"
            + " segment, 1..128 KB); the bucketized .. +displacement series use Dash-EH's insertTechniques 0..3, no stash"
            + " (stash_buckets 0), their load factor over the normal buckets")) {
      // Fig. 11's bars without the stash: Dash-EH's insertTechniques 0..3 (not recorded in the pool); a
      // segment of these series uses only its normal buckets, so their load factor is over those
      String[] techniques = {"bucketized", "+probing", "+balanced insert", "+displacement"};
      for (int t = 0; t < techniques.length; t++) {
        for (int normal = 4; normal <= 512; normal *= 2) {
          TableOptions o = TableOptions.scheme("dash-eh").withDurability(durability).withParam("normalBuckets", normal)
              .withParam("insertTechniques", t);
          double kib = normal * 256 / 1024.0;
          double sum = 0;
          for (int seed = 1; seed <= seeds; seed++) {
            long[] at = firstSplit(name, o, SEGMENT_SEED + seed, normal * 14L);
            csv.row("first split (" + techniques[t] + ")", 0, normal, kib, SEGMENT_SEED + seed, at[0], (double) at[0] / (normal * 14L));
            sum += (double) at[0] / (normal * 14L);
          }
          log.printf("%s: %.0f KB segments, %s: load factor at the first split %.3f%n", name, kib, techniques[t], sum / seeds);
        }
      }
      for (int stash : new int[] {2, 4}) {
        for (int normal = 4; normal <= 512; normal *= 2) { // Dash-EH's normalBuckets range: 1 KB .. 128 KB segments
          TableOptions o = TableOptions.scheme("dash-eh").withDurability(durability).withParam("stashBuckets", stash)
              .withParam("normalBuckets", normal);
          double kib = normal * 256 / 1024.0;
          for (int seed = 1; seed <= seeds; seed++) {
            long[] at = firstSplit(name, o, SEGMENT_SEED + seed, (normal + stash) * 14L);
            csv.row("first split (stashBuckets=" + stash + ")", stash, normal, kib, SEGMENT_SEED + seed, at[0],
                (double) at[0] / ((normal + stash) * 14L));
          }
          long[] keys = Keys.range(42, 0, total);
          double sum = 0;
          int samples = 0;
          try (LongHashTable t = create(name, o)) {
            for (long i = 0; i < total; i++) {
              t.put(keys[(int) i], i);
              if ((i + 1) % step == 0) {
                sum += t.loadFactor();
                samples++;
              }
            }
          } finally {
            Files.deleteIfExists(pool(name));
          }
          csv.row("table (stashBuckets=" + stash + ")", stash, normal, kib, 42, total, sum / samples);
          log.printf("%s: %.0f KB segments, %d stash buckets: table load factor %.3f%n", name, kib, stash, sum / samples);
        }
      }
    }
  }

  /**
   * Random keys of {@code seed} into a fresh one-segment table until the put that splits it.
   *
   * @return the records held just before that put
   */
  private long[] firstSplit(String name, TableOptions o, long seed, long slots) throws IOException {
    try (LongHashTable t = create(name, o)) {
      if (t.stats().details().get("segments") != 1) {
        throw new IllegalStateException("dash-segment-size: an empty table has " + t.stats().details().get("segments")
            + " segments, expected 1");
      }
      double last = 0;
      for (long i = 0; i <= slots; i++) {
        t.put(Keys.key(seed, i), i);
        double lf = t.loadFactor();
        if (lf < last) { // the slots doubled: the put split the segment
          return new long[] {i};
        }
        last = lf;
      }
      throw new IllegalStateException("dash-segment-size: " + slots + " records in one segment of " + slots + " slots without a split");
    } finally {
      Files.deleteIfExists(pool(name));
    }
  }

  /** Dash Table 1: open a crash image (the file copied while the table is open) against records. */
  private void recovery(String name, List<String> which, long[] sizes) throws IOException {
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
    long n = pick(40_000_000, 2_000_000, 20_000);
    if (durability == Durability.VOLATILE) {
      log.printf("%s: skipped: a VOLATILE table has no file to recover%n", name);
      return;
    }
    try (Csv csv = csv(name, "scheme,durability,elapsed_ms,mops",
        "load " + n + " records, warm the search path up, copy the pool while open, then open the copy and search present keys"
            + " on one thread; throughput per 10 ms from the start of open (the first row, 0 Mops/s, is when open returned)")) {
      for (String scheme : which) {
        long[] keys = Keys.range(42, 0, n);
        int[] probe = new int[tiny ? 1 << 12 : 1 << 20];
        java.util.SplittableRandom r = new java.util.SplittableRandom(7);
        for (int i = 0; i < probe.length; i++) {
          probe[i] = r.nextInt((int) n);
        }
        Path image = crashImage(name, scheme, n, t -> searchSlices(t, keys, probe, System.nanoTime(), tiny ? 5 : 100, null, scheme));
        try {
          long start = System.nanoTime();
          try (LongHashTable t = PmHash.open(image, TableOptions.any().withDurability(durability))) {
            csv.row(scheme, durability.name(), (System.nanoTime() - start) / 1e6, 0.0); // back online
            searchSlices(t, keys, probe, start, tiny ? 10 : 150, csv, scheme);
          }
        } finally {
          Files.deleteIfExists(image);
        }
      }
    }
  }

  // ---------------------------------------------------------------- group hashing (ICPP 2018)

  /** The key of the paper's {@code RandomNum} trace: uniform random integers, a seed per trace. */
  private static final long GROUP_SEED = 42;

  /** Index of the first key a latency round inserts: far above every fill key. */
  private static final long ROUND_BASE = 1L << 40;

  /**
   * Group hashing Fig. 5 (and, per group size, Fig. 8a): each table is filled to a load factor,
   * then rounds of {@code batch} inserts of new keys, {@code batch} queries of them and {@code
   * batch} deletes of them run (the paper's 1000 each, §4.3); the deletes leave the table as the
   * round found it. The first rounds warm the JIT up and are not recorded; the latency is the mean
   * over the measured rounds (the paper averages five runs). The group table has a fixed size (the
   * paper's 2^23 cells, {@code expand=0}, sized through the initial capacity); Dash-EH gets the
   * same initial capacity and the same records, and its own load factor is in the CSV beside.
   */
  private void groupLatency(String name, List<Series> series, double[] loadFactors) throws IOException {
    long cells = pick(1L << 23, 1L << 20, 1L << 14);
    int batch = (int) pick(1000, 1000, 200);
    int warmup = (int) pick(5, 5, 1);
    int rounds = (int) pick(15, 15, 3);
    try (Csv csv = csv(name, "series,group_size,cells,load_factor,records,table_load_factor,phase,rounds,latency_ns,mean_ns",
        "a table of " + cells + " cells (group: fixed size; dash-eh: the same initial capacity) filled to each load factor,"
            + " then " + warmup + " warm-up and " + rounds + " measured rounds of " + batch + " inserts, " + batch + " queries and "
            + batch + " deletes; latency_ns: the median over the rounds of each round's mean per operation (robust to another"
            + " process taking the core for a round), mean_ns: the mean over all (group hashing §4.3 uses 2^23 cells, 1000 of"
            + " each, the average of 5 runs)")) {
      for (Series s : series) {
        if (!PmHash.schemes().containsKey(s.scheme())) {
          log.printf("%s: %s skipped: not in this build%n", name, s.label());
          continue;
        }
        TableOptions o = s.options(durability).withInitialCapacity(cells * 3 / 4);
        if (s.scheme().equals("group")) {
          o = o.withParam("expand", 0);
        }
        long[] fill = Keys.range(GROUP_SEED, 0, (long) (cells * loadFactors[loadFactors.length - 1]));
        try (LongHashTable t = create(name, o)) {
          long slots = t.stats().slots();
          check(!s.scheme().equals("group") || slots == cells, "group: asked for " + cells + " cells, got " + slots);
          long done = 0;
          for (double lf : loadFactors) {
            long target = (long) (cells * lf);
            for (; done < target; done++) {
              t.put(fill[(int) done], done);
            }
            log.printf("%s: %s at load factor %.2f (%,d records in %,d slots; the table's own load factor %.3f)%n",
                name, s.label(), lf, done, slots, t.loadFactor());
            double[][] ns = latencyRounds(t, batch, warmup, rounds);
            long g = s.scheme().equals("group") ? s.value() : 0;
            for (int p = 0; p < 3; p++) {
              csv.row(s.label(), g, cells, String.valueOf(lf), done, t.loadFactor(), PHASES[p], rounds, median(ns[p]),
                  Arrays.stream(ns[p]).average().orElseThrow());
            }
          }
          if (t.size() != done) {
            throw new IllegalStateException(s.label() + ": the table holds " + t.size() + " records after the rounds, expected " + done);
          }
        } finally {
          Files.deleteIfExists(pool(name));
        }
      }
    }
  }

  private static final String[] PHASES = {"insert", "query", "delete"};

  private static double median(double[] v) {
    double[] c = v.clone();
    Arrays.sort(c);
    return c.length % 2 == 1 ? c[c.length / 2] : (c[c.length / 2 - 1] + c[c.length / 2]) / 2;
  }

  /** Mean ns per insert, query and delete of each measured round ({@code [phase][round]}); checks every result. */
  private static double[][] latencyRounds(LongHashTable t, int batch, int warmup, int rounds) {
    double[][] ns = new double[3][rounds];
    for (int r = 0; r < warmup + rounds; r++) {
      long[] keys = Keys.range(GROUP_SEED, ROUND_BASE + (long) r * batch, ROUND_BASE + (long) (r + 1) * batch);
      long wrong = 0;
      long t0 = System.nanoTime();
      for (int i = 0; i < batch; i++) {
        wrong += t.put(keys[i], i) ? 0 : 1;
      }
      long t1 = System.nanoTime();
      for (int i = 0; i < batch; i++) {
        wrong += t.get(keys[i], -1) == i ? 0 : 1;
      }
      long t2 = System.nanoTime();
      for (int i = 0; i < batch; i++) {
        wrong += t.remove(keys[i]) ? 0 : 1;
      }
      long t3 = System.nanoTime();
      if (wrong != 0) {
        throw new IllegalStateException(t.scheme() + ": " + wrong + " of a round's operations did not do what they should");
      }
      if (r >= warmup) {
        ns[0][r - warmup] = (double) (t1 - t0) / batch;
        ns[1][r - warmup] = (double) (t2 - t1) / batch;
        ns[2][r - warmup] = (double) (t3 - t2) / batch;
      }
    }
    return ns;
  }

  /**
   * Group hashing Fig. 7 and Fig. 8b: space utilisation, the load factor at the first insert that
   * fails, in a fixed-size table ({@code expand=0}: an insert into a full group throws
   * GroupFullException and changes nothing), per group size 64..1024 and per trace. The paper's
   * three traces (RandomNum, Bag-of-Words, Fingerprint) are not here: each "trace" is random keys
   * from its own seed.
   */
  private void groupSpace(String name) throws IOException {
    long cells = pick(1L << 23, 1L << 18, 1L << 14);
    int traces = 3;
    try (Csv csv = csv(name, "series,trace,group_size,cells,records,space_utilisation",
        "a fixed-size table of " + cells + " cells per group size, random keys (" + traces + " seeds in place of the paper's three"
            + " traces) inserted until the first insert fails; space utilisation = records / cells then (group hashing §4.4, §4.5"
            + " uses 2^23..2^25 cells)")) {
      for (int g = 64; g <= 1024; g *= 2) {
        for (int trace = 1; trace <= traces; trace++) {
          TableOptions o = TableOptions.scheme("group").withDurability(durability).withParam("groupSize", g)
              .withParam("expand", 0).withInitialCapacity(cells * 3 / 4);
          try (LongHashTable t = create(name, o)) {
            long slots = t.stats().slots();
            long i = 0;
            for (;; i++) {
              long k = Keys.key(GROUP_SEED + trace, i);
              try {
                t.put(k, i);
              } catch (IllegalStateException full) {
                if (!full.getClass().getSimpleName().equals("GroupFullException")) {
                  throw full;
                }
                break;
              }
              if (i > slots) {
                throw new IllegalStateException("group: " + i + " inserts into " + slots + " cells without a failure");
              }
            }
            if (t.size() != i) {
              throw new IllegalStateException("group: the failed insert changed the table: " + t.size() + " records, expected " + i);
            }
            csv.row("group (groupSize=" + g + ")", "trace " + trace + " (seed " + (GROUP_SEED + trace) + ")", g, slots, i,
                (double) i / slots);
            log.printf("%s: group size %d, trace %d: first failed insert at %,d of %,d cells (%.3f)%n", name, g, trace, i, slots,
                (double) i / slots);
          } finally {
            Files.deleteIfExists(pool(name));
          }
        }
      }
    }
  }

  /**
   * Group hashing Table 3: recovery time against table size. A fixed-size table is filled to load
   * factor 0.5 (timed: the paper compares recovery with this), the pool copied while open (what a
   * crash leaves), and the copy opened: recovery scans every cell (Algorithm 4). Two copies are
   * opened untimed so that the JIT has compiled the scan; three more are timed, and the median is
   * the result (the fastest beside it).
   */
  private void groupRecovery(String name) throws IOException {
    long[] sizes = paper ? new long[] {1L << 23, 1L << 24, 1L << 25, 1L << 26}
        : tiny ? new long[] {1L << 12, 1L << 13} : new long[] {1L << 19, 1L << 20, 1L << 21, 1L << 22};
    if (durability == Durability.VOLATILE) {
      log.printf("%s: skipped: a VOLATILE table has no file to recover%n", name);
      return;
    }
    try (Csv csv = csv(name, "scheme,durability,cells,table_mib,records,fill_ms,recovery_ms,fastest_ms,recovery_percent,records_after",
        "a fixed-size table of C cells (table_mib = C x 16 B, the paper's measure) filled to load factor 0.5 (fill_ms),"
            + " copied while open; copies of it opened 2 times untimed (JIT warm-up), then 3 times timed: recovery_ms is the"
            + " median, fastest_ms the fastest (group hashing Table 3: 128 MB..1 GB)")) {
      for (long cells : sizes) {
        Path file = pool(name);
        Path image = file.resolveSibling(file.getFileName() + ".crash");
        Path warm = file.resolveSibling(file.getFileName() + ".warm");
        long records = cells / 2;
        long[] keys = Keys.range(GROUP_SEED, 0, records);
        double fillMs;
        TableOptions o = TableOptions.scheme("group").withDurability(durability).withParam("expand", 0)
            .withInitialCapacity(cells * 3 / 4);
        try (LongHashTable t = create(name, o)) {
          if (t.stats().slots() != cells) {
            throw new IllegalStateException("group: asked for " + cells + " cells, got " + t.stats().slots());
          }
          long t0 = System.nanoTime();
          for (int i = 0; i < records; i++) {
            t.put(keys[i], i);
          }
          fillMs = (System.nanoTime() - t0) / 1e6;
          Files.copy(file, image, StandardCopyOption.REPLACE_EXISTING);
        } finally {
          Files.deleteIfExists(file);
        }
        try {
          double[] ms = new double[5];
          long after = -1;
          for (int round = 0; round < ms.length; round++) {
            Files.copy(image, warm, StandardCopyOption.REPLACE_EXISTING);
            long t0 = System.nanoTime();
            try (LongHashTable t = PmHash.open(warm, TableOptions.any().withDurability(durability))) {
              ms[round] = (System.nanoTime() - t0) / 1e6;
              after = t.size();
              check(after == records, "group: the crash image holds " + after + " records, expected " + records);
            }
          }
          double[] timed = Arrays.copyOfRange(ms, 2, ms.length);
          double med = median(timed);
          csv.row("group", durability.name(), cells, (double) (cells * 16) / (1 << 20), records, fillMs, med,
              Arrays.stream(timed).min().orElseThrow(), 100 * med / fillMs, after);
          log.printf("%s: %,d cells: fill %.1f ms, recovery %.2f ms (median of 3 after 2 warm-up opens)%n", name, cells, fillMs, med);
        } finally {
          Files.deleteIfExists(image);
          Files.deleteIfExists(warm);
        }
      }
    }
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new IllegalStateException(what);
    }
  }

  // ---------------------------------------------------------------- NVLH

  /**
   * NVLH Fig. 2 and 3: throughput and maximum latency of insert, query and delete against the
   * value size, NVLH against NVDH (the log-free default, and {@code transactions=1}, the paper's
   * transactional NVDH). The paper's 100,000 operations each, into an empty table (so the inserts
   * include every split and rehash, the deletes every merge), through the workload with {@code
   * --latency} and {@code --value-bytes V}: values are blocks of the pool's heap, which is not
   * crash-consistent as a whole (see the workload's help). The paper does not list its value
   * sizes; these are 8 B to 1 KiB. Each series runs once untimed first (JIT warm-up).
   */
  private void nvlhValueSize(String name) throws IOException {
    long ops = pick(100_000, 100_000, 2_000);
    int[] sizes = tiny ? new int[] {8, 64} : new int[] {8, 64, 256, 1024};
    List<Series> series = List.of(Series.of("nvlh"), Series.of("nvdh"), Series.of("nvdh", "transactions", 1));
    try (Csv csv = csv(name, "series,value_bytes,phase,ops,seconds,mops,p999_ns,max_ns,flushes_per_op,drains_per_op",
        ops + " inserts into an empty table, then " + ops + " positive searches, negative searches, deletes (the paper's 100,000);"
            + " values out of line (--value-bytes, not crash-consistent as a whole: every insert also takes an allocator step and"
            + " every delete a free, 4 drains each, the same for every series); latency per operation; one untimed warm-up run"
            + " per series")) {
      for (Series s : series) {
        for (int i = -1; i < sizes.length; i++) {
          int v = sizes[Math.max(0, i)];
          List<String> args = new ArrayList<>(List.of("--scheme", s.scheme(), "--durability", durability.name(),
              "--file", pool(name).toString(), "--preload", "0", "--ops", Long.toString(ops), "--latency",
              "--value-bytes", Integer.toString(v)));
          if (s.param() != null) {
            args.addAll(List.of("--param", s.param() + "=" + s.value()));
          }
          List<PhaseResult> results = TableWorkload.run(WorkloadOptions.parse(args.toArray(String[]::new)), log);
          if (i < 0) {
            continue; // the warm-up run
          }
          for (PhaseResult r : results) {
            csv.row(s.label(), v, r.phase(), r.ops(), r.seconds(), r.mops(), r.latency().percentile(0.999), r.latency().max(),
                r.flushesPerOp(), r.drainsPerOp());
          }
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
    c.comment("parameters: " + parameters + (paper ? " (--paper)" : tiny ? " (tiny: a unit test's sizes)"
        : " (scaled; --paper for the paper's sizes)"));
    c.comment("durability: " + durability + (durability == Durability.PMEM ? "" : " (not persistent memory: DRAM/page cache)"));
    c.comment("pool file system: " + Files.getFileStore(dir).type());
    c.comment("machine: " + Machine.describe());
    c.comment("jdk: " + Runtime.version() + " " + System.getProperty("java.vm.name"));
    c.comment("taken: " + Instant.now().truncatedTo(ChronoUnit.SECONDS));
    c.comment("load average: " + Machine.loadAverage() + " (1, 5, 15 min, at the start; on 2 cores anything above 2 means"
        + " other work was running)");
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
    Experiments e = new Experiments(out, dir, durability, List.copyOf(schemes), paper, false, threads,
        "Experiments " + String.join(" ", args).replace("--dir " + dir, "--dir DIR"), System.err);
    int failed = 0;
    for (String name : names) {
      try {
        e.run(name);
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

    /** @return the 1, 5 and 15 minute load averages from /proc/loadavg, or "unknown" */
    static String loadAverage() {
      try {
        String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
        return f[0] + " " + f[1] + " " + f[2];
      } catch (IOException | UncheckedIOException | ArrayIndexOutOfBoundsException e) {
        return "unknown";
      }
    }

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
