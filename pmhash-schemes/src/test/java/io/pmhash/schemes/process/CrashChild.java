package io.pmhash.schemes.process;

import io.pmhash.core.Durability;
import io.pmhash.core.PoolOptions;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * The child JVM of {@link ProcessCrashTest}: opens (or creates) a table and runs random puts
 * and removes forever, recording each operation in an expected-state journal before it starts
 * ("intent") and after it returns ("ack"). The journal is flushed to the kernel after every
 * record, so a SIGKILL leaves it intact (the page cache survives a process crash). Prints
 * {@code acked N} every 64 acknowledged operations so the parent can choose when to kill
 * without reading a clock.
 *
 * <p>{@code -Dpmhash.backend=llpl} creates the table on that backend (an existing pool opens
 * with the backend its file records).
 *
 * <p>Journal records (big-endian, from DataOutputStream): {@code byte kind (1 = intent, 2 = ack),
 * long op, byte type (1 = put, 2 = remove), long key, long value}.
 */
public final class CrashChild {
  private CrashChild() {}

  /**
   * @param args pool file, scheme, durability, journal file, seed, key range
   */
  public static void main(String[] args) throws Exception {
    Path pool = Path.of(args[0]);
    String scheme = args[1];
    Durability durability = Durability.valueOf(args[2]);
    Path journal = Path.of(args[3]);
    long seed = Long.parseLong(args[4]);
    int keys = Integer.parseInt(args[5]);
    long firstOp = Long.parseLong(args[6]);
    // Optional: halt at the n-th drain inside a structural change, writing fresh keys (so that
    // splits, doublings and resizes keep coming) instead of random puts and removes.
    long haltAt = args.length > 7 ? Long.parseLong(args[7]) : 0;
    // Optional, with haltAt: waves of that many fresh keys inserted then removed again (the table
    // grows and contracts), halting only inside a merge (a class named *Merge).
    int waveKeys = args.length > 8 ? Integer.parseInt(args[8]) : 0;
    PrintStream out = new PrintStream(new FileOutputStream(java.io.FileDescriptor.out), true);
    // A scheme may carry parameters: "nvdh:transactions:1" is NVDH with --param transactions=1.
    String[] spec = scheme.split(":");
    TableOptions options = TableOptions.scheme(spec[0]).withDurability(durability);
    for (int i = 1; i + 1 < spec.length; i += 2) {
      options = options.withParam(spec[i], Long.parseLong(spec[i + 1]));
    }
    if (haltAt > 0) {
      options = options.withPoolOptions(PoolOptions.defaults().withDurability(Durability.PROCESS)
          .withPersistence(() -> new HaltInStructuralChange(haltAt, waveKeys > 0 ? "Merge" : "Split|Merge|Resize")));
    }
    String backend = System.getProperty("pmhash.backend", "");
    if (!backend.isEmpty()) {
      options = options.withBackend(backend);
    }
        LongHashTable t = Files.exists(pool) ? PmHash.open(pool, options) : PmHash.create(pool, options);
    SplittableRandom rnd = new SplittableRandom(seed);
    try (FileOutputStream file = new FileOutputStream(journal.toFile(), true);
        DataOutputStream log = new DataOutputStream(new BufferedOutputStream(file, 64))) {
      out.println("ready");
      for (long op = firstOp; ; op++) {
        long key;
        boolean put;
        if (waveKeys > 0) {
          long wave = op / (2L * waveKeys);
          long i = op % (2L * waveKeys);
          key = (wave * waveKeys + i % waveKeys + 1) * 0xBF58476D1CE4E5B9L;
          put = i < waveKeys;
        } else {
          key = haltAt > 0 ? (op + 1) * 0xBF58476D1CE4E5B9L : rnd.nextInt(keys) * 0x9E3779B97F4A7C15L;
          put = haltAt > 0 || rnd.nextInt(3) != 0;
        }
        long value = put ? rnd.nextLong() : 0;
        write(log, 1, op, put, key, value);
        if (put) {
          t.put(key, value);
        } else {
          t.remove(key);
        }
        write(log, 2, op, put, key, value);
        if ((op & 63) == 63) {
          out.println("acked " + op);
        }
      }
    }
  }

  private static void write(DataOutputStream log, int kind, long op, boolean put, long key, long value) throws Exception {
    log.writeByte(kind);
    log.writeLong(op);
    log.writeByte(put ? 1 : 2);
    log.writeLong(key);
    log.writeLong(value);
    log.flush();
  }
}
