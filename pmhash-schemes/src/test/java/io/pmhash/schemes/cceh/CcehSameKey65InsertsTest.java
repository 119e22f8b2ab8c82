package io.pmhash.schemes.cceh;

import static io.pmhash.schemes.cceh.CcehCrashSupport.keysIn;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pmhash.map.PmHash;
import io.pmhash.map.TableOptions;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Regression test for CCEH's published defect "65 inserts of one key crashed it after 16 splits of
 * the same region" ({@code papers/README.md}): the published insert looked for a free slot
 * without looking for the key, so every insert of a present key took a new slot and, once the
 * window was full, split, until the depth ran out.
 *
 * <p>Here a repeated insert is an update: 65 inserts of one key, alone or in a full window, never
 * split and leave one record with the last value.
 *
 * <p>Checked to fail with the defect: making {@code CcehTable.write} take a free slot for a put
 * without looking for the key first makes {@code sixtyFiveInsertsOfOneKeyAreOneRecord} fail
 * (16 records of one key, then a split once the window is full).
 */
class CcehSameKey65InsertsTest {
  @Test
  void sixtyFiveInsertsOfOneKeyAreOneRecord() {
    try (CcehTable t = (CcehTable) PmHash.createVolatile(TableOptions.scheme(CcehProvider.NAME))) {
      for (int i = 0; i < 65; i++) {
        t.put(42, i);
      }
      assertEquals(1, t.size());
      assertEquals(64, t.get(42, -1));
      assertEquals(0, t.splits.get(), "no split for repeated inserts");
      CcehInvariants.check(t.pool(), t, "after 65 inserts");
    }
  }

  @Test
  void sixtyFiveInsertsOfOneKeyInAFullWindowNeverSplit() {
    List<Long> keys = keysIn(77, 0, 0, 16, 1);
    try (CcehTable t = (CcehTable) PmHash.createVolatile(TableOptions.scheme(CcehProvider.NAME))) {
      for (long k : keys) {
        t.put(k, 0);
      }
      for (int i = 0; i < 65; i++) {
        t.put(keys.get(15), i);
        t.putIfAbsent(keys.get(0), i);
      }
      assertEquals(16, t.size());
      assertEquals(64, t.get(keys.get(15), -1));
      assertEquals(0, t.get(keys.get(0), -1));
      assertEquals(0, t.splits.get(), "no split for repeated inserts into a full window");
      CcehInvariants.check(t.pool(), t, "after 65 inserts");
    }
  }
}
