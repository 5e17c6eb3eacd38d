#!/usr/bin/env bash
# Sets up, builds and runs every test: the lit regression tests and the
# GoogleTest suites (lit runs both), then the Python frontend's pytest suite
# (python/tests, under Debian's torch 1.13 and under PyPI's torch 2.15 with
# the model zoo), the MLIR-free tests under ASan+UBSan
# (scripts/sanitize.sh address) and a libFuzzer smoke run (scripts/fuzz.sh
# smoke). Ends with one line "tests: N passed, M failed[, K
# skipped]" (all of them together) and a non-zero status if anything failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DOPPLER_BUILD_DIR:-$root/build}
bash "$root/scripts/setup.sh" || exit 1

# The virtual environments under the build tree (installed once, no-ops
# afterwards): IREE 3.13 for test/Integration/IREE, and today's PyTorch
# (2.15, torchvision, transformers 5.23) for the torch.export path and the
# model zoo. They download while the build compiles (network against CPU),
# which saves their install time (3-4 minutes) on a fresh machine.
mkdir -p "$build"
DOPPLER_BUILD_DIR="$build" bash "$root/scripts/setup_iree.sh" >"$build/setup-iree.log" 2>&1 &
iree_pid=$!
DOPPLER_BUILD_DIR="$build" bash "$root/scripts/setup_torch.sh" >"$build/setup-torch.log" 2>&1 &
torch_pid=$!

bash "$root/scripts/build.sh" >"$root/build.log" 2>&1 || {
  tail -n 60 "$root/build.log"; echo "tests: 0 passed, 1 failed (build failed)"; exit 1; }

# Without IREE those tests report themselves unsupported, and without torch
# 2.15 its tests are skipped; in CI (CI=true) both must run, so a failed
# install fails the run.
if ! wait "$iree_pid"; then
  cat "$build/setup-iree.log"
  if [[ ${CI:-} == true ]]; then
    echo "tests: 0 passed, 1 failed (IREE could not be installed)"; exit 1
  fi
  echo "IREE 3.13 not installed: test/Integration/IREE will be unsupported"
fi
torch_python=
if wait "$torch_pid"; then
  torch_python=$(tail -n 1 "$build/setup-torch.log")
else
  cat "$build/setup-torch.log"
  if [[ ${CI:-} == true ]]; then
    echo "tests: 0 passed, 1 failed (torch 2.15 could not be installed)"; exit 1
  fi
  echo "torch 2.15 not installed: the torch.export path and the model zoo are not tested"
fi

# The sanitizer and fuzz trees (build-asan/, build-fuzz/: about 7 and 2
# minutes of both cores from scratch) compile at nice 19 in the background
# while check-doppler and pytest run, one after the other: those leave a
# core idle much of the time (lit's tests that wait, one busy pytest process
# once Debian's has finished), and nice 19 takes what nobody else wants.
# Their steps below wait for it, then rebuild (nothing left to do, or the
# failure reported there).
prebuild_pid=
if [[ ${DOPPLER_SKIP_SANITIZE:-} != 1 || ${DOPPLER_SKIP_FUZZ:-} != 1 ]]; then
  (
    if [[ ${DOPPLER_SKIP_SANITIZE:-} != 1 ]]; then
      DOPPLER_BUILD_DIR="$build" DOPPLER_SANITIZE_BUILD_ONLY=1 \
        nice -n 19 bash "$root/scripts/sanitize.sh" address
    fi
    if [[ ${DOPPLER_SKIP_FUZZ:-} != 1 ]] && command -v clang++-22 >/dev/null; then
      DOPPLER_FUZZ_BUILD_ONLY=1 nice -n 19 bash "$root/scripts/fuzz.sh" smoke
    fi
  ) >"$build/prebuild.log" 2>&1 &
  prebuild_pid=$!
fi

log=$(mktemp)
rm -f "$build/iree-summary.txt"
ninja -C "$build" check-doppler 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [[ -f $build/iree-summary.txt ]]; then
  echo "IREE integration (test/Integration/IREE):"
  sed 's/^/  /' "$build/iree-summary.txt"
fi
# lit's summary lines: "  Passed: 12" or, padded when other kinds appear,
# "  Passed : 12".
count() { sed -nE "s/^ *$1[^:]*: *([0-9]+).*/\1/p" "$log" | awk '{ n += $1 } END { print n + 0 }'; }
passed=$(( $(count Passed) + $(count Expectedly) ))
failed=$(( $(count Failed) + $(count Unexpectedly) + $(count Unresolved) + $(count Timed) ))
skipped=$(( $(count Unsupported) + $(count Skipped) ))
if (( status != 0 && failed == 0 )); then failed=1; fi

