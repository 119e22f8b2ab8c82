package io.pmhash.core.alloc;

import io.pmhash.core.log.LaneOverflowException;
import io.pmhash.core.log.Redo;

/**
 * One atomic allocator step in a lane ({@link Allocator#begin()}): any number of reservations
 * published, extra words set, and blocks freed, all or nothing with respect to a crash. It is a
 * {@link Redo} step underneath (four drains, whatever it holds; see {@link Redo} for the persist
 * order and the caller's duty of exclusive ownership of every destination), whose actions are
 * single-bit OR (publish) and AND-NOT (free) on run bitmaps and span headers, and SETs.
 *
 * <pre>{@code
 * // a split: two new segments replace one, and two directory entries change at once
 * try (Publication p = allocator.begin()) {
 *   p.publish(left, dir + 8 * i).publish(right, dir + 8 * j).deferFree(old);
 *   p.commit();
 * }
 * }</pre>
 *
 * Reservations added to a step that is closed without commit stay reserved (publish or cancel
 * them later). A {@code Publication} is its lane's object, reused: do not keep it after {@link
 * #close()}. It is also the {@link SchemeAllocator.Step} of this allocator's seam ({@link
 * Allocator#schemeAllocator()}), so a step through the seam allocates nothing more.
 */
public final class Publication implements SchemeAllocator.Step {
  private final Allocator allocator;
  private final Reservation[] reservations;
  private final long[] freed;
  private Redo redo;
  private int published;
  private int frees;

  Publication(Allocator allocator, int capacity) {
    this.allocator = allocator;
    this.reservations = new Reservation[capacity];
    this.freed = new long[capacity];
  }

  void start(Redo r) {
    redo = r;
    published = 0;
    frees = 0;
  }

  /**
   * Publishes a reservation and stores its offset into a destination word.
   *
   * @param r a reservation of this allocator, not yet published or cancelled
   * @param destination aligned pool offset of the word that will hold {@code r.offset()}
   * @return this
   */
  public Publication publish(Reservation r, long destination) {
    checkReservation(r, 2);
    redo.or(r.ownedWord, r.ownedMask);
    redo.set(destination, r.offset);
    addReservation(r);
    return this;
  }

  /** {@link #publish(Reservation, long)} through the seam: {@code r} must be a {@link Reservation}. */
  @Override
  public Publication publish(SchemeAllocator.Reserved r, long destination) {
    return publish(AllocatorSeam.own(r), destination);
  }

  /** {@link #publish(Reservation)} through the seam: {@code r} must be a {@link Reservation}. */
  @Override
  public Publication publish(SchemeAllocator.Reserved r) {
    return publish(AllocatorSeam.own(r));
  }

  /**
   * Publishes a reservation without storing its offset anywhere: for a block that a {@link #set}
   * of this step (or a word the block is linked from) makes reachable.
   *
   * @param r a reservation of this allocator, not yet published or cancelled
   * @return this
   */
  public Publication publish(Reservation r) {
    checkReservation(r, 1);
    redo.or(r.ownedWord, r.ownedMask);
    addReservation(r);
    return this;
  }

  /**
   * Adds a SET action: stores {@code value} into the word at {@code offset}.
   *
   * @param offset aligned pool offset, in the heap or a root word
   * @param value the value
   * @return this
   */
  @Override
  public Publication set(long offset, long value) {
    checkOpen();
    redo.set(offset, value);
    return this;
  }

  /**
   * Frees an owned block as part of this step: it is free persistently when the step commits, and
   * reused only after a grace period ({@link DeferredFree}).
   *
   * @param block the block's offset
   * @return this
   * @throws IllegalArgumentException if it is not an owned block, or is already freed in this step
   */
  @Override
  public Publication deferFree(long block) {
    checkOpen();
    room(1);
    allocator.checkFreeable(block);
    for (int i = 0; i < frees; i++) {
      if (freed[i] == block) {
        throw new IllegalArgumentException("block " + block + " is freed twice in one step");
      }
    }
    redo.andNot(allocator.ownedWord(block), allocator.ownedMask(block));
    freed[frees++] = block;
    return this;
  }

  /** Makes the step durable and applied (see {@link Redo#commit()}). */
  @Override
  public void commit() {
    checkOpen();
    redo.commit();
    for (int i = 0; i < published; i++) {
      Reservation r = reservations[i];
      r.state = Reservation.PUBLISHED;
      r.pending = false;
      reservations[i] = null;
    }
    published = 0;
    for (int i = 0; i < frees; i++) {
      allocator.retire(freed[i]);
    }
    frees = 0;
  }

  /** Gives the lane back; a step not committed is discarded (its reservations stay reserved). */
  @Override
  public void close() {
    if (redo == null) {
      return;
    }
    for (int i = 0; i < published; i++) {
      reservations[i].pending = false;
      reservations[i] = null;
    }
    published = 0;
    frees = 0;
    Redo r = redo;
    redo = null;
    r.close();
  }

  private void checkOpen() {
    if (redo == null) {
      throw new IllegalStateException("this publication is closed: take a new one from Allocator.begin()");
    }
  }

  private void room(int actions) {
    if (redo.remaining() < actions) {
      throw new LaneOverflowException(
          "one atomic step holds at most " + redo.capacity() + " redo actions; this one has "
              + redo.actions() + " and needs " + actions + " more; create the pool with larger"
              + " lanes: PoolOptions.withGeometry(lanes, laneBytes, chunkBytes)");
    }
  }

  private void checkReservation(Reservation r, int actions) {
    checkOpen();
    if (r.allocator != allocator) {
      throw new IllegalArgumentException(r + " is not from this pool's allocator");
    }
    if (r.state != Reservation.RESERVED || r.pending) {
      throw new IllegalStateException(r + " cannot be published: "
          + (r.pending ? "it is already in a step" : "it is not reserved any more"));
    }
    room(actions);
  }

  private void addReservation(Reservation r) {
    r.pending = true;
    reservations[published++] = r;
  }
}
