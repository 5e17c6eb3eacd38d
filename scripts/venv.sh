# Shared by scripts/setup_iree.sh and scripts/setup_torch.sh (sourced, not
# run): a virtual environment installed once and marked done with a stamp.
#   install_venv VENV STAMP WHAT PACKAGE...
# Creates VENV with ${PYTHON:-python3} and pip-installs the packages, quietly,
# then touches VENV/STAMP; a no-op when the stamp is there. On failure it
# prints pip's log and "NAME: could not install WHAT into VENV" to stderr
# and returns 1. --no-compile: the venvs hold 10-20 thousand Python files
# (torch 2.15 with transformers: 10,668) and byte-compiling them all takes
# about 40 s of CPU while the build wants both cores; Python compiles the
# modules a test imports when it first imports them.
install_venv() {
  local venv=$1 stamp=$2 what=$3
  shift 3
  [[ -f $venv/$stamp && -x $venv/bin/python ]] && return 0
  mkdir -p "$(dirname "$venv")"
  local python=${PYTHON:-python3} log
  log=$(mktemp)
  if ! { "$python" -m venv "$venv" &&
         "$venv/bin/python" -m pip install --quiet --no-compile --retries 1 --timeout 120 "$@"; } \
       >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"
    echo "$(basename "$0"): could not install $what into $venv" >&2
    return 1
  fi
  rm -f "$log"
  touch "$venv/$stamp"
}
