package io.pmhash.core;

/** The file is shorter than its header says: it was truncated (or copied in part). */
public final class TruncatedPoolException extends PoolException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what was wrong and what to do
   */
  public TruncatedPoolException(String message) {
    super(message);
  }

  /**
   * @param message what was wrong and what to do
   * @param cause the underlying failure
   */
  public TruncatedPoolException(String message, Throwable cause) {
    super(message, cause);
  }
}
