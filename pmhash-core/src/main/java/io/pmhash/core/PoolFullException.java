package io.pmhash.core;

/**
 * The pool could not grow to hold what an operation needed: it reached its {@link
 * PoolOptions#maxSize() maximum size}, or the file system is out of space. The operation that
 * got it changed nothing; everything already stored is intact.
 */
public final class PoolFullException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what was needed, the limit, and what to do
   * @param cause the I/O failure, or null when the limit was the pool's maximum size
   */
  public PoolFullException(String message, Throwable cause) {
    super(message, cause);
  }
}
