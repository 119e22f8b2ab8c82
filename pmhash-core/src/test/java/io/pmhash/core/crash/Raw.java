package io.pmhash.core.crash;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/** Raw words on a small pool: the tiny protocols the harness tests crash. */
final class Raw {
  private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle().withInvokeExactBehavior();

  /** One lane, 64 KiB chunks: a 128 KiB pool whose heap starts at 64 KiB. */
  static final PoolOptions OPTIONS =
      PoolOptions.defaults().withScheme("crash-test", 1).withGeometry(1, 512, 64 << 10).withInitialSize(128 << 10);

  private Raw() {}

  /** Offset of the {@code n}th cache line of the heap. */
  static long line(Pool pool, int n) {
    return pool.heapOffset() + 64L * n;
  }

  static long get(Pool pool, long offset) {
    return (long) WORD.getAcquire(pool.memory(), offset);
  }

  static void set(Pool pool, long offset, long value) {
    WORD.set(pool.memory(), offset, value);
  }

  static void setRelease(Pool pool, long offset, long value) {
    WORD.setRelease(pool.memory(), offset, value);
  }

  static long get(MemorySegment image, long offset) {
    return image.get(ValueLayout.JAVA_LONG_UNALIGNED, offset);
  }
}
