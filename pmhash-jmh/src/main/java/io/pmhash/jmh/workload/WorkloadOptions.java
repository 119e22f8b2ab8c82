package io.pmhash.jmh.workload;

import io.pmhash.core.Durability;
import io.pmhash.map.PmHash;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Command-line options of {@link WorkloadCommand}; {@link #parse} explains every error.
 *
 * <p>{@code scheme} is the scheme of one run; {@code schemes} every scheme {@code --scheme} named
 * (the first is {@code scheme}), run {@code rounds} times each by {@link Rounds}.
 */
record WorkloadOptions(
    String scheme,
    List<String> schemes,
    int rounds,
    Durability durability,
    Path file,
    boolean keep,
    long preload,
    long ops,
    int threads,
    long seed,
    long initialCapacity,
    Map<String, Long> params,
    int recordBytes,
    int keyBytes,
    int valueBytes,
    boolean csv,
    boolean latency,
    boolean freshOpen,
    boolean warmup) {

  static final String POOL = "pool";

  static String usage() {
    return """
        usage: ./pmhash workload [options]
          --scheme NAME        %spool (the core alone: allocate, persist,
                               publish, read, free). Default: %s
                               NAME,NAME,...: several table schemes, one after another in
                               one JVM (with --rounds, compared round by round)
          --rounds R           run the workload R times (default 1), each on a new pool; with
                               several schemes their order alternates from round to round.
                               Ends with each phase's median and range, and each scheme's
                               ratio to the first one's, round by round: runs on a busy or
                               virtual machine drift between runs, and a comparison inside
                               one process, alternating, is the one that holds
          --param NAME=VALUE   a scheme parameter (repeatable), e.g. --param stashBuckets=4
          --durability MODE    PMEM | PMEM_EMULATED | MSYNC | PROCESS | VOLATILE | AUTO
                               (default PMEM_EMULATED: the flush instructions of PM on any file)
          --file PATH          pool file (default: pmhash-workload.pool in the temp directory,
                               deleted before and after the run unless --keep)
          --keep               keep the pool file afterwards
          --preload N          keys inserted before the measured phases (default 1M)
          --ops M              operations per measured phase (default 2M)
          --threads T          worker threads (default 1)
          --seed S             seed of the key generator (default 42)
          --initial-capacity N records the table is sized for at create (default 0: it grows)
          --record-bytes B     bytes per record of the pool workload, 16..4096 (default 32)
          --key-bytes K        0 (default): 8-byte keys and values inline (LongHashTable);
                               8..1024: K-byte keys and 8-byte values through a
                               PmHashMap<byte[], byte[]> in the scheme's pointer mode
          --value-bytes V      0 (default): 8-byte values inline; 8..65536 (a multiple of 8): a
                               value is a V-byte block of the pool's heap and the table maps
                               the 8-byte key to the block's offset (any scheme; for NVLH's Fig. 2-3).
                               NOT crash-consistent as a whole: a block is owned before the
                               insert that links it and freed after the delete that unlinks
                               it, so a crash between the two leaks that block (the table
                               itself stays consistent and never points at a free block)
          --latency            time every operation of the measured phases of a table scheme
                               (System.nanoTime per call, a histogram per thread): adds p99.9
                               and max latency per phase to the report (and the columns
                               p999_ns,max_ns to --csv); off by default, so the default loops
                               are untimed
          --fresh-open         also open the crash copy (the file as a kill -9 leaves it) in a
                               new JVM, as a restarted service would: reports that JVM's
                               first open, class loading and the JIT's start included,
                               beside the in-process reopen (a table scheme on a file)
          --no-warmup          skip the warm-up: by default each scheme first runs the same
                               workload untimed at a tenth of --preload and --ops, on its own
                               file beside --file (FILE.warmup, deleted afterwards), so that the
                               JIT has compiled every operation before it is timed. Without it,
                               each phase also times the compilation of its operation's code
                               (a cold JVM; docs/persistence.md, "Warm-up")
          --csv                one machine-readable line per phase on stdout:
                               scheme,durability,threads,phase,ops,seconds,mops,flushes_per_op,
                               drains_per_op,load_factor[,p999_ns,max_ns]
        Numbers measured on DRAM or tmpfs are not persistent-memory numbers.
        """.formatted(PmHash.schemes().isEmpty() ? "" : String.join(", ", PmHash.schemes().keySet()) + ", or ",
            defaultScheme());
  }

  static String defaultScheme() {
    return PmHash.schemes().containsKey("dash-eh") ? "dash-eh" : POOL;
  }

  static WorkloadOptions parse(String[] args) {
    String scheme = defaultScheme();
    int rounds = 1;
    Durability durability = Durability.PMEM_EMULATED;
    Path file = Path.of(System.getProperty("java.io.tmpdir"), "pmhash-workload.pool");
    boolean keep = false;
    long preload = 1_000_000;
    long ops = 2_000_000;
    int threads = 1;
    long seed = 42;
    long initialCapacity = 0;
    Map<String, Long> params = new LinkedHashMap<>();
    int recordBytes = 32;
    int keyBytes = 0;
    int valueBytes = 0;
    boolean csv = false;
    boolean latency = false;
    boolean freshOpen = false;
    boolean warmup = true;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      switch (a) {
        case "--keep" -> keep = true;
        case "--csv" -> csv = true;
        case "--latency" -> latency = true;
        case "--fresh-open" -> freshOpen = true;
        case "--no-warmup" -> warmup = false;
        case "-h", "--help" -> throw new UsageException(null);
        case "--scheme" -> scheme = value(args, ++i, a);
        case "--rounds" -> rounds = (int) number(args, ++i, a, 1, 1000);
        case "--param" -> {
          String v = value(args, ++i, a);
          int eq = v.indexOf('=');
          if (eq <= 0) {
            throw new UsageException("--param " + v + " is not NAME=VALUE");
          }
          params.put(v.substring(0, eq), parseNumber(v.substring(eq + 1), a + " " + v));
        }
        case "--durability" -> {
          String v = value(args, ++i, a);
          try {
            durability = Durability.valueOf(v.toUpperCase(Locale.ROOT));
          } catch (IllegalArgumentException e) {
            throw new UsageException("--durability " + v + " is not a mode; use one of PMEM, PMEM_EMULATED, MSYNC, PROCESS, VOLATILE, AUTO");
          }
        }
        case "--file" -> file = Path.of(value(args, ++i, a));
        case "--preload" -> preload = number(args, ++i, a, 0, 1L << 31);
        case "--ops" -> ops = number(args, ++i, a, 1, 1L << 30);
        case "--threads" -> threads = (int) number(args, ++i, a, 1, 1024);
        case "--seed" -> seed = number(args, ++i, a, Long.MIN_VALUE, Long.MAX_VALUE);
        case "--initial-capacity" -> initialCapacity = number(args, ++i, a, 0, 1L << 40);
        case "--record-bytes" -> recordBytes = (int) number(args, ++i, a, 16, 4096);
        case "--key-bytes" -> {
          keyBytes = (int) number(args, ++i, a, 0, 1024);
          if (keyBytes > 0 && keyBytes < 8) {
            throw new UsageException("--key-bytes " + keyBytes + ": pointer-mode keys are 8..1024 bytes (0 for inline keys)");
          }
        }
        case "--value-bytes" -> {
          valueBytes = (int) number(args, ++i, a, 0, 65536);
          if (valueBytes > 0 && (valueBytes < 8 || valueBytes % 8 != 0)) {
            throw new UsageException("--value-bytes " + valueBytes + ": out-of-line values are a multiple of 8 in 8..65536 bytes"
                + " (0 for inline values)");
          }
        }
        default -> throw new UsageException("unknown option " + a);
      }
    }
    List<String> schemes = schemeList(scheme);
    for (String s : schemes) {
      if (!s.equals(POOL) && !PmHash.schemes().containsKey(s)) {
        throw new UsageException("unknown scheme '" + s + "'; available: " + String.join(", ", PmHash.schemes().keySet()) + (PmHash.schemes().isEmpty() ? "" : ", ") + POOL);
      }
    }
    scheme = schemes.get(0);
    if (schemes.size() > 1 || rounds > 1) {
      if (schemes.contains(POOL)) {
        throw new UsageException("--rounds and a list of schemes run the table workload; the " + POOL
            + " workload runs alone: use --scheme " + POOL + " without them");
      }
      if (keep) {
        throw new UsageException("--keep keeps one run's pool file, but each run of --rounds or of a list of schemes"
            + " starts by deleting it: run the one you want to keep on its own");
      }
    }
    if (scheme.equals(POOL) && valueBytes > 0) {
      throw new UsageException("--value-bytes needs a table scheme; the pool workload sizes its records with --record-bytes");
    }
    if (freshOpen && (scheme.equals(POOL) || durability == Durability.VOLATILE)) {
      throw new UsageException("--fresh-open reopens a table's pool file in a new JVM: it needs a table scheme (not "
          + POOL + ") and a durability with a file (not VOLATILE)");
    }
    if (keyBytes > 0 && valueBytes > 0) {
      throw new UsageException("--key-bytes and --value-bytes cannot be combined: pointer mode keeps 8-byte values,"
          + " --value-bytes uses the inline table; choose one");
    }
    return new WorkloadOptions(scheme, List.copyOf(schemes), rounds, durability, file, keep, preload, ops, threads, seed,
        initialCapacity, Map.copyOf(params), recordBytes, keyBytes, valueBytes, csv, latency, freshOpen, warmup);
  }

  /** These options with {@code s} as the scheme of the run (one of {@link #schemes}). */
  WorkloadOptions forScheme(String s) {
    return new WorkloadOptions(s, schemes, rounds, durability, file, keep, preload, ops, threads, seed,
        initialCapacity, params, recordBytes, keyBytes, valueBytes, csv, latency, freshOpen, warmup);
  }

  /**
   * The options of this run's warm-up ({@link WorkloadCommand#warmUp}): the same scheme, durability,
   * threads, key and value sizes and parameters at a tenth of the keys and of the initial capacity,
   * once, on its own file beside {@link #file} ({@code FILE.warmup}, deleted afterwards), without
   * {@code --csv} or {@code --fresh-open}.
   */
  WorkloadOptions forWarmup() {
    Path warmupFile = file.resolveSibling(file.getFileName() + ".warmup");
    return new WorkloadOptions(scheme, List.of(scheme), 1, durability, warmupFile, false, preload / 10, Math.max(1, ops / 10),
        threads, seed, initialCapacity / 10, params, recordBytes, keyBytes, valueBytes, false, latency, false, false);
  }

  /** {@code --scheme}'s value split at commas: at least one name, none empty, none twice. */
  private static List<String> schemeList(String value) {
    List<String> names = new ArrayList<>();
    for (String part : value.split(",", -1)) {
      String name = part.trim();
      if (name.isEmpty()) {
        throw new UsageException("--scheme " + value + " has an empty name; separate schemes with single commas");
      }
      if (names.contains(name)) {
        throw new UsageException("--scheme " + value + " names " + name + " twice");
      }
      names.add(name);
    }
    return names;
  }

  private static String value(String[] args, int i, String option) {
    if (i >= args.length) {
      throw new UsageException(option + " needs a value");
    }
    return args[i];
  }

  private static long number(String[] args, int i, String option, long min, long max) {
    long n = parseNumber(value(args, i, option), option + " " + args[i]);
    if (n < min || n > max) {
      throw new UsageException(option + " " + n + " is out of range " + min + ".." + max);
    }
    return n;
  }

  private static long parseNumber(String text, String what) {
    String v = text.replace("_", "");
    try {
      long scale = 1;
      char last = Character.toUpperCase(v.charAt(v.length() - 1));
      if (last == 'K' || last == 'M' || last == 'G') {
        scale = last == 'K' ? 1_000 : last == 'M' ? 1_000_000 : 1_000_000_000;
        v = v.substring(0, v.length() - 1);
      }
      return Math.multiplyExact(Long.parseLong(v), scale);
    } catch (NumberFormatException | ArithmeticException | StringIndexOutOfBoundsException e) {
      throw new UsageException(what + " is not a number (suffixes K, M, G allowed)");
    }
  }

  /** A bad command line; the message says what was wrong (null: just show the usage). */
  static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }
}
