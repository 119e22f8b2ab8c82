package io.pmhash.core.internal;

import io.pmhash.core.Persistence;

/**
 * {@link io.pmhash.core.Durability#PROCESS} and {@link io.pmhash.core.Durability#VOLATILE}: no
 * write-back at all. The release fences that {@link Persistence} issues around every flush and
 * drain keep the compiler from reordering stores across a persist point, which is what a
 * process crash can observe (the CPU's stores reach the shared page cache in program order on
 * x86-TSO).
 */
public final class OrderingPersistence extends Persistence {
  private final String description;

  /**
   * @param description what {@link #describe()} says
   */
  public OrderingPersistence(String description) {
    this.description = description;
  }

  @Override
  protected void flushLines(long offset, long length) {}

  @Override
  protected void drainFlushes() {}

  @Override
  public String describe() {
    return description;
  }
}
