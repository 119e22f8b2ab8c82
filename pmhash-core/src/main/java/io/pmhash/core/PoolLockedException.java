package io.pmhash.core;

/** Another opener (in this or another process) holds the pool's file lock. */
public final class PoolLockedException extends PoolException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what was wrong and what to do
   */
  public PoolLockedException(String message) {
    super(message);
  }

  /**
   * @param message what was wrong and what to do
   * @param cause the underlying failure
   */
  public PoolLockedException(String message, Throwable cause) {
    super(message, cause);
  }
}
