package io.pmhash.schemes.nvlh;

import static io.pmhash.schemes.contract.DamagedPools.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pmhash.core.Durability;
import io.pmhash.map.LongHashTable;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 9 for NVLH: the chains are validated at a clean open too (links only: every overflow
 * bucket an allocated block, no more of them than the count written at close, so a loop is
 * found), where before only a crashed open scanned them and a get followed a damaged next word
 * ({@code IndexOutOfBoundsException}, misalignment) or looped for ever. The refused file is left
 * unchanged.
 */
class NvlhDamagedPoolTest {
  @TempDir Path dir;

  /** A clean pool, a primary bucket with an overflow chain, and the chain's first overflow bucket. */
  private record Table(Path file, long head, long firstOverflow) {}

  private Table table(String name) throws Exception {
    Path file = dir.resolve(name);
    try (NvlhTable t = (NvlhTable) PmHash.create(file, TableOptions.scheme("nvlh").withDurability(Durability.PROCESS))) {
      fill(t, 3_000);
      var m = t.pool.memory();
      for (long b = 0; b < t.bucketCount(t.state); b++) {
        long head = t.bucketOffset(b);
        long next = NvlhBucket.next(m, head);
        if (next != 0) {
          return new Table(file, head, next);
        }
      }
    }
    throw new AssertionError("no bucket has an overflow chain");
  }

  @Test
  void aChainLinkOutsideThePoolIsRefusedAtACleanOpen() throws Exception {
    Table t = table("out.pool");
    poke64(t.file(), t.head() + NvlhLayout.NEXT, 1L << 40);
    assertRefusedUnchanged(t.file(), "nvlh: the chain of bucket", "names " + (1L << 40), "outside the heap");
  }

  @Test
  void aMisalignedChainLinkIsRefusedAtACleanOpen() throws Exception {
    Table t = table("misaligned.pool");
    poke64(t.file(), t.head() + NvlhLayout.NEXT, t.firstOverflow() + 8);
    assertRefusedUnchanged(t.file(), "nvlh: the chain of bucket", "not 64-byte aligned");
  }

  @Test
  void aChainLoopIsRefusedAtACleanOpen() throws Exception {
    Table t = table("loop.pool");
    poke64(t.file(), t.firstOverflow() + NvlhLayout.NEXT, t.firstOverflow()); // the overflow bucket names itself
    assertRefusedUnchanged(t.file(), "nvlh: the chains hold more than", "a chain loops");
  }

  @Test
  void aCleanPoolWithIntactChainsOpensWithEveryRecord() throws Exception {
    Table t = table("ok.pool");
    try (LongHashTable open = PmHash.open(t.file(), reopen())) {
      assertEquals(3_000, open.size());
      for (int i = 0; i < 3_000; i++) {
        assertEquals(i, open.get(key(i), -1));
      }
    }
  }
}
