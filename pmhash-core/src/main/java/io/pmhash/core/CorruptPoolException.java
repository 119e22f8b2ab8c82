package io.pmhash.core;

/** The header's checksum or a header field is invalid: the file was damaged. */
public final class CorruptPoolException extends PoolException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what was wrong and what to do
   */
  public CorruptPoolException(String message) {
    super(message);
  }

  /**
   * @param message what was wrong and what to do
   * @param cause the underlying failure
   */
  public CorruptPoolException(String message, Throwable cause) {
    super(message, cause);
  }
}
