package io.pmhash.core.log;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/** One lane's in-memory state: its lock and the reusable log objects bound to it. */
final class Lane {
  private static final VarHandle LOCKED;

  static {
    try {
      LOCKED = MethodHandles.lookup().findVarHandle(Lane.class, "locked", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final int index;
  /** Pool offset of the lane's first byte. */
  final long offset;
  final Redo redo;
  Tx tx;

  @SuppressWarnings("unused") // accessed through LOCKED
  private volatile int locked;

  /** Set when an operation failed half-way (an I/O error in a flush): the lane stays locked. */
  boolean poisoned;

  Lane(Lanes lanes, int index, long offset) {
    this.index = index;
    this.offset = offset;
    this.redo = new Redo(lanes, this);
  }

  boolean tryLock() {
    return (int) LOCKED.getOpaque(this) == 0 && LOCKED.compareAndSet(this, 0, 1);
  }

  boolean isLocked() {
    return (int) LOCKED.getVolatile(this) != 0;
  }

  void unlock() {
    LOCKED.setRelease(this, 0);
  }
}
