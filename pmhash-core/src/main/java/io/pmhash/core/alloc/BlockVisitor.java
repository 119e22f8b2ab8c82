package io.pmhash.core.alloc;

/** Receives blocks from {@link Allocator#forEachOwned}. */
@FunctionalInterface
public interface BlockVisitor {
  /**
   * @param offset the block's pool offset
   * @param size its usable size
   */
  void visit(long offset, long size);
}
