package io.pmhash.core.log;

import static io.pmhash.core.log.LaneLayout.OP_ANDNOT;
import static io.pmhash.core.log.LaneLayout.OP_OR;
import static io.pmhash.core.log.LaneLayout.OP_SET;
import static io.pmhash.core.log.LaneLayout.REDO_COMMIT;
import static io.pmhash.core.log.LaneLayout.REDO_ENTRIES;
import static io.pmhash.core.log.LaneLayout.REDO_ENTRY_BYTES;

import io.pmhash.core.CorruptPoolException;
import io.pmhash.core.Persistence;
import io.pmhash.core.internal.Words;
import java.lang.foreign.MemorySegment;

/**
 * One atomic redo step in a lane: a list of idempotent actions on aligned 8-byte words, applied
 * all or none with respect to a crash.
 *
 * <ul>
 *   <li>{@link #set}(offset, value): store {@code value} (a release store);
 *   <li>{@link #or}(offset, mask): atomically set bits ({@code getAndBitwiseOr});
 *   <li>{@link #andNot}(offset, mask): atomically clear bits ({@code getAndBitwiseAnd}).
 * </ul>
 *
 * <p>{@link #commit()} persists in this order (each step keeps the invariant named):
 *
 * <ol>
 *   <li>the entries are written to the lane and persisted (the record is not yet valid: a crash
 *       replays nothing);
 *   <li>the commit word (count and a 48-bit checksum of the entries) is stored with a release
 *       store and persisted: the step is decided; from here a crash replays it, and the checksum
 *       makes sure only the entries it was computed over are ever replayed;
 *   <li>every action is applied (bit actions atomically, so concurrent lanes changing other bits
 *       of the same bitmap word keep each other's bits) and flushed, then one drain;
 *   <li>the commit word is cleared and persisted, so the record is never replayed again.
 * </ol>
 *
 * That is four drains per step, whatever the number of actions. The caller should
 * <em>flush</em> (a drain is not needed) whatever the actions make reachable, before {@code
 * commit}: the drain of step 1 orders it before the commit word.
 *
 * <p><b>The caller's duty.</b> It must hold exclusive ownership of every SET destination (no
 * other thread writes the word) from before it adds the action until {@code commit} returns:
 * otherwise a replay after a crash could overwrite a later store with this step's older value.
 * OR and ANDNOT actions must own their bits the same way (other bits of the word are free to
 * change).
 *
 * <p>A {@code Redo} belongs to its lane and is reused: use it in try-with-resources, from one
 * thread, and not after {@link #close()}.
 *
 * <pre>{@code
 * try (Redo redo = pool.lanes().beginRedo()) {
 *   redo.set(slotA, newA).set(slotB, newB);
 *   redo.commit();
 * }
 * }</pre>
 */
public final class Redo implements AutoCloseable {
  private final Lanes lanes;
  private final Lane lane;
  private final long[] words;
  private int count;
  private boolean open;
  private boolean committed;

  Redo(Lanes lanes, Lane lane) {
    this.lanes = lanes;
    this.lane = lane;
    this.words = new long[2 * lanes.redoCapacity];
  }

  void start() {
    count = 0;
    open = true;
    committed = false;
  }

  /** @return the index of the lane this step runs in */
  public int laneIndex() {
    return lane.index;
  }

  /** @return actions added so far */
  public int actions() {
    return count;
  }

  /** @return actions that may still be added */
  public int remaining() {
    return lanes.redoCapacity - count;
  }

  /** @return the most actions one step can hold */
  public int capacity() {
    return lanes.redoCapacity;
  }

  /**
   * Adds a SET action.
   *
   * @param offset aligned pool offset of the destination word
   * @param value the value to store
   * @return this
   */
  public Redo set(long offset, long value) {
    return add(offset, OP_SET, value);
  }

  /**
   * Adds an OR action.
   *
   * @param offset aligned pool offset of the word
   * @param mask bits to set
   * @return this
   */
  public Redo or(long offset, long mask) {
    return add(offset, OP_OR, mask);
  }

  /**
   * Adds an AND-NOT action.
   *
   * @param offset aligned pool offset of the word
   * @param mask bits to clear
   * @return this
   */
  public Redo andNot(long offset, long mask) {
    return add(offset, OP_ANDNOT, mask);
  }

  private Redo add(long offset, int op, long arg) {
    checkOpen();
    lanes.checkWord(offset, "redo destination");
    if (count == lanes.redoCapacity) {
      throw new LaneOverflowException(
          "one atomic step holds at most " + lanes.redoCapacity + " redo actions (lanes of "
              + lanes.laneSize + " bytes); create the pool with larger lanes:"
              + " PoolOptions.withGeometry(lanes, laneBytes, chunkBytes)");
    }
    words[2 * count] = offset | op;
    words[2 * count + 1] = arg;
    count++;
    return this;
  }

  private void checkOpen() {
    if (!open) {
      throw new IllegalStateException("this redo step is closed: take a new one from Lanes.beginRedo()");
    }
    if (committed) {
      throw new IllegalStateException("this redo step is already committed");
    }
  }

