package io.pmhash.core;

/** The pool was written in a format version this pmhash does not read. */
public final class FormatVersionException extends PoolException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what was wrong and what to do
   */
  public FormatVersionException(String message) {
    super(message);
  }

  /**
   * @param message what was wrong and what to do
   * @param cause the underlying failure
   */
  public FormatVersionException(String message, Throwable cause) {
    super(message, cause);
  }
}
