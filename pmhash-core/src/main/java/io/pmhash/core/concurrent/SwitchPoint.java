package io.pmhash.core.concurrent;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A place where a model checker may switch threads: for checking the schemes' concurrency with
 * Lincheck's model checker, which switches threads only at the shared-memory accesses it
 * instruments (fields, arrays, atomics) and cannot see a load or store through a {@code
 * MemorySegment} view {@code VarHandle}, i.e. any access to pool memory. Each synchronization
 * step of pmhash's protocols calls {@link #here()} before its pool access: a {@link VersionLock}
 * read, CAS or release store, a scheme's own lock word, a {@code Persistence} drain (between the
 * persist steps of a write). With the system property {@code pmhash.modelCheck=true} at class
 * initialisation each call reads an atomic the checker sees, so it can run another thread there;
 * otherwise {@link #ENABLED} is a constant {@code false} and the JIT removes the call.
 *
 * <p>Not for applications: it only slows them down.
 */
public final class SwitchPoint {
  /** Whether switch points touch shared memory: {@code -Dpmhash.modelCheck=true}, read once. */
  public static final boolean ENABLED = Boolean.getBoolean("pmhash.modelCheck");

  private static final AtomicInteger POINT = new AtomicInteger();

  private SwitchPoint() {}

  /** A possible thread switch for a model checker; nothing otherwise. */
  public static void here() {
    if (ENABLED) {
      POINT.get();
    }
  }
}
