package io.pmhash.schemes.level;

import static io.pmhash.schemes.level.LevelLayout.ALL_SLOTS;
import static io.pmhash.schemes.level.LevelLayout.LONG;
import static io.pmhash.schemes.level.LevelLayout.PAIR_BYTES;
import static io.pmhash.schemes.level.LevelLayout.PAIR_VALUE;
import static io.pmhash.schemes.level.LevelLayout.TOKEN;
import static io.pmhash.schemes.level.LevelLayout.slotOffset;

import io.pmhash.core.Persistence;
import java.lang.foreign.MemorySegment;

/**
 * The hot path over one 128-byte bucket ({@link LevelLayout}): static methods over {@code
 * (MemorySegment, bucket offset)}, so nothing is allocated. The caller holds the bucket's stripe
 * lock ({@link LevelTable}). Every method that changes persistent state follows the log-free
 * protocols of level hashing (§3.2 of Zuo et al.), with the order the published code got wrong
 * fixed: a pair is durable before the token store that publishes it, and a token word is one
 * 8-byte release store.
 */
final class LevelBucket {
  private LevelBucket() {}

  /** @return the token word (acquire) */
  static long tokenAcquire(MemorySegment m, long bucket) {
    return (long) LONG.getAcquire(m, bucket + TOKEN);
  }

  /** Stores the token word (release): the commit store of every bucket change. */
  static void setTokenRelease(MemorySegment m, long bucket, long token) {
    LONG.setRelease(m, bucket + TOKEN, token);
  }

  static long key(MemorySegment m, long bucket, int slot) {
    return (long) LONG.get(m, slotOffset(bucket, slot));
  }

  static long value(MemorySegment m, long bucket, int slot) {
    return (long) LONG.get(m, slotOffset(bucket, slot) + PAIR_VALUE);
  }

  /**
   * @return the slot holding {@code key}, or -1
   */
  static int find(MemorySegment m, long bucket, long key) {
    long t = tokenAcquire(m, bucket);
    while (t != 0) {
      int s = Long.numberOfTrailingZeros(t);
      if ((long) LONG.get(m, slotOffset(bucket, s)) == key) {
        return s;
      }
      t &= t - 1;
    }
    return -1;
  }

  /**
   * Branch-free probe: compares the key of every slot, published or not, and masks the result
   * with the token word. Every load is independent of the others and of any branch, so the two
   * cache lines of this bucket (and of the other buckets a lookup probes) are fetched in
   * parallel instead of one miss after another.
   *
   * @return bit {@code s} set when published slot {@code s} holds {@code key}
   */
  static long matches(MemorySegment m, long bucket, long key) {
    long tok = tokenAcquire(m, bucket);
    long base = slotOffset(bucket, 0);
    long x = 0;
    for (int s = 0; s < LevelLayout.SLOTS; s++) {
      x |= ((long) LONG.get(m, base + PAIR_BYTES * s) == key ? 1L : 0L) << s;
    }
    return x & tok;
  }

  /** @return the lowest free slot, or -1 when the bucket is full */
  static int freeSlot(MemorySegment m, long bucket) {
    long free = ~tokenAcquire(m, bucket) & ALL_SLOTS;
    return free == 0 ? -1 : Long.numberOfTrailingZeros(free);
  }

  /** @return records in the bucket */
  static int count(MemorySegment m, long bucket) {
    return Long.bitCount(tokenAcquire(m, bucket));
  }

  /**
   * Log-free insert into a free slot (§3.2 "log-free insertion"): two persists.
   *
   * @param slot a slot whose token bit is clear
   */
  static void insert(MemorySegment m, Persistence p, long bucket, int slot, long key, long value) {
    long pair = slotOffset(bucket, slot);
    LONG.set(m, pair, key);
    LONG.set(m, pair + PAIR_VALUE, value);
    // PERSIST(§3.2 insert step 1): the pair is durable before the token that publishes it, so no
    // crash publishes a slot whose key or value is stale (the published code set the token first).
    p.persist(pair, PAIR_BYTES);
    setTokenRelease(m, bucket, tokenAcquire(m, bucket) | 1L << slot);
    // PERSIST(§3.2 insert step 2): the token word, one 8-byte store, commits the insert.
    p.persist(bucket + TOKEN, 8);
  }

  /** Log-free delete (§3.2 "log-free deletion"): one persist. */
  static void delete(MemorySegment m, Persistence p, long bucket, int slot) {
    setTokenRelease(m, bucket, tokenAcquire(m, bucket) & ~(1L << slot));
    // PERSIST(§3.2 delete): the cleared token, one 8-byte store, commits the delete.
    p.persist(bucket + TOKEN, 8);
  }

  /**
   * Opportunistic log-free update (§3.2): the new pair goes to a free slot of the same bucket and
   * one token-word store sets its bit and clears the old one, so every crash leaves exactly one
   * of the two records. Two persists. Without a free slot in the bucket, the value word is
   * replaced in place: an aligned 8-byte store is failure-atomic by itself (the original, with
   * 15-byte values, needed a log here). One persist.
   */
  static void update(MemorySegment m, Persistence p, long bucket, int slot, long key, long value) {
    long token = tokenAcquire(m, bucket);
    long free = ~token & ALL_SLOTS;
    if (free == 0) {
      long v = slotOffset(bucket, slot) + PAIR_VALUE;
      LONG.setRelease(m, v, value);
      // PERSIST(update, full bucket): one aligned 8-byte value store is the whole update.
      p.persist(v, 8);
      return;
    }
    int to = Long.numberOfTrailingZeros(free);
    long pair = slotOffset(bucket, to);
    LONG.set(m, pair, key);
    LONG.set(m, pair + PAIR_VALUE, value);
    // PERSIST(§3.2 update step 1): the new pair is durable before the token word names it.
    p.persist(pair, PAIR_BYTES);
    setTokenRelease(m, bucket, (token | 1L << to) & ~(1L << slot));
    // PERSIST(§3.2 update step 2): both tokens flip in ONE 8-byte store (the published code used
    // two persists, so a crash between them left the key twice or lost it).
    p.persist(bucket + TOKEN, 8);
  }

  /**
   * Cuckoo-style one-step movement (§3.2 "movement"): copies the record of {@code (from, slot)}
   * into free slot {@code to}/{@code toSlot} of its alternative bucket, then removes the
   * original. Three persists. A crash after the second leaves the record in both buckets, both
   * legal places for the key with the same value: lookups take the first; recovery removes the
   * second ({@link LevelRecovery}). No crash loses it.
   */
  static void move(MemorySegment m, Persistence p, long from, int slot, long to, int toSlot) {
    long src = slotOffset(from, slot);
    long dst = slotOffset(to, toSlot);
    LONG.set(m, dst, (long) LONG.get(m, src));
    LONG.set(m, dst + PAIR_VALUE, (long) LONG.get(m, src + PAIR_VALUE));
    // PERSIST(§3.2 movement step 1): the copy is durable before its token.
    p.persist(dst, PAIR_BYTES);
    setTokenRelease(m, to, tokenAcquire(m, to) | 1L << toSlot);
    // PERSIST(§3.2 movement step 2): the copy is published before the original is retracted, so
    // a crash between the two leaves a duplicate (repaired), never a lost key.
    p.persist(to + TOKEN, 8);
    setTokenRelease(m, from, tokenAcquire(m, from) & ~(1L << slot));
    // PERSIST(§3.2 movement step 3): the original is retracted.
    p.persist(from + TOKEN, 8);
  }
}
