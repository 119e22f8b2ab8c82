package io.pmhash.core;

import java.io.IOException;

/**
 * A pool file could not be created or opened. Subclasses name the cause; the message says what
 * was wrong and what to do. A failed open never modifies the file.
 */
public class PoolException extends IOException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what was wrong and what to do
   */
  public PoolException(String message) {
    super(message);
  }

  /**
   * @param message what was wrong and what to do
   * @param cause the underlying failure
   */
  public PoolException(String message, Throwable cause) {
    super(message, cause);
  }
}
