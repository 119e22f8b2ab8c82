#!/usr/bin/env bash
# Builds the native flush shim into $1/<os>-<arch>/libpmhash.so (the resource path
# NativeShim loads from). Never fails the Maven build: without gcc or on an
# unsupported OS/arch it prints why and the library falls back to the JDK path.
set -u
out_root=${1:?usage: build.sh OUTPUT_DIR}
src="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/pmhash.c"

case "$(uname -s)" in
  Linux) os=linux ;;
  *) echo "[pmhash native] $(uname -s) is not supported by the shim yet; the JDK flush path will be used."; exit 0 ;;
esac
case "$(uname -m)" in
  x86_64|amd64) arch=x86_64 ;;
  aarch64|arm64) arch=aarch64 ;;
  *) echo "[pmhash native] CPU $(uname -m) is not supported by the shim; the JDK flush path will be used."; exit 0 ;;
esac
cc=${CC:-gcc}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "[pmhash native] WARNING: no C compiler ('$cc' not found); the shim is not built and"
  echo "[pmhash native] the library will use the JDK's MemorySegment.force path. Install gcc to build it."
  exit 0
fi
out="$out_root/$os-$arch"
mkdir -p "$out"
if "$cc" -O2 -fPIC -shared -Wall -Wextra -Werror -std=c11 -o "$out/libpmhash.so" "$src"; then
  echo "[pmhash native] built $os-$arch/libpmhash.so with $("$cc" --version | head -n 1)"
else
  rm -f "$out/libpmhash.so"
  echo "[pmhash native] WARNING: $cc failed to build the shim; the JDK flush path will be used."
fi
exit 0
