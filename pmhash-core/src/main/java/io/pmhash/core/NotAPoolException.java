package io.pmhash.core;

/** The file does not start with the pmhash magic: it is not a pmhash pool (or its first bytes were overwritten). */
public final class NotAPoolException extends PoolException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what was wrong and what to do
   */
  public NotAPoolException(String message) {
    super(message);
  }

  /**
   * @param message what was wrong and what to do
   * @param cause the underlying failure
   */
  public NotAPoolException(String message, Throwable cause) {
    super(message, cause);
  }
}
