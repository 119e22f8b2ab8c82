package io.pmhash.schemes.cceh;

import static io.pmhash.schemes.cceh.CcehCrashSupport.*;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.crash.CrashHarness;
import io.pmhash.schemes.contract.CrashModel.Op;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression test for CCEH's published defect "during a split the old segment's local depth and
 * both segments' patterns persisted before the directory update, so a crash in a doubling split
 * left local depth &gt; global depth and keys unreachable" ({@code papers/README.md}).
 *
 * <p>Splits with and without a doubling are crashed at every drain; every durable image, before
 * recovery touches it, must satisfy invariant I of {@link CcehSplit}: every directory entry names
 * a segment whose durable depth and pattern cover the entry, and no local depth exceeds the
 * global depth ({@link CcehInvariants#checkRouting}); after recovery every key is reachable.
 *
 * <p>Checked to fail with the defect: moving {@code CcehSplit.finish}'s store of S's new shape
 * (and the clearing of its moved bits) before the drain that makes the directory entries durable
 * makes the images at that drain fail with "entry i names segment S of depth d + 1 ... which does
 * not cover it".
 */
class CcehDepthBeforeDirectoryTest {
  @TempDir Path dir;

  @Test
  void depthNeverDurableBeforeTheDirectoryInADoublingSplit() {
    List<Long> keys = keysIn(11, 0, 0, 17, 1000);
    List<Op> setup = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      setup.add(Op.put(keys.get(i), i));
    }
    CrashHarness.Report r = crash(dir, "depth-before-directory/doubling", 0, setup, List.of(Op.put(keys.get(16), 16)), true);
    assertTrue(r.passed() && r.crashPoints() > 10, r.summary());
  }

  @Test
  void depthNeverDurableBeforeTheDirectoryInASplitWithoutDoubling() {
    // depth 2 from the start: every segment is at the global depth, so first double by
    // overflowing segment 0b00, then overflow 0b10 (still at depth 2 < 3)
    List<Op> setup = new ArrayList<>();
    List<Long> a = keysIn(5, 3, 0b000, 9, 1);
    List<Long> b = keysIn(5, 3, 0b001, 8, 1);
    for (int i = 0; i < 8; i++) {
      setup.add(Op.put(a.get(i), i));
      setup.add(Op.put(b.get(i), i));
    }
    setup.add(Op.put(a.get(8), 8));
    List<Long> c = keysIn(6, 2, 0b10, 17, 1);
    for (int i = 0; i < 16; i++) {
      setup.add(Op.put(c.get(i), i));
    }
    CcehTable dry = dryRun(1600, setup);
    long doublings = dry.doublings.get();
    dry.put(c.get(16), 16);
    assertTrue(dry.doublings.get() == doublings && dry.splits.get() >= 2, "a split without doubling: " + dry.stats());
    CrashHarness.Report r = crash(dir, "depth-before-directory/no-doubling", 1600, setup, List.of(Op.put(c.get(16), 16)), true);
    assertTrue(r.passed() && r.crashPoints() > 6, r.summary());
  }
}
