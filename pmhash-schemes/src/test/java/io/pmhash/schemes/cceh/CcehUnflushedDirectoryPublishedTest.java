package io.pmhash.schemes.cceh;

import static io.pmhash.schemes.cceh.CcehCrashSupport.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Durability;
import io.pmhash.core.crash.CrashHarness;
import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import io.pmhash.schemes.contract.CrashModel.Op;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression test for CCEH's published defect "a new directory array was published before it was
 * flushed, and became visible to other threads before it was persisted" ({@code
 * papers/README.md}).
 *
 * <p>Three doublings in a row are crashed at every drain. In every durable image the directory
 * the table header names must be complete: every entry set and covering (checked on the raw image,
 * before recovery). Other threads see a new directory only through the header word, which the
 * allocator's redo step stores after its entries are durable (its first drain), so "visible before
 * persisted" is the same ordering, checked by the same images.
 *
 * <p>Checked to fail with the defect: removing the flush of the new directory in {@code
 * ExtendibleDirectory.doubleInto} (the directory code CCEH shares with Dash-EH and ESH) makes DRAINED, EACH_LINE and RANDOM images at the publishing step's last drains fail with
 * "directory entry 0 of 1 is empty" (the unflushed directory reads as zeros, depth 0).
 */
class CcehUnflushedDirectoryPublishedTest {
  @TempDir Path dir;

  @Test
  void aPublishedDirectoryIsAlwaysDurable() {
    // 17 keys of one bucket and one 3-bit prefix: three doublings before they separate
    List<Long> keys = keysIn(2, 3, 0b000, 14, 1);
    keys.addAll(keysIn(2, 4, 0b0010, 3, 1));
    List<Op> setup = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      setup.add(Op.put(keys.get(i), i));
    }
    List<Op> work = List.of(Op.put(keys.get(16), 16));
    CcehTable dry = dryRun(0, setup);
    work.forEach(o -> o.apply(dry));
    assertTrue(dry.doublings.get() >= 3, "the workload doubles three times: " + dry.stats());
    CrashHarness.Report r = crash(dir, "unflushed-directory", 0, setup, work, true);
    assertTrue(r.passed(), r.summary());
  }

  @Test
  void theOldDirectoryIsFreedOnlyWithThePublication() throws Exception {
    try (CcehTable t = (CcehTable) PmHash.create(dir.resolve("t.pool"), TableOptions.scheme(CcehProvider.NAME).withDurability(Durability.PROCESS))) {
      for (long k = 1; t.doublings.get() < 4; k++) {
        t.put(k, k);
      }
      CcehInvariants.checkNoLeak(t.pool(), t, "after four doublings");
      assertEquals(4, t.globalDepth(t.pool().memory()) - 0, "global depth");
    }
  }
}
