#!/usr/bin/env bash
# Configures (once) and builds Doppler into build/. Extra arguments are
# ninja targets (default: everything). DOPPLER_UNITY_BUILD=OFF configures a
# tree that compiles each source on its own.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DOPPLER_BUILD_DIR:-$root/build}
# A unity build (cmake/UnityBuild.cmake: each target's sources compiled up
# to 8 at a time as one translation unit): from scratch on 2 cores it takes
# 832 s of CPU instead of 1,506 s (measured 29 Nov, the same artifacts),
# since most of a source's compile is the MLIR, LibTorch and GoogleTest
# headers it includes. An edit recompiles its batch, not one file; configure
# a tree of your own with -DCMAKE_UNITY_BUILD=OFF for edit-compile loops.
# An existing build/ keeps the setting it was configured with.
if [[ ! -f $build/build.ninja ]]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_UNITY_BUILD="${DOPPLER_UNITY_BUILD:-ON}" >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
fi
ninja -C "$build" "$@"