  /**
   * Makes every action durable and applied, atomically with respect to a crash (see the class
   * comment). With no actions it does nothing.
   */
  public void commit() {
    checkOpen();
    committed = true;
    if (count == 0) {
      return;
    }
    boolean done = false;
    try {
      commitActions();
      done = true;
    } finally {
      if (!done) {
        lane.poisoned = true; // its record stays for the next open to recover
      }
    }
  }

  private void commitActions() {
    Persistence p = lanes.persistence;
    MemorySegment m = lanes.pool.memory();
    long entries = lane.offset + REDO_ENTRIES;
    long commitWord = lane.offset + REDO_COMMIT;
    int n = count;
    long[] w = words;
    long h = Words.mix(Words.mix(Words.SEED, lane.index), n);
    for (int i = 0; i < 2 * n; i++) {
      Words.set(m, entries + 8L * i, w[i]);
      h = Words.mix(h, w[i]);
    }
    // PERSIST(redo 1): the entries are durable before the commit word that validates them.
    p.flush(entries, (long) REDO_ENTRY_BYTES * n);
    p.drain();
    Words.setRelease(m, commitWord, commitValue(h, n));
    // PERSIST(redo 2): the commit word is durable: from here a crash replays the step.
    p.persist(commitWord, 8);
    apply(lanes, w, n);
    // PERSIST(redo 3): every action is durable before the record is retired.
    p.drain();
    Words.setRelease(m, commitWord, 0);
    // PERSIST(redo 4): retired before the caller's next store to a destination can be durable,
    // so a later replay can never overwrite it.
    p.persist(commitWord, 8);
  }

  private static long commitValue(long h, int n) {
    return (Words.finish(h) & ~0xFFFFL) | n;
  }

  /**
   * Applies {@code n} actions, then flushes (no drain) the line of each. Every store comes before
   * every flush: a line flushed between two stores to it would not carry the second.
   */
  private static void apply(Lanes lanes, long[] w, int n) {
    Persistence p = lanes.persistence;
    MemorySegment m = lanes.pool.memory();
    for (int i = 0; i < n; i++) {
      long off = w[2 * i] & ~7L;
      int op = (int) (w[2 * i] & 7);
      long arg = w[2 * i + 1];
      if (off + 8 > m.byteSize()) {
        m = lanes.memoryCovering(off + 8);
      }
      switch (op) {
        case OP_SET -> Words.setRelease(m, off, arg);
        case OP_OR -> Words.getAndOr(m, off, arg);
        case OP_ANDNOT -> Words.getAndAndNot(m, off, arg);
        default -> throw new IllegalStateException("redo op " + op);
      }
    }
    long lastLine = -1;
    for (int i = 0; i < n; i++) {
      long off = w[2 * i] & ~7L;
      long line = off >>> 6;
      if (line != lastLine) {
        p.flush(off, 8);
        lastLine = line;
      }
    }
  }

  /**
   * Gives the lane back. Actions not committed are discarded (nothing of them was made durable).
   */
  @Override
  public void close() {
    if (!open) {
      return;
    }
    open = false;
    lanes.release(lane);
  }

  /**
   * Replays a lane's committed record, if any; with {@code apply} false only validates it.
   *
   * @return 1 if replayed, 0 if there was none, -1 if a commit word did not match its entries
   */
  static int recoverLane(Lanes lanes, Lane lane, boolean apply) throws CorruptPoolException {
    MemorySegment m = lanes.pool.memory();
    long commitWord = lane.offset + REDO_COMMIT;
    long cw = Words.getAcquire(m, commitWord);
    if (cw == 0) {
      return 0;
    }
    Persistence p = lanes.persistence;
    int n = (int) (cw & 0xFFFF);
    long entries = lane.offset + REDO_ENTRIES;
    boolean valid = n >= 1 && n <= lanes.redoCapacity;
    long[] w = valid ? new long[2 * n] : null;
    if (valid) {
      long h = Words.mix(Words.mix(Words.SEED, lane.index), n);
      for (int i = 0; i < 2 * n; i++) {
        w[i] = Words.get(m, entries + 8L * i);
        h = Words.mix(h, w[i]);
      }
      valid = commitValue(h, n) == cw;
    }
    if (!valid) {
      if (!apply) {
        return -1;
      }
      // Never produced by commit (entries are durable before the commit word): clear it.
      Words.setRelease(m, commitWord, 0);
      p.persist(commitWord, 8);
      return -1;
    }
    long size = m.byteSize();
    for (int i = 0; i < n; i++) {
      long off = w[2 * i] & ~7L;
      int op = (int) (w[2 * i] & 7);
      if (op < OP_SET || op > OP_ANDNOT || !lanes.inLoggable(off, 8, size)) {
        throw lanes.corrupt(lane, "redo action " + i + " (op " + op + " on offset " + off + ") is outside the heap and the header's root words");
      }
    }
    if (!apply) {
      return 1;
    }
    apply(lanes, w, n);
    // PERSIST(recovery redo): applied and durable before the record is retired.
    p.drain();
    Words.setRelease(m, commitWord, 0);
    p.persist(commitWord, 8);
    return 1;
  }
}
