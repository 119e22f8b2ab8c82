package io.pmhash.core.internal;

import java.nio.file.Path;

/** Test access to the package-private loading steps of {@link NativeShim}. */
public final class NativeShimAccess {
  private NativeShimAccess() {}

  public static Object bind(Path library) throws Exception {
    return NativeShim.bind(library);
  }

  public static Path extract(String resource) throws Exception {
    return NativeShim.extract(resource);
  }
}
