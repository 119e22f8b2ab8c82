package io.pmhash.schemes.level;

import static io.pmhash.schemes.level.LevelCrashSupport.crash;
import static io.pmhash.schemes.level.LevelCrashSupport.dryRun;
import static io.pmhash.schemes.level.LevelCrashSupport.key;
import static io.pmhash.schemes.level.LevelCrashTest.inserts;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pmhash.schemes.contract.CrashModel.Op;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pins the published defect of the opportunistic log-free update: the new slot's token was set
 * and the old one cleared in two separate persists, so a crash between them left the key twice
 * or (cleared first) lost it. Here one 8-byte token-word store flips both. Crashes at every drain
 * of updates of keys whose buckets all have a free slot (so every update takes the
 * opportunistic path), and checks the updated key is present exactly once with its old or new
 * value.
 *
 * <p>Mutation check, done by hand: splitting the token store of {@code LevelBucket.update} into
 * "clear the old bit, persist; set the new bit, persist" makes this test fail with the in-flight
 * key missing.
 */
class LevelUpdateLosesKeyTest {
  @TempDir Path dir;

  @Test
  void anOpportunisticUpdateIsAllOrNothing() {
    List<Op> setup = inserts(0, 8);
    List<Op> work = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      work.add(Op.put(key(i), 1000 + i));
    }
    assertEquals(0, LevelCrashTest.fullBuckets(dryRun(0, setup, List.of())), "no bucket is full: every update is opportunistic");
    crash(dir, "update loses key", 0, setup, work, false);
  }
}
