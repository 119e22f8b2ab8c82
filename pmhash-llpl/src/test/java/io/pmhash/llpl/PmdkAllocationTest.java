package io.pmhash.llpl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Durability;
import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.alloc.SchemeAllocator;
import io.pmhash.core.log.Tx;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * PMDK's allocator behind the seam ({@link PmdkAllocation}): every block is 64-byte aligned and
 * holds its size, and the walk at open finds the same blocks; a block a step retires is freed by
 * PMDK only after its grace period (a reader holding an epoch keeps its object allocated), its
 * retire record is persistent and a reopen frees what a halted process left retired; a damaged
 * retire record is refused. Whether PMDK holds an object is asked by a fresh {@code
 * pmemobj_first}/{@code pmemobj_next} walk, not the allocator's index.
 */
class PmdkAllocationTest {
  private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;
  private static final long[] SIZES = {1, 8, 16, 40, 48, 64, 100, 256, 1000, 4096, 16_576, 300_000, 1 << 20};

  @TempDir Path dir;

  private static PmdkAllocation pmdk(Pool pool) {
    return (PmdkAllocation) pool.schemeAllocator();
  }

  @Test
  void theRetireListLayoutIsByteExact() {
    assertEquals(4096, PmdkAllocation.RETIRE_LIST.byteSize());
    for (int i : new int[] {0, 1, 255, 511}) {
      assertEquals(8L * i, PmdkAllocation.RETIRE_LIST.byteOffset(MemoryLayout.PathElement.sequenceElement(i)));
    }
    assertEquals("pmhret", typeName(PmdkAllocation.RETIRE_TYPE));
    assertEquals("pmhash", typeName(PmdkAllocation.TYPE_NUM));
    assertEquals(48, PmdkAllocation.PAD);
  }

  private static String typeName(long type) {
    StringBuilder b = new StringBuilder();
    for (int shift = 40; shift >= 0; shift -= 8) {
      b.append((char) ((type >>> shift) & 0xFF));
    }
    return b.toString();
  }

  @Test
  void everyBlockIs64ByteAlignedHoldsItsSizeAndIsFoundAgainAtOpen() throws Exception {
    Path file = dir.resolve("p");
    Map<Long, Long> blocks = new TreeMap<>();
    try (Pool pool = Pool.create(file, LlplTransactionTest.llpl(2).withBackendAllocation(32L << 20))) {
      SchemeAllocator a = pool.schemeAllocator();
      for (long size : SIZES) {
        SchemeAllocator.Reserved r = a.reserve(size);
        assertEquals(0, r.offset() % 64, size + " bytes: reserved at " + r.offset());
        a.publishUnlinked(new SchemeAllocator.Reserved[] {r});
        blocks.put(r.offset(), size);
        try (Tx tx = pool.undoLog().begin()) {
          long b = tx.alloc(size);
          assertEquals(0, b % 64, size + " bytes: allocated in a transaction at " + b);
          tx.commit();
          blocks.put(b, size);
        }
      }
      assertTrue(blocks.keySet().stream().anyMatch(b -> pmdk(pool).objectOf(b) % 64 != 0),
          "PMDK's own objects are not all 64-byte aligned: the padding is what aligns the blocks");
      int tag = 1;
      for (Map.Entry<Long, Long> e : blocks.entrySet()) {
        long b = e.getKey();
        assertTrue(a.owned(b));
        assertTrue(a.blockSize(b) >= e.getValue(), "block " + b + " holds " + e.getValue() + " bytes");
        long start = pmdk(pool).objectOf(b);
        assertTrue(start <= b && b - start <= PmdkAllocation.PAD, "the block is in its object's first 64 bytes");
        pool.memory().asSlice(b, e.getValue()).fill((byte) tag++);
      }
      tag = 1;
      for (Map.Entry<Long, Long> e : blocks.entrySet()) { // no block overwrote another
        byte t = (byte) tag++;
        assertEquals(t, pool.memory().get(ValueLayout.JAVA_BYTE, e.getKey()));
        assertEquals(t, pool.memory().get(ValueLayout.JAVA_BYTE, e.getKey() + e.getValue() - 1));
      }
    }
    try (Pool pool = Pool.open(file, PoolOptions.defaults().withDurability(Durability.PROCESS))) {
      Map<Long, Long> walked = pmdk(pool).walk();
      assertEquals(blocks.keySet(), walked.keySet(), "the walk at open finds the same aligned blocks");
      for (Map.Entry<Long, Long> e : blocks.entrySet()) {
        assertTrue(pool.schemeAllocator().blockSize(e.getKey()) >= e.getValue());
      }
      assertEquals(blocks.size(), pool.schemeAllocator().blocksOwned());
    }
  }

