package io.pmhash.core.internal;

import io.pmhash.core.Durability;
import io.pmhash.core.Persistence;

/** Which {@link Persistence} serves a resolved durability mode. */
public final class PersistenceChoice {
  private PersistenceChoice() {}

  /** How the fallback of the PMEM modes describes itself; followed by the reason and ")". */
  public static final String FALLBACK_PREFIX = "JDK MemorySegment.force (native shim not loaded: ";

  /**
   * @param mode a resolved mode (not {@link Durability#AUTO})
   * @param shimLoaded whether the native shim is loaded
   * @return a new persistence for a pool in that mode
   */
  public static Persistence forMode(Durability mode, boolean shimLoaded) {
    return switch (mode) {
      case PMEM, PMEM_EMULATED -> shimLoaded
          ? new NativePersistence()
          : new ForcePersistence(FALLBACK_PREFIX + java.util.Objects.requireNonNullElse(
              NativeShim.unavailableReason(), "not chosen") + ")");
      case MSYNC -> new ForcePersistence("msync of the flushed range at each drain");
      case PROCESS -> new OrderingPersistence("none (PROCESS: ordering only; survives kill -9, not power loss)");
      case VOLATILE -> new OrderingPersistence("none (VOLATILE: anonymous memory)");
      case AUTO -> throw new IllegalArgumentException("AUTO is resolved before a persistence is chosen");
    };
  }
}
