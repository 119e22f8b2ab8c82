package io.pmhash.llpl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.log.Tx;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Core's transactions ({@code UndoLog}/{@code Tx}) on an llpl pool run in PMDK's undo log and
 * allocate and free through PMDK ({@code pmemobj_tx_xalloc}/{@code pmemobj_tx_xfree}): a commit
 * keeps, a close without commit restores (PMDK's abort: ranges, allocation and free), snapshots
 * and allocations do not use the lane (a snapshot larger than the lane fits), and a child JVM
 * halted inside a transaction, on either side of PMDK's commit point, reopens to all of it or
 * none of it; whether a block is allocated is asked of PMDK by a fresh {@code
 * pmemobj_first}/{@code pmemobj_next} walk. The crash simulator cannot see PMDK's
 * log; the halts here are process crashes in PROCESS mode (every store made before the halt
 * survives, the page cache holds it), not power failures: they do not show what a torn or
 * unflushed line would do.
 */
class LlplTransactionTest {
  static final int WORDS = 8;
  static final long OLD = 1000;
  static final long NEW = 2000;
  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;

  @TempDir Path dir;

  static PoolOptions llpl(int lanes) {
    return PoolOptions.defaults().withScheme("tx-test", 1).withBackend("llpl").withDurability(Durability.PROCESS)
        .withGeometry(lanes, 1024, 64 << 10).withInitialSize(1).withBackendAllocation(8L << 20);
  }

  /** Publishes a zeroed PMDK block of {@code size} bytes at root {@code root} ({@code pmemobj_xreserve}/{@code _publish}). */
  static long block(Pool pool, long size, int root) {
    SchemeAllocator a = pool.schemeAllocator();
    SchemeAllocator.Reserved r = a.reserve(size);
    pool.memory().asSlice(r.offset(), size).fill((byte) 0);
    pool.persistence().persist(r.offset(), size);
    a.publish(r, pool.rootWord(root));
    return r.offset();
  }

  /** Whether PMDK holds an object of pmhash's type at {@code block}: a fresh walk of its heap, not the index. */
  static boolean pmdkHas(Pool pool, long block) {
    return ((PmdkAllocation) pool.schemeAllocator()).walk().containsKey(block);
  }

  @Test
  void commitKeepsAbortRestoresAndSnapshotsLeaveTheLane() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), llpl(2))) {
      assertNotNull(pool.undoLog().backendTransactions(), "an llpl pool's transactions are the backend's");
      assertTrue(pool.undoLog().backendTransactions().describe().contains("PMDK"));
      SchemeAllocator a = pool.schemeAllocator();
      long b = block(pool, 256, 0);
      long toFree = block(pool, 48, 1);
      long allocated;
      try (Tx tx = pool.undoLog().begin()) {
        tx.snapshot(b, 16);
        assertEquals(0, tx.bytesUsed(), "the snapshot is in PMDK's log, not in the lane");
        pool.memory().set(U64, b, 1);
        allocated = tx.alloc(100);
        assertEquals(0, tx.bytesUsed(), "the allocation is PMDK's: nothing in the lane");
        assertTrue(allocated < pool.headerOffset() || allocated >= pool.size(), "a PMDK object, outside the pool block");
        pool.memory().set(U64, allocated, 5);
        pool.memory().set(U64, b + 8, allocated);
        tx.free(toFree);
        assertTrue(a.owned(toFree), "a free takes effect at commit");
        assertFalse(a.owned(allocated), "an allocation takes effect at commit");
        tx.commit();
      }
      assertTrue(a.owned(allocated));
      assertFalse(a.owned(toFree));
      assertTrue(pmdkHas(pool, allocated), "PMDK holds the allocated object");
      assertFalse(pmdkHas(pool, toFree), "PMDK freed the other");
      assertTrue(a.blockSize(allocated) >= 100);
      assertEquals(1, pool.memory().get(U64, b));
      assertEquals(5, pool.memory().get(U64, allocated));

      long aborted;
      try (Tx tx = pool.undoLog().begin()) {
        tx.snapshot(b, 16);
        pool.memory().set(U64, b, 2);
        aborted = tx.alloc(100);
        pool.memory().set(U64, b + 8, aborted);
        tx.free(allocated);
        // closed without commit: PMDK's abort restores the range, the allocation and the free
      }
      assertEquals(1, pool.memory().get(U64, b), "rolled back by PMDK");
      assertEquals(allocated, pool.memory().get(U64, b + 8));
      assertTrue(a.owned(allocated), "the free did not happen");
      assertFalse(a.owned(aborted), "the allocation did not happen");
      assertTrue(pmdkHas(pool, allocated), "PMDK still holds the block whose free was aborted");
      assertFalse(pmdkHas(pool, aborted), "PMDK's abort released the allocation");
      assertEquals(2, pool.undoLog().begun());
      assertThrows(IllegalArgumentException.class, () -> {
        try (Tx tx = pool.undoLog().begin()) {
          tx.free(aborted);
        }
      }, "a block PMDK does not hold cannot be freed");
    }
  }

  @Test
  void aSnapshotLargerThanTheLaneFitsInPmdksLog() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), llpl(1))) {
      int big = 16 * pool.undoLog().capacityBytes();
      long b = block(pool, big, 0);
      for (long i = 0; i < big; i += 8) {
        pool.memory().set(U64, b + i, i);
      }
      try (Tx tx = pool.undoLog().begin()) {
        tx.snapshot(b, big);
        pool.memory().asSlice(b, big).fill((byte) 0x55);
      }
      for (long i = 0; i < big; i += 8) {
        assertEquals(i, pool.memory().get(U64, b + i), "restored word at " + i);
      }
      try (Tx tx = pool.undoLog().begin()) {
        tx.snapshot(b, big);
        pool.memory().asSlice(b, big).fill((byte) 0x55);
        tx.commit();
      }
      assertEquals(0x5555555555555555L, pool.memory().get(U64, b + big - 8));
    }
  }

  @Test
  void aNestedOrVirtualThreadBeginIsRefusedAndGivesItsLaneBack() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), llpl(2))) {
      long b = block(pool, 64, 0);
      try (Tx outer = pool.undoLog().begin()) {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> pool.undoLog().begin());
        assertTrue(e.getMessage().contains("do not nest"), e.getMessage());
        outer.snapshot(b, 8);
        pool.memory().set(U64, b, 7);
        // the refused begin gave its lane back: another thread gets the second lane now
        assertAnotherThreadGetsALane(pool);
        outer.commit();
      }
      assertEquals(7, pool.memory().get(U64, b));

      AtomicReference<Throwable> thrown = new AtomicReference<>();
      Thread.ofVirtual().start(() -> {
        try (Tx tx = pool.undoLog().begin()) {
          tx.commit();
        } catch (Throwable t) {
          thrown.set(t);
        }
      }).join();
      assertTrue(thrown.get() instanceof IllegalStateException, String.valueOf(thrown.get()));
      assertTrue(thrown.get().getMessage().contains("platform thread"), thrown.get().getMessage());
      try (Tx tx = pool.undoLog().begin()) {
        assertAnotherThreadGetsALane(pool); // the virtual thread's lane was given back too
        tx.commit();
      }
    }
  }

  private static void assertAnotherThreadGetsALane(Pool pool) throws Exception {
    CompletableFuture<Long> other = CompletableFuture.supplyAsync(() -> {
      try (Tx tx = pool.undoLog().begin()) {
        tx.commit();
        return (long) tx.laneIndex();
      }
    });
    assertTrue(other.get(30, TimeUnit.SECONDS) >= 0);
  }

  /**
   * A child JVM halted inside a transaction that allocated (after {@code pmemobj_tx_xalloc}),
   * linked the block and freed another: {@code body} (stores made, no commit), {@code before} (in
   * the commit, the allocated block flushed, just before {@code pmemobj_tx_commit}), {@code after}
   * (just after it, before {@code pmemobj_tx_end}), {@code committed} (after {@code Tx.commit}
   * returned). The first two reopen to the old state: PMDK's recovery at {@code pmemobj_open}
   * rolls back the ranges, the allocation (a fresh walk of PMDK's heap does not find the block)
   * and the free (the other block is still there); the last two to the new (linked and allocated,
   * the other freed).
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"body", "before", "after", "committed"})
  void aChildHaltedInATransactionReopensToAllOrNothing(String stage) throws Exception {
    Path file = dir.resolve("crash.pool");
    long block;
    long toFree;
    try (Pool pool = Pool.create(file, llpl(2))) {
      block = block(pool, WORDS * 8L, 0);
      toFree = block(pool, 48, 1);
      for (int i = 0; i < WORDS; i++) {
        pool.memory().set(U64, block + 8L * i, OLD + i);
      }
      pool.persistence().persist(block, WORDS * 8L);
    }
    Process child = child(file, stage);
    String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    String err = new String(child.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(child.waitFor(120, TimeUnit.SECONDS));
    int expectedExit = switch (stage) {
      case "body" -> 76;
      case "before" -> 77;
      case "after" -> 78;
      default -> 79;
    };
    assertEquals(expectedExit, child.exitValue(), "the child halted where asked; stderr: " + err);
    long allocated = Long.parseLong(out.lines().reduce((x, y) -> y).orElseThrow());
    boolean committed = stage.equals("after") || stage.equals("committed");
    try (Pool pool = Pool.open(file, PoolOptions.defaults().withDurability(Durability.PROCESS))) {
      assertFalse(pool.lastShutdownClean());
      SchemeAllocator a = pool.schemeAllocator();
      for (int i = 0; i < WORDS; i++) {
        long expected = committed ? (i == 1 ? allocated : NEW + i) : OLD + i;
        assertEquals(expected, pool.memory().get(U64, block + 8L * i), stage + ": word " + i);
      }
      assertEquals(committed, pmdkHas(pool, allocated), stage + ": PMDK holds the allocated block iff committed");
      assertEquals(!committed, pmdkHas(pool, toFree), stage + ": PMDK freed the other block iff committed");
      assertEquals(committed, a.owned(allocated), stage + ": the allocated block is owned iff committed");
      assertEquals(!committed, a.owned(toFree), stage + ": the freed block is free iff committed");
      assertEquals(2, a.blocksOwned(), stage + ": nothing leaked: root 0's block and one other");
      if (committed) {
        assertEquals(4242, pool.memory().get(U64, allocated));
      }
      // the pool keeps working: a new transaction commits
      try (Tx tx = pool.undoLog().begin()) {
        tx.snapshot(block, 8);
        pool.memory().set(U64, block, 3);
        tx.commit();
      }
      assertEquals(3, pool.memory().get(U64, block));
    }
  }

  private static Process child(Path file, String stage) throws Exception {
    String java = ProcessHandle.current().info().command().orElseThrow();
    String halt = stage.equals("before") || stage.equals("after") ? stage : "";
    // java.io.tmpdir: llpl's copy of its native library, left behind by a halted JVM (docs/llpl.md)
    return new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Djava.io.tmpdir=" + file.toAbsolutePath().getParent(),
        "-Dpmhash.llpl.haltInCommit=" + halt,
        "-cp", System.getProperty("java.class.path"), LlplTxChild.class.getName(), file.toString(), stage).start();
  }
}
