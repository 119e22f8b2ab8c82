package io.pmhash.schemes;

import java.util.List;

/** The schemes this build of pmhash implements, by the name recorded in a pool header. */
public final class Schemes {
  private Schemes() {}

  /**
   * Names of the schemes available in this build, in the form stored in the pool header.
   *
   * @return the scheme names
   */
  public static List<String> available() {
    return List.of(io.pmhash.schemes.dash.DashEhProvider.NAME);
  }
}
