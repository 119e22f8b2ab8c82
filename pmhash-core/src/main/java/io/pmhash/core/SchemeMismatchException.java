package io.pmhash.core;

/** The pool holds a different scheme (or scheme layout version) than the one asked for. */
public final class SchemeMismatchException extends PoolException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what was wrong and what to do
   */
  public SchemeMismatchException(String message) {
    super(message);
  }

  /**
   * @param message what was wrong and what to do
   * @param cause the underlying failure
   */
  public SchemeMismatchException(String message, Throwable cause) {
    super(message, cause);
  }
}
