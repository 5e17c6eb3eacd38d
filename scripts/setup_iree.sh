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
stamp=$venv/.doppler-iree-$version
if [[ -f $stamp && -x $venv/bin/iree-compile && -x $venv/bin/iree-run-module ]]; then
  echo "$venv/bin"; exit 0
fi
mkdir -p "$(dirname "$venv")"
python=${PYTHON:-python3}
log=$(mktemp)
if ! { "$python" -m venv "$venv" &&
       "$venv/bin/python" -m pip install --quiet --retries 1 --timeout 60 \
         "iree-base-compiler==$version" "iree-base-runtime==$version" numpy; } >"$log" 2>&1; then
  cat "$log" >&2; rm -f "$log"
  echo "setup_iree.sh: could not install IREE $version into $venv" >&2
  exit 1
fi
rm -f "$log"
touch "$stamp"
echo "$venv/bin"
