package io.pmhash.jmh.workload;

import io.pmhash.core.Durability;
import io.pmhash.core.Persistence;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.alloc.Allocator;
import io.pmhash.core.alloc.AllocatorStats;
import io.pmhash.core.alloc.Publication;
import io.pmhash.core.alloc.Reservation;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The pool workload: the core's persistent operations with no hash table on top. A table of
 * {@code n} 8-byte slots (one huge block, published to root 0) receives one record per slot:
 *
 * <ol>
 *   <li><b>publish</b>: reserve a record, write {key, value, padding}, persist it, publish it
 *       into its slot (one redo step: the block owned and the slot set, atomically);
 *   <li><b>read</b>: load each slot (acquire) and check the record's key;
 *   <li><b>free</b>: clear each slot and free its record in one redo step.
 * </ol>
 *
 * Its numbers are the cost of the allocator and of the persist points per durability mode on
 * this machine, the floor under every scheme's structural changes.
 */
final class PoolWorkload {
  private static final VarHandle SLOT = ValueLayout.JAVA_LONG.varHandle().withInvokeExactBehavior();
  static final int TABLE_ROOT = 0;

  private PoolWorkload() {}

  static List<PhaseResult> run(WorkloadOptions o, PrintStream human) throws IOException {
    long records = o.preload() + o.ops();
    PoolOptions options = PoolOptions.defaults()
        .withScheme("pool-workload", 1, o.recordBytes())
        .withDurability(o.durability())
        .withInitialSize(Math.max(64L << 20, records * (8 + ((o.recordBytes() + 15) & -16)) * 5 / 4));
    human.printf("pmhash workload: scheme pool, %,d records of %d bytes (%,d preloaded), %d thread%s%n",
        records, o.recordBytes(), o.preload(), o.threads(), o.threads() == 1 ? "" : "s");
    boolean file = o.durability() != Durability.VOLATILE;
    if (file) {
      Files.deleteIfExists(o.file());
    }
    List<PhaseResult> results = new ArrayList<>();
    try (Pool pool = file ? Pool.create(o.file(), options) : Pool.createVolatile(options)) {
      human.printf("  pool: %s, durability %s, persistence: %s%n",
          pool.path() == null ? "anonymous memory" : pool.path(), pool.durability(), pool.persistence().describe());
      Persistence persistence = pool.persistence();
      long table = createTable(pool, records);
      int threads = o.threads();
      int bytes = o.recordBytes();
      if (o.preload() > 0) {
        PhaseRunner.run("preload", 0, o.preload(), threads, persistence, human,
            (from, to, p) -> publish(pool, table, from, to, bytes, p));
      }
      long lo = o.preload();
      results.add(PhaseRunner.run("publish", lo, records, threads, persistence, human,
          (from, to, p) -> publish(pool, table, from, to, bytes, p)));
      LongAdder wrong = new LongAdder();
      results.add(PhaseRunner.run("read", lo, records, threads, persistence, human,
          (from, to, p) -> wrong.add(read(pool, table, from, to, p))));
      if (wrong.sum() != 0) {
        throw new IllegalStateException("wrong result: " + wrong.sum() + " records read back wrong");
      }
      AllocatorStats heap = pool.allocator().stats();
      results.add(PhaseRunner.run("free", lo, records, threads, persistence, human,
          (from, to, p) -> free(pool, table, from, to, p)));
      human.printf("  heap at the peak: %,d chunks in use (%,d bytes), %,d bytes owned in %,d blocks: %.1f bytes per record%n",
          heap.chunksInUse(), heap.chunksInUse() * pool.chunkSize(), heap.bytesOwned(), heap.blocksOwned(),
          (double) heap.chunksInUse() * pool.chunkSize() / records);
    }
    if (file) {
      long t0 = System.nanoTime();
      try (Pool pool = Pool.open(o.file(), options)) {
        human.printf("  reopen: %.2f ms (header validation, lane recovery; clean shutdown: %s)%n",
            (System.nanoTime() - t0) / 1e6, pool.lastShutdownClean());
      }
      if (!o.keep()) {
        Files.deleteIfExists(o.file());
      }
    }
    return results;
  }

  /** Allocates the slot table and publishes it to root 0. */
  static long createTable(Pool pool, long slots) {
    Allocator alloc = pool.allocator();
    Reservation table = alloc.reserve(slots * 8);
    MemorySegment m = pool.memory();
    m.asSlice(table.offset(), slots * 8).fill((byte) 0);
    pool.persistence().persist(table.offset(), slots * 8);
    alloc.publish(table, pool.rootWord(TABLE_ROOT));
    return table.offset();
  }

  static void publish(Pool pool, long table, long from, long to, int recordBytes, Progress progress) {
    Allocator alloc = pool.allocator();
    Persistence persistence = pool.persistence();
    for (long i = from; i < to; i++) {
      Reservation r = alloc.reserve(recordBytes);
      MemorySegment m = pool.memory();
      long at = r.offset();
      m.set(ValueLayout.JAVA_LONG, at, i);
      m.set(ValueLayout.JAVA_LONG, at + 8, ~i);
      // PERSIST: the record is durable before the redo step that publishes it into its slot.
      persistence.persist(at, recordBytes);
      alloc.publish(r, table + 8 * i);
      if ((i & 4095) == 4095) {
        progress.add(4096);
      }
    }
    progress.add((to - from) & 4095);
  }

  static long read(Pool pool, long table, long from, long to, Progress progress) {
    long wrong = 0;
    for (long i = from; i < to; i++) {
      MemorySegment m = pool.memory();
      long record = (long) SLOT.getAcquire(m, table + 8 * i);
      if (record == 0 || m.get(ValueLayout.JAVA_LONG, record) != i) {
        wrong++;
      }
      if ((i & 4095) == 4095) {
        progress.add(4096);
      }
    }
    progress.add((to - from) & 4095);
    return wrong;
  }

  static void free(Pool pool, long table, long from, long to, Progress progress) {
    Allocator alloc = pool.allocator();
    for (long i = from; i < to; i++) {
      long slot = table + 8 * i;
      long record = (long) SLOT.getAcquire(pool.memory(), slot);
      try (Publication p = alloc.begin()) {
        p.set(slot, 0).deferFree(record).commit();
      }
      if ((i & 4095) == 4095) {
        progress.add(4096);
      }
    }
    progress.add((to - from) & 4095);
  }
}
