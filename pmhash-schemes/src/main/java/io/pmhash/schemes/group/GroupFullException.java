package io.pmhash.schemes.group;

/**
 * An insert found its group full in a table created without expansion ({@code expand=0}), the
 * paper's fixed-size table (Algorithm 1 line 25 returns FALSE), or a table at its largest size.
 * Nothing was changed: every stored record is still there.
 */
public final class GroupFullException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what was full and what to do
   */
  public GroupFullException(String message) {
    super(message);
  }
}
