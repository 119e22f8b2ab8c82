package io.pmhash.core.alloc;

/**
 * A block handed out by {@link Allocator#reserve} and not yet owned: the caller fills it, then
 * {@link Allocator#publish publishes} it (owned, and its offset stored in a destination word,
 * atomically with respect to a crash) or {@link Allocator#cancel cancels} it. A crash before the
 * publish leaks nothing: persistently the block was never owned.
 */
public final class Reservation implements SchemeAllocator.Reserved {
  static final int RESERVED = 0;
  static final int PUBLISHED = 1;
  static final int CANCELLED = 2;

  final Allocator allocator;
  final long offset;
  final long size;
  final long ownedWord;
  final long ownedMask;
  int state;
  boolean pending;

  Reservation(Allocator allocator, long offset, long size, long ownedWord, long ownedMask) {
    this.allocator = allocator;
    this.offset = offset;
    this.size = size;
    this.ownedWord = ownedWord;
    this.ownedMask = ownedMask;
  }

  /** @return the block's pool offset (64-byte aligned from 64 bytes, 16-byte aligned below) */
  @Override
  public long offset() {
    return offset;
  }

  /** @return the block's usable size: at least what was asked for */
  @Override
  public long size() {
    return size;
  }

  /** @return true once a publish of it has committed */
  public boolean isPublished() {
    return state == PUBLISHED;
  }

  @Override
  public String toString() {
    return "Reservation[" + offset + ", " + size + " bytes, "
        + (state == RESERVED ? "reserved" : state == PUBLISHED ? "published" : "cancelled") + "]";
  }
}
