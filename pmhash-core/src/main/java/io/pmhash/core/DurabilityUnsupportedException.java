package io.pmhash.core;

/** The durability mode asked for cannot be provided for this file on this machine. */
public final class DurabilityUnsupportedException extends PoolException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what was wrong and what to do
   */
  public DurabilityUnsupportedException(String message) {
    super(message);
  }

  /**
   * @param message what was wrong and what to do
   * @param cause the underlying failure
   */
  public DurabilityUnsupportedException(String message, Throwable cause) {
    super(message, cause);
  }
}
