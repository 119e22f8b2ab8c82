package io.pmhash.llpl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The open-time block index against a map model: puts, replaces, removes (backward shift) and growth. */
class BlockIndexTest {
  @Test
  void agreesWithAMapThroughGrowthAndRemoves() {
    BlockIndex index = new BlockIndex();
    Map<Long, long[]> model = new HashMap<>();
    SplittableRandom r = new SplittableRandom(7);
    for (int op = 0; op < 200_000; op++) {
      // 64-byte aligned blocks from a small range, so that runs collide and removes shift them
      long block = 64L * (1 + r.nextInt(20_000));
      if (r.nextInt(3) == 0) {
        assertEquals(model.remove(block) != null, index.remove(block), "remove " + block);
      } else {
        long start = block - 16;
        long size = r.nextLong(1, 1 << 20);
        index.put(block, start, size);
        model.put(block, new long[] {start, size});
      }
      if (op % 997 == 0) {
        check(index, model, r);
      }
    }
    check(index, model, r);
  }

  @Test
  void absentBlocksAnswerMinusOneAndBlockZeroIsRefused() {
    BlockIndex index = new BlockIndex();
    assertFalse(index.contains(64));
    assertEquals(-1, index.start(64));
    assertEquals(-1, index.size(64));
    assertFalse(index.remove(64));
    assertThrows(IllegalArgumentException.class, () -> index.put(0, 0, 8));
    index.put(64, 48, 8);
    assertTrue(index.contains(64));
    assertEquals(1, index.size());
  }

  private static void check(BlockIndex index, Map<Long, long[]> model, SplittableRandom r) {
    assertEquals(model.size(), index.size(), "count");
    long total = 0;
    for (Map.Entry<Long, long[]> e : model.entrySet()) {
      assertTrue(index.contains(e.getKey()), "contains " + e.getKey());
      assertEquals(e.getValue()[0], index.start(e.getKey()), "start of " + e.getKey());
      assertEquals(e.getValue()[1], index.size(e.getKey()), "size of " + e.getKey());
      total += e.getValue()[1];
    }
    assertEquals(total, index.totalSize(), "total size");
    Map<Long, Long> visited = new HashMap<>();
    index.forEach((block, start, size) -> assertEquals(null, visited.put(block, size), "visited twice: " + block));
    assertEquals(model.size(), visited.size(), "visited");
    for (int i = 0; i < 100; i++) {
      long absent = 64L * (20_001 + r.nextInt(1000));
      assertFalse(index.contains(absent));
    }
  }
}
