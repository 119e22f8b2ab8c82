package io.pmhash.schemes.cceh;

import static io.pmhash.schemes.cceh.CcehCrashSupport.*;
import static io.pmhash.schemes.cceh.CcehLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.crash.CrashHarness;
import io.pmhash.core.crash.ImageKind;
import io.pmhash.schemes.contract.CrashModel.Op;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression test for CCEH's published defect "a crash after the key CAS to a sentinel left a
 * slot that could never be reused" ({@code papers/README.md}).
 *
 * <p>A probe window holds 14 records; the workload inserts a 15th, deletes it and one of the 14,
 * and inserts again, crashed at every drain. After recovery the window must take exactly as many
 * new keys as it has free slots (16 minus the records the model says it holds) without a split:
 * a slot left half-written by an interrupted insert, or half-cleared by an interrupted delete, is
 * free again.
 *
 * <p>Checked to fail with the defect: making {@code CcehSegment.insert} store and persist a
 * sentinel key (-2) in the slot before the pair, and {@code CcehSegment.freeSlot} skip slots
 * holding it (the published protocol), makes images at the sentinel's drain fail with "the window
 * refills without a split (14 used)".
 */
class CcehSentinelSlotReuseTest {
  @TempDir Path dir;

  @Test
  void slotsOfInterruptedInsertsAndDeletesAreReused() {
    List<Long> keys = keysIn(13, 0, 0, 40, 1);
    List<Op> setup = new ArrayList<>();
    for (int i = 0; i < 14; i++) {
      setup.add(Op.put(keys.get(i), i));
    }
    List<Op> work = List.of(Op.put(keys.get(14), 14), Op.remove(keys.get(14)), Op.remove(keys.get(3)), Op.put(keys.get(15), 15));
    List<Map<Long, Long>> states = new ArrayList<>();
    Map<Long, Long> s = new HashMap<>();
    setup.forEach(o -> o.apply(s));
    states.add(new HashMap<>(s));
    for (Op o : work) {
      o.apply(s);
      states.add(new HashMap<>(s));
    }
    CrashHarness.Report r = CrashHarness.builder(dir, options())
        .images(ImageKind.DRAINED, ImageKind.ALL_PENDING, ImageKind.EACH_LINE)
        .randomImages(3, 0x5E47L)
        .setup(pool -> {
          CcehTable t = CcehTable.create(pool, 0);
          setup.forEach(o -> o.apply(t));
        })
        .run((pool, ops) -> {
              CcehTable t = CcehTable.open(pool);
              for (int i = 0; i < work.size(); i++) {
                ops.begin(i);
                work.get(i).apply(t);
                ops.end(i);
              }
            },
            (pool, point) -> {
              CcehCrashSupport.verify(pool, point, states, work);
              CcehTable t = CcehTable.open(pool);
              long seg = t.segmentOffsets().get(0);
              int used = Integer.bitCount(CcehSegment.window(pool.memory(), seg, 13 * PAIRS_PER_BUCKET));
              long splits = t.splits.get();
              int next = 16;
              for (int i = used; i < PROBE_SLOTS; i++) {
                t.put(keys.get(next++), -1);
              }
              assertEquals(splits, t.splits.get(), point.describe() + ": the window refills without a split (" + used + " used)");
              assertEquals(0xFFFF, CcehSegment.window(pool.memory(), seg, 13 * PAIRS_PER_BUCKET), point.describe() + ": the window is full");
            });
    System.out.println("CcehSentinelSlotReuseTest: " + r.summary());
    assertTrue(r.passed() && r.crashPoints() >= 6, r.summary());
  }
}
