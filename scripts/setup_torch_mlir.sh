#!/usr/bin/env bash
# Installs PyPI's torch-mlir (the 20261001 wheel: 80 MB, its own MLIR and
# FX importer; it requires numpy and packaging and does not pin torch) into
# a virtual environment under the build tree, once: a no-op (silent) when
# the venv already has it. torch, torchvision and transformers are not
# installed twice: the venv reads them from the torch venv
# (scripts/setup_torch.sh, set up first) through a .pth file. Used by
# scripts/zoo_linalg.py (the zoo through torch-mlir to linalg, then
# convert-linalg-to-doppler) and python/tests/test_zoo_linalg.py.
#   scripts/setup_torch_mlir.sh [VENV]  (default: $DOPPLER_BUILD_DIR or build/, + torch-mlir-venv)
# Prints the venv's python on success; exit status 1 if the install failed.
# Measured here: 10 s with the torch venv in place (the wheel from PyPI in 5 s).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DOPPLER_BUILD_DIR:-$root/build}
venv=${1:-$build/torch-mlir-venv}
torch_python=$(bash "$root/scripts/setup_torch.sh" | tail -n 1)
torch_site=$("$torch_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
source "$root/scripts/venv.sh"
# torch-mlir's wheel is cp311 like the torch venv: the venv uses the same
# Python, and numpy/packaging come from the torch venv (--no-deps).
PYTHON=$(readlink -f "$torch_python") install_venv "$venv" .doppler-torch-mlir-20261001 \
  "torch-mlir 20261001" --no-deps "torch-mlir==20261001"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
[[ -f $site/doppler-torch-venv.pth ]] || echo "$torch_site" > "$site/doppler-torch-venv.pth"
echo "$venv/bin/python"
