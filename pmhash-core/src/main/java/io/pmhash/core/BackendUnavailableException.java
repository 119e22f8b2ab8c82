package io.pmhash.core;

/**
 * The pool backend a file holds, or that a create asked for, cannot run here: its module is not
 * on the class or module path, or the native library it needs is not installed. The message names
 * what to add or install. Nothing was written to any file.
 */
public final class BackendUnavailableException extends PoolException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what was missing and what to do
   */
  public BackendUnavailableException(String message) {
    super(message);
  }

  /**
   * @param message what was missing and what to do
   * @param cause the underlying failure (a link error, a missing class)
   */
  public BackendUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
