package io.pmhash.core.log;

/**
 * An operation needed more room in its lane than the lane has: too many redo actions in one
 * atomic publish, or too many or too large snapshots in one transaction. Nothing was made
 * durable by the call that threw; a transaction stays open and rolls back when closed. The lane
 * size is fixed when a pool is created ({@link io.pmhash.core.PoolOptions#withGeometry}).
 */
public final class LaneOverflowException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what overflowed, the limit, and how to raise it
   */
  public LaneOverflowException(String message) {
    super(message);
  }
}
