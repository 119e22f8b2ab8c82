package io.pmhash.schemes.level;

import static io.pmhash.schemes.level.LevelCrashSupport.crash;
import static io.pmhash.schemes.level.LevelCrashTest.firstInsertChanging;
import static io.pmhash.schemes.level.LevelCrashTest.inserts;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pins the published defect "the slot token was set before the key/value was flushed and
 * fenced" (insert, update, displacement and bottom-to-top move paths): a crash could publish a
 * slot holding a stale key or value. Crashes at every drain of inserts into free slots and of an
 * insert that moves a record, and checks that no recovered slot holds anything but a completed
 * or the in-flight record (a stale slot also fails recovery's check that every key sits in one
 * of its buckets).
 *
 * <p>Mutation check, done by hand: moving the token store and its persist in {@code
 * LevelBucket.insert} above the pair stores makes {@link #insertsPublishNoStaleSlot} fail (the
 * ALL_PENDING image at the token's drain publishes a zero key); doing the same in {@code
 * LevelBucket.move} makes {@link #movementPublishesNoStaleSlot} fail.
 */
class LevelTokenBeforeDataTest {
  @TempDir Path dir;

  @Test
  void insertsPublishNoStaleSlot() {
    crash(dir, "token-before-data insert", 0, List.of(), inserts(0, 10), false);
  }

  @Test
  void movementPublishesNoStaleSlot() {
    int moveAt = firstInsertChanging(t -> t.moves.get());
    crash(dir, "token-before-data move", 0, inserts(0, moveAt), inserts(moveAt, moveAt + 1), false);
  }
}
