package io.pmhash.schemes.nvlh;

import static io.pmhash.schemes.contract.CrashModel.inserts;
import static io.pmhash.schemes.contract.CrashModel.key;
import static io.pmhash.schemes.nvlh.NvlhCrashSupport.crash;
import static io.pmhash.schemes.nvlh.NvlhCrashSupport.dryRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.crash.CrashHarness;
import io.pmhash.schemes.contract.CrashModel;
import io.pmhash.schemes.contract.CrashModel.Op;
import io.pmhash.schemes.nvlh.NvlhCrashSupport.Config;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Crash at every drain of each operation type of NVDH: insert, update, delete, tombstone reuse, rehash (and its recovery). */
class NvdhCrashTest {
  @TempDir Path dir;

  @AfterEach
  void closeDryRunTables() {
    NvlhCrashSupport.closeDryRuns();
  }

  @Test
  void insertsUpdatesAndDeletes() {
    List<Op> work = new ArrayList<>(inserts(10, 14));
    work.add(Op.put(key(2), -2));
    work.add(Op.remove(key(3)));
    work.add(Op.put(key(3), 33)); // may reuse the tombstone
    crash(dir, "insert, update, delete", Config.NVDH, inserts(0, 10), work, false);
  }

  /** The paper's NVDH: each write one undo-log transaction; a crash at any drain keeps it all or nothing. */
  @Test
  void insertsUpdatesAndDeletesInTransactions() {
    List<Op> work = new ArrayList<>(inserts(10, 14));
    work.add(Op.put(key(2), -2));
    work.add(Op.remove(key(3)));
    work.add(Op.put(key(3), 33)); // may reuse the tombstone
    CrashHarness.Report r = crash(dir, "transactional insert, update, delete", Config.NVDH_TX, inserts(0, 10), work, true);
    // every write drains at least three times (a snapshot, the commit's two), so the images are many
    assertTrue(r.crashPoints() >= 3L * work.size(), "crash points: " + r.crashPoints());
  }

  @Test
  void rehash() {
    NvdhTable t = (NvdhTable) dryRun(Config.NVDH, List.of(), List.of());
    int at = 0;
    while (t.rehashes == 0) {
      t.put(key(at), at);
      at++;
    }
    at--;
    assertEquals(7, t.k(), "the first rehash doubles 64 slots");
    crash(dir, "rehash", Config.NVDH, inserts(0, at), inserts(at, at + 1), true);
  }
}
