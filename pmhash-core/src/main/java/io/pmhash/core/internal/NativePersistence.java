package io.pmhash.core.internal;

import io.pmhash.core.Persistence;
import java.lang.foreign.MemorySegment;

/**
 * {@link io.pmhash.core.Durability#PMEM} and {@link io.pmhash.core.Durability#PMEM_EMULATED}:
 * the native shim's flush instruction and fence. Any of the pool's mappings serves as the base,
 * since all of them show the same physical lines; the newest one is used.
 */
public final class NativePersistence extends Persistence {
  private volatile long base;

  /** Requires {@link NativeShim#available()}. */
  public NativePersistence() {
    if (!NativeShim.available()) {
      throw new IllegalStateException("native shim not loaded: " + NativeShim.unavailableReason());
    }
  }

  @Override
  protected void mapped(MemorySegment memory) {
    base = memory.address();
  }

  @Override
  protected void flushLines(long offset, long length) {
    NativeShim.flush(base + offset, length);
  }

  @Override
  protected void drainFlushes() {
    NativeShim.drain();
  }

  @Override
  public String describe() {
    return NativeShim.describe();
  }
}
