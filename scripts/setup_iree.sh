#!/usr/bin/env bash
# Installs IREE's compiler and runtime (PyPI iree-base-compiler and
# iree-base-runtime 3.13, with numpy) into a virtual environment under the
# build tree, once: a no-op (silent) when the venv already has them.
#   scripts/setup_iree.sh [VENV]     (default: $DOPPLER_BUILD_DIR or build/, + iree-venv)
# Prints the venv's bin directory on success; exit status 1 if the install
# failed (no network, no wheels for this platform).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DOPPLER_BUILD_DIR:-$root/build}
venv=${1:-$build/iree-venv}
version=3.13.0
source "$root/scripts/venv.sh"
install_venv "$venv" ".doppler-iree-$version" "IREE $version" \
  "iree-base-compiler==$version" "iree-base-runtime==$version" numpy
echo "$venv/bin"
