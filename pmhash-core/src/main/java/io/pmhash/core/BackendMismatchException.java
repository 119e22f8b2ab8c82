package io.pmhash.core;

/**
 * The file holds a pool of another backend than the one {@link PoolOptions#withBackend} named
 * (e.g. an llpl pool opened as an FFM file). Nothing was written to the file.
 */
public final class BackendMismatchException extends PoolException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what was found, what was asked for, and what to do
   */
  public BackendMismatchException(String message) {
    super(message);
  }
}
