#!/usr/bin/env bash
# Configures (once) and builds Doppler into build/. Extra arguments are
# ninja targets (default: everything).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DOPPLER_BUILD_DIR:-$root/build}
if [[ ! -f $build/build.ninja ]]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
fi
ninja -C "$build" "$@"
