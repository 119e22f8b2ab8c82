package io.pmhash.jmh.workload;

import io.pmhash.core.Durability;
import java.nio.file.Path;
import java.util.Locale;

/** Command-line options of {@link WorkloadCommand}; {@link #parse} explains every error. */
record WorkloadOptions(
    String scheme,
    Durability durability,
    Path file,
    boolean keep,
    long preload,
    long ops,
    int threads,
    long seed,
    int recordBytes,
    boolean csv) {

  static final String USAGE = """
      usage: ./pmhash workload [options]
        --scheme NAME        what to run: pool (allocate, write, persist, publish, read, free,
                             reopen). The hash-table schemes join as they land.
        --durability MODE    PMEM | PMEM_EMULATED | MSYNC | PROCESS | VOLATILE | AUTO
                             (default PMEM_EMULATED: the flush instructions of PM on any file)
        --file PATH          pool file (default: pmhash-workload.pool in the temp directory,
                             deleted before and after the run unless --keep)
        --keep               keep the pool file afterwards
        --preload N          records written before the measured phases (default 0)
        --ops N              operations per measured phase (default 2000000)
        --threads T          worker threads (default 1)
        --seed S             seed of the key generator (default 42)
        --record-bytes B     bytes per record for the pool workload, 16..4096 (default 32)
        --csv                one machine-readable line per phase on stdout:
                             scheme,durability,threads,phase,ops,seconds,mops,flushes_per_op,
                             drains_per_op,load_factor
      """;

  static WorkloadOptions parse(String[] args) {
    String scheme = "pool";
    Durability durability = Durability.PMEM_EMULATED;
    Path file = Path.of(System.getProperty("java.io.tmpdir"), "pmhash-workload.pool");
    boolean keep = false;
    long preload = 0;
    long ops = 2_000_000;
    int threads = 1;
    long seed = 42;
    int recordBytes = 32;
    boolean csv = false;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      switch (a) {
        case "--keep" -> keep = true;
        case "--csv" -> csv = true;
        case "-h", "--help" -> throw new UsageException(null);
        case "--scheme" -> scheme = value(args, ++i, a);
        case "--durability" -> {
          String v = value(args, ++i, a);
          try {
            durability = Durability.valueOf(v.toUpperCase(Locale.ROOT));
          } catch (IllegalArgumentException e) {
            throw new UsageException("--durability " + v + " is not a mode; use one of PMEM, PMEM_EMULATED, MSYNC, PROCESS, VOLATILE, AUTO");
          }
        }
        case "--file" -> file = Path.of(value(args, ++i, a));
        case "--preload" -> preload = number(args, ++i, a, 0, Long.MAX_VALUE / 2);
        case "--ops" -> ops = number(args, ++i, a, 1, Long.MAX_VALUE / 2);
        case "--threads" -> threads = (int) number(args, ++i, a, 1, 1024);
        case "--seed" -> seed = number(args, ++i, a, Long.MIN_VALUE, Long.MAX_VALUE);
        case "--record-bytes" -> recordBytes = (int) number(args, ++i, a, 16, 4096);
        default -> throw new UsageException("unknown option " + a);
      }
    }
    return new WorkloadOptions(scheme, durability, file, keep, preload, ops, threads, seed, recordBytes, csv);
  }

  private static String value(String[] args, int i, String option) {
    if (i >= args.length) {
      throw new UsageException(option + " needs a value");
    }
    return args[i];
  }

  private static long number(String[] args, int i, String option, long min, long max) {
    String v = value(args, i, option).replace("_", "");
    long n;
    try {
      long scale = 1;
      char last = Character.toUpperCase(v.charAt(v.length() - 1));
      if (last == 'K' || last == 'M' || last == 'G') {
        scale = last == 'K' ? 1_000 : last == 'M' ? 1_000_000 : 1_000_000_000;
        v = v.substring(0, v.length() - 1);
      }
      n = Math.multiplyExact(Long.parseLong(v), scale);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new UsageException(option + " " + args[i] + " is not a number (suffixes K, M, G allowed)");
    }
    if (n < min || n > max) {
      throw new UsageException(option + " " + n + " is out of range " + min + ".." + max);
    }
    return n;
  }

  /** A bad command line; the message says what was wrong. */
  static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }
}