  @Test
  void aRetiredBlockStaysAllocatedWhileAReaderHoldsItsEpoch() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), LlplTransactionTest.llpl(2))) {
      PmdkAllocation a = pmdk(pool);
      long b = LlplTransactionTest.block(pool, 256, 0);
      long start = a.objectOf(b);
      pool.epochs().enter(); // a reader that may still read b
      try (SchemeAllocator.Step s = a.begin()) {
        s.set(pool.rootWord(0), 0).deferFree(b);
        s.commit();
      }
      assertFalse(a.owned(b), "retired: no longer the table's block");
      assertEquals(0, pool.root(0));
      for (int i = 0; i < 4; i++) {
        pool.epochs().reclaim();
      }
      assertTrue(a.walk().containsKey(b), "PMDK still holds the object while the epoch is held");
      assertEquals(List.of(start), a.retireRecords(), "one persistent retire record names it");
      for (int i = 0; i < 16; i++) { // the memory is not handed out again meanwhile
        SchemeAllocator.Reserved r = a.reserve(256);
        assertNotEquals(b, r.offset());
        a.publishUnlinked(new SchemeAllocator.Reserved[] {r});
      }
      pool.epochs().exit();
      for (int i = 0; i < 3; i++) {
        pool.epochs().reclaim();
      }
      assertFalse(a.walk().containsKey(b), "freed by PMDK after the grace period");
      assertTrue(a.retireRecords().isEmpty(), "the retire record is gone with the free");
      assertEquals(16, a.blocksOwned());
    }
  }

  @Test
  void aStepClosedWithoutCommitRetiresNothing() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), LlplTransactionTest.llpl(2))) {
      PmdkAllocation a = pmdk(pool);
      long b = LlplTransactionTest.block(pool, 64, 0);
      try (SchemeAllocator.Step s = a.begin()) {
        s.set(pool.rootWord(0), 0).deferFree(b);
      }
      assertTrue(a.owned(b));
      assertEquals(b, pool.root(0));
      assertTrue(a.retireRecords().isEmpty());
      for (int i = 0; i < 3; i++) {
        pool.epochs().reclaim();
      }
      assertTrue(a.walk().containsKey(b));
    }
  }

  /**
   * PMDK may hand a block a transaction freed to another transaction as soon as the first commits,
   * before the first reports its end ({@code txEnded}): two threads' reports may arrive in either
   * order. The late report of the free must not drop the block the other transaction now owns
   * (it once did: NVLH's llpl contract counted one block fewer than it reached).
   */
  @Test
  void aFreeReportedAfterTheBlockWasAllocatedAgainLeavesItOwned() throws Exception {
    long size = 300_000; // a huge object: PMDK reuses a free chunk at once, a run's unit only later
    try (Pool pool = Pool.create(dir.resolve("p"), LlplTransactionTest.llpl(2).withBackendAllocation(32L << 20))) {
      PmdkAllocation a = pmdk(pool);
      PmdkTransactions pmdkTx = a.transactionsForTests();
      long freed;
      try (Tx tx = pool.undoLog().begin()) {
        freed = tx.alloc(size);
        tx.commit();
      }
      assertEquals(1, a.blocksOwned());
      // the freeing transaction commits in PMDK; its report comes last
      pmdkTx.begin();
      a.txFree(freed);
      pmdkTx.commit();
      // transactions of another thread allocate until PMDK hands the same object out again
      List<Long> allocated = new ArrayList<>();
      long again = 0;
      for (int i = 0; i < 64 && again != freed; i++) {
        pmdkTx.begin();
        again = a.txAlloc(size);
        pmdkTx.commit();
        a.txEnded(true, new long[] {again}, 1, new long[0], 0);
        allocated.add(again);
      }
      assertEquals(freed, again, "PMDK handed the freed object out again within 64 allocations: " + allocated);
      a.txEnded(true, new long[0], 0, new long[] {freed}, 1);
      assertTrue(a.owned(freed), "the block allocated again is owned");
      assertEquals(allocated.size(), a.blocksOwned());
      assertEquals(a.walk().keySet(), new java.util.HashSet<>(allocated), "the index agrees with PMDK's heap");
    }
  }

  /** The same race left to the scheduler: two threads allocate and free in transactions, then the index equals PMDK's heap. */
  @Test
  void twoThreadsAllocatingAndFreeingInTransactionsLeaveTheIndexEqualToTheHeap() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), LlplTransactionTest.llpl(2).withBackendAllocation(32L << 20))) {
      PmdkAllocation a = pmdk(pool);
      assertEquals(0, a.blocksOwned()); // the index exists: every report updates it
      List<Long> kept = java.util.Collections.synchronizedList(new ArrayList<>());
      Runnable churn = () -> {
        for (int i = 0; i < 2_000; i++) {
          long b;
          try (Tx tx = pool.undoLog().begin()) {
            b = tx.alloc(300_000);
            tx.commit();
          }
          if (i % 100 == 0) {
            kept.add(b);
            continue;
          }
          try (Tx tx = pool.undoLog().begin()) {
            tx.free(b);
            tx.commit();
          }
        }
      };
      Thread other = new Thread(churn);
      other.start();
      churn.run();
      other.join();
      assertEquals(new java.util.HashSet<>(kept), a.walk().keySet(), "PMDK holds the blocks kept");
      for (long b : kept) {
        assertTrue(a.owned(b), "block " + b + " is owned");
      }
      assertEquals(kept.size(), a.blocksOwned(), "the index holds exactly the blocks kept");
    }
  }

  @Test
  void aCancelledReservationIsNeverPublished() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), LlplTransactionTest.llpl(2))) {
      PmdkAllocation a = pmdk(pool);
      SchemeAllocator.Reserved r = a.reserve(128);
      a.cancel(r);
      assertThrows(IllegalStateException.class, () -> a.publish(r, pool.rootWord(0)), "a cancelled reservation");
      assertThrows(IllegalStateException.class, () -> a.cancel(r), "cancelled twice");
      assertEquals(0, pool.root(0));
      assertFalse(a.owned(r.offset()));
      assertFalse(a.walk().containsKey(r.offset()), "PMDK holds no object for it");
      SchemeAllocator.Reserved other = pool.allocator().schemeAllocator().reserve(64);
      assertThrows(IllegalArgumentException.class, () -> a.cancel(other), "another allocator's reservation");
    }
  }

  @Test
  void moreRetiredBlocksThanOneListHoldsGrowTheListsAndAreAllFreed() throws Exception {
    try (Pool pool = Pool.create(dir.resolve("p"), LlplTransactionTest.llpl(2))) {
      PmdkAllocation a = pmdk(pool);
      int n = PmdkAllocation.RETIRE_SLOTS + 88;
      List<SchemeAllocator.Reserved> rs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        rs.add(a.reserve(64));
      }
      a.publishUnlinked(rs.toArray(new SchemeAllocator.Reserved[0]));
      pool.epochs().enter();
      for (SchemeAllocator.Reserved r : rs) {
        try (SchemeAllocator.Step s = a.begin()) {
          s.deferFree(r.offset());
          s.commit();
        }
      }
      assertEquals(n, a.retireRecords().size(), "every record kept: none dropped, none waited");
      assertEquals(2, a.retireLists().size());
      pool.epochs().exit();
      for (int i = 0; i < 3; i++) {
        pool.epochs().reclaim();
      }
      assertTrue(a.retireRecords().isEmpty());
      assertTrue(a.walk().isEmpty(), "every retired block freed");
      assertEquals(2, a.retireLists().size(), "the lists stay, empty, for later retires");
    }
  }

  @Test
  void aRetireRecordNamingNoObjectIsRefusedAtOpen() throws Exception {
    Path file = dir.resolve("p");
    long list;
    try (Pool pool = Pool.create(file, LlplTransactionTest.llpl(2))) {
      PmdkAllocation a = pmdk(pool);
      long b = LlplTransactionTest.block(pool, 64, 0);
      try (SchemeAllocator.Step s = a.begin()) { // makes the first retire list; its grace ends at once
        s.set(pool.rootWord(0), 0).deferFree(b);
        s.commit();
      }
      list = a.retireLists().get(0);
      pool.memory().set(U64, list + 8 * 7, pool.headerOffset() + 64); // damage: not a PMDK object
      pool.persistence().persist(list + 8 * 7, 8);
    }
    CorruptPoolException e = assertThrows(CorruptPoolException.class,
        () -> Pool.open(file, PoolOptions.defaults().withDurability(Durability.PROCESS)).close());
    assertTrue(e.getMessage().contains("retire list at " + list + " slot 7"), e.getMessage());
  }

  /**
   * A child JVM retires the block at root 0 in one step with its unlink, then halts: {@code
   * retired} while holding an epoch (PMDK still holds the object, one retire record names it),
   * {@code freed} after the grace-free. The reopen finds the unlink, and the object freed either
   * way: by the open's recovery of the record, or by the grace-free before the halt. The block at
   * root 1 was never retired and stays.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"retired", "freed"})
  void aChildHaltedAfterRetiringABlockReopensWithItFreed(String stage) throws Exception {
    Path file = dir.resolve("crash.pool");
    long keep;
    try (Pool pool = Pool.create(file, LlplTransactionTest.llpl(2))) {
      LlplTransactionTest.block(pool, 256, 0);
      keep = LlplTransactionTest.block(pool, 64, 1);
    }
    String java = ProcessHandle.current().info().command().orElseThrow();
    // java.io.tmpdir: llpl's copy of its native library, left behind by a halted JVM (docs/llpl.md)
    Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Djava.io.tmpdir=" + dir,
        "-cp", System.getProperty("java.class.path"),
        PmdkRetireChild.class.getName(), file.toString(), stage).start();
    String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    String err = new String(child.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(child.waitFor(120, TimeUnit.SECONDS));
    assertEquals(80, child.exitValue(), "the child halted where asked; stderr: " + err);
    String[] words = out.lines().reduce((x, y) -> y).orElseThrow().split(" ");
    long block = Long.parseLong(words[0]);
    boolean retired = stage.equals("retired");
    assertEquals(retired, Boolean.parseBoolean(words[1]), stage + ": PMDK held the object at the halt iff its grace never ended");
    assertEquals(retired ? 1 : 0, Integer.parseInt(words[2]), stage + ": retire records at the halt");
    try (Pool pool = Pool.open(file, PoolOptions.defaults().withDurability(Durability.PROCESS))) {
      PmdkAllocation a = pmdk(pool);
      assertEquals(0, pool.root(0), stage + ": the unlink is durable");
      assertFalse(a.walk().containsKey(block), stage + ": the retired object is freed after the reopen");
      assertTrue(a.retireRecords().isEmpty(), stage + ": no retire record is left");
      assertFalse(a.owned(block));
      assertTrue(a.owned(keep), stage + ": the block never retired stays");
      assertEquals(1, a.walk().size(), stage + ": nothing leaked");
      assertEquals(1, a.blocksOwned());
    }
  }
}
