#!/usr/bin/env bash
# Installs today's PyTorch from PyPI (torch 2.15, torchvision, transformers
# 5.23, pytest, numpy) into a virtual environment under the build tree, once:
# a no-op (silent) when the venv already has them. The model zoo
# (python/tests/zoo) and the torch.export path are tested with it.
#   scripts/setup_torch.sh [VENV]    (default: $DOPPLER_BUILD_DIR or build/, + torch-venv)
# Prints the venv's python on success; exit status 1 if the install failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DOPPLER_BUILD_DIR:-$root/build}
venv=${1:-$build/torch-venv}
torch_version=2.15.*
transformers_version=5.23.*
stamp=$venv/.doppler-torch-2.15-transformers-5.23
if [[ -f $stamp && -x $venv/bin/python ]]; then
  echo "$venv/bin/python"; exit 0
fi
mkdir -p "$(dirname "$venv")"
python=${PYTHON:-python3}
log=$(mktemp)
if ! { "$python" -m venv "$venv" &&
       "$venv/bin/python" -m pip install --quiet --retries 1 --timeout 120 \
         "torch==$torch_version" torchvision "transformers==$transformers_version" \
         pytest numpy; } >"$log" 2>&1; then
  cat "$log" >&2; rm -f "$log"
  echo "setup_torch.sh: could not install torch $torch_version into $venv" >&2
  exit 1
fi
rm -f "$log"
touch "$stamp"
echo "$venv/bin/python"
