package io.pmhash.core.alloc;

/**
 * pmhash's own {@link Allocator} behind the {@link SchemeAllocator} seam: every call is the
 * allocator's, unchanged (same redo steps, same drains, same grace queue); the seam only adapts
 * the types. Its reservations are {@link Reservation}s.
 */
final class AllocatorSeam implements SchemeAllocator {
  private final Allocator allocator;

  AllocatorSeam(Allocator allocator) {
    this.allocator = allocator;
  }

  @Override
  public Reserved reserve(long size) {
    return allocator.reserve(size);
  }

  @Override
  public void cancel(Reserved r) {
    allocator.cancel(own(r));
  }

  @Override
  public void publishUnlinked(Reserved[] rs) {
    Reservation[] own = new Reservation[rs.length];
    for (int i = 0; i < rs.length; i++) {
      own[i] = own(rs[i]);
    }
    allocator.publishUnlinked(own);
  }

  @Override
  public void publish(Reserved r, long destination) {
    allocator.publish(own(r), destination);
  }

  @Override
  public Step begin() {
    return allocator.begin(); // a Publication is a Step: nothing allocated per step
  }

  @Override
  public void releaseRetired() {
    allocator.graceQueue().releaseRetired();
  }

  @Override
  public boolean owned(long block) {
    return allocator.owned(block);
  }

  @Override
  public long blockSize(long block) {
    return allocator.blockSize(block);
  }

  @Override
  public long blocksOwned() {
    return allocator.stats().blocksOwned();
  }

  static Reservation own(Reserved r) {
    if (r instanceof Reservation res) {
      return res;
    }
    throw new IllegalArgumentException(r + " is not a reservation of pmhash's allocator: publish it through the"
        + " allocator that reserved it");
  }
}
