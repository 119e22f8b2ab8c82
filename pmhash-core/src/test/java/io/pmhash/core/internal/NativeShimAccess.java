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

  public static Path inMemoryFile(byte[] bytes) {
    return NativeShim.inMemoryFile(bytes);
  }

  public static Path temporaryFile(byte[] bytes) throws Exception {
    return NativeShim.temporaryFile(bytes, "test bytes");
  }

  public static String resource() {
    return "/native/" + NativeShim.platform() + "/libpmhash.so";
  }
}
