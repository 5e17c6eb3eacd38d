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
source "$root/scripts/venv.sh"
install_venv "$venv" .doppler-torch-2.15-transformers-5.23 "torch 2.15" \
  "torch==2.15.*" torchvision "transformers==5.23.*" pytest numpy
echo "$venv/bin/python"