# The Python frontend's pytest suite, twice: under Debian's torch 1.13
# (/usr/bin/python3: python3 on PATH may be another one, without
# python3-torch; the fx tracers and make_fx, and the zoo's torchvision
# models with Debian's torchvision 0.14), and under today's PyTorch from
# PyPI (the torch-venv above: torch.export, Core ATen and the whole model
# zoo of python/tests/zoo). The two run at once, each
# into its own log printed when both are done: each is mostly one busy
# process (torch pinned to one thread) waiting on the tools it calls, so
# on 2 cores they overlap instead of queueing (the two took 1.5 and 5.4
# minutes one after the other on a built tree). Each summary line reads
# "96 passed, 1 skipped in 15.86s".
# --durations lists each suite's ten slowest tests in the log: where the
# next cut of the suite's time would come from.
pytest_in() {
  DOPPLER_BUILD_DIR="$build" "$1" -m pytest -q -p no:cacheprovider --durations=10 "$root/python/tests" \
    >"$2" 2>&1
}
count_pytest() {
  local pytest_status=$1 summary
  cat "$2"
  summary=$(tail -n 1 "$2")
  pycount() { sed -nE "s/.*[^0-9]([0-9]+) $1.*/\1/p; s/^([0-9]+) $1.*/\1/p" <<<"$summary" | head -n 1; }
  local py_passed py_failed py_errors py_skipped
  py_passed=$(pycount passed); py_failed=$(pycount failed); py_errors=$(pycount error)
  py_skipped=$(pycount skipped)
  passed=$(( passed + ${py_passed:-0} ))
  failed=$(( failed + ${py_failed:-0} + ${py_errors:-0} ))
  skipped=$(( skipped + ${py_skipped:-0} ))
  if (( pytest_status != 0 && ${py_failed:-0} + ${py_errors:-0} == 0 )); then failed=$(( failed + 1 )); fi
  if (( pytest_status != 0 )); then status=1; fi
}
debian_log=$(mktemp); torch_log=$(mktemp)
pytest_in /usr/bin/python3 "$debian_log" &
debian_pid=$!
torch_status=0
if [[ -n $torch_python ]]; then
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 pytest_in "$torch_python" "$torch_log"
  torch_status=$?
fi
wait "$debian_pid"
count_pytest $? "$debian_log"
if [[ -n $torch_python ]]; then
  count_pytest "$torch_status" "$torch_log"
else
  skipped=$(( skipped + 1 ))
fi
rm -f "$debian_log" "$torch_log"

# The background builds of the sanitizer and fuzz trees (above) first.
[[ -n $prebuild_pid ]] && wait "$prebuild_pid"

# The MLIR-free tests again under ASan+UBSan (scripts/sanitize.sh, its own
# build in build-asan/, done above in the background). Each binary it runs
# counts as one test; a finding fails it. DOPPLER_SKIP_SANITIZE=1 leaves it
# out.
if [[ ${DOPPLER_SKIP_SANITIZE:-} != 1 ]]; then
  DOPPLER_BUILD_DIR="$build" bash "$root/scripts/sanitize.sh" address 2>&1 | tee "$log"
  sanitize_status=${PIPESTATUS[0]}
  san_passed=$(sed -nE 's/^sanitize \(address\): ([0-9]+) passed.*/\1/p' "$log")
  san_failed=$(sed -nE 's/^sanitize \(address\): [0-9]+ passed, ([0-9]+) failed.*/\1/p' "$log")
  passed=$(( passed + ${san_passed:-0} ))
  failed=$(( failed + ${san_failed:-0} ))
  if (( sanitize_status != 0 && ${san_failed:-0} == 0 )); then failed=$(( failed + 1 )); fi
  if (( sanitize_status != 0 )); then status=1; fi
fi

# A short libFuzzer run of the MLIR-free parsers (scripts/fuzz.sh smoke: the
# graph, system and plan targets, 10 s each, after the clang-22 ASan+UBSan
# build in build-fuzz/ above). Each
# target counts as one test; a crash fails it. The corpora themselves are
# replayed by check-doppler (test/Fuzz). Without clang-22 it counts as one
# skipped test; DOPPLER_SKIP_FUZZ=1 leaves it out.
if [[ ${DOPPLER_SKIP_FUZZ:-} != 1 ]]; then
  if command -v clang++-22 >/dev/null; then
    bash "$root/scripts/fuzz.sh" smoke 2>&1 | tee "$log"
    fuzz_status=${PIPESTATUS[0]}
    fuzz_passed=$(grep -cE '^fuzz [a-z]+: .*, 0 crashes' "$log")
    fuzz_failed=$(grep -cE '^fuzz [a-z]+: .*, [1-9][0-9]* crashes' "$log")
    passed=$(( passed + fuzz_passed ))
    failed=$(( failed + fuzz_failed ))
    if (( fuzz_status != 0 && fuzz_failed == 0 )); then failed=$(( failed + 1 )); fi
    if (( fuzz_status != 0 )); then status=1; fi
  else
    echo "clang++-22 not found: the fuzz smoke run is skipped"
    skipped=$(( skipped + 1 ))
  fi
fi
rm -f "$log"
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit "$status"
