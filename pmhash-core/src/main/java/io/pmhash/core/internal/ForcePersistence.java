package io.pmhash.core.internal;

import io.pmhash.core.Persistence;
import java.lang.foreign.MemorySegment;

/**
 * {@link io.pmhash.core.Durability#MSYNC}, and the fallback of the PMEM modes when the native
 * shim is not loaded: each thread remembers the span of the lines it flushed since its last
 * drain, and the drain msyncs ({@link MemorySegment#force()}) the pages of that span.
 */
public final class ForcePersistence extends Persistence {
  private static final long PAGE = 4096;

  /** Per thread: {lowest dirty offset, highest dirty end}; empty when low &gt;= high. */
  private final ThreadLocal<long[]> dirty = ThreadLocal.withInitial(() -> new long[] {Long.MAX_VALUE, 0});

  private final String description;
  private volatile MemorySegment memory;

  /**
   * @param description what {@link #describe()} says, e.g. why this path is used
   */
  public ForcePersistence(String description) {
    this.description = description;
  }

  @Override
  protected void mapped(MemorySegment memory) {
    this.memory = memory;
  }

  @Override
  protected void flushLines(long offset, long length) {
    long[] span = dirty.get();
    span[0] = Math.min(span[0], offset);
    span[1] = Math.max(span[1], offset + length);
  }

  @Override
  protected void drainFlushes() {
    long[] span = dirty.get();
    if (span[0] >= span[1]) {
      return;
    }
    MemorySegment m = memory;
    long from = span[0] & -PAGE;
    long to = Math.min(m.byteSize(), (span[1] + PAGE - 1) & -PAGE);
    span[0] = Long.MAX_VALUE;
    span[1] = 0;
    if (m.isMapped() && from < to) {
      m.asSlice(from, to - from).force();
    }
  }

  @Override
  public String describe() {
    return description;
  }
}
