#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang-22 (ASan + UBSan, Doppler's
# code instrumented for coverage) into build-fuzz/ and fuzzes them.
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer args...]
#       TARGET: mlir, graph, system, plan, model, or all (each in turn)
#   scripts/fuzz.sh smoke [SECONDS]
#       the graph, system and plan targets at once, SECONDS each (default
#       10): what CI (scripts/test.sh) runs; the model and mlir targets'
#       builds are too heavy for it (LibTorch, MLIR)
# Each run starts from a copy of fuzz/corpus/TARGET (build-fuzz/corpus/TARGET
# keeps what it grows between runs) and runs at nice 19 with -max_len (per
# target), -rss_limit_mb=2048, -timeout=10. Crashes, leaks, timeouts and
# out-of-memory inputs are saved under build-fuzz/crashes/TARGET/. Prints one
# line per target, "fuzz TARGET: N executions in S s, K crashes", then
# "fuzz: N executions, K crashes"; exits non-zero on a crash or a failed
# build. DOPPLER_FUZZ_BUILD_DIR overrides build-fuzz/, DOPPLER_FUZZ_JOBS the
# build's parallelism (default 2); DOPPLER_FUZZ_SKIP_BUILD=1 skips the build,
# DOPPLER_FUZZ_BUILD_ONLY=1 stops after it.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DOPPLER_FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${DOPPLER_FUZZ_JOBS:-2}
all_targets=(mlir graph system plan model)
smoke_targets=(graph system plan)

usage() {
  echo "usage: $0 {mlir|graph|system|plan|model|all} SECONDS [libFuzzer args...]" >&2
  echo "       $0 smoke [SECONDS]" >&2
  exit 2
}
(( $# >= 1 )) || usage
mode=$1
case $1 in
  smoke) targets=("${smoke_targets[@]}"); seconds=${2:-10}; shift $(( $# >= 2 ? 2 : 1 )) ;;
  all) targets=("${all_targets[@]}"); seconds=${2:-}; shift 2 || usage ;;
  mlir|graph|system|plan|model) targets=("$1"); seconds=${2:-}; shift 2 || usage ;;
  *) usage ;;
esac
[[ $seconds =~ ^[0-9]+$ ]] || usage
extra=("$@")

max_len() {
  case $1 in
    mlir) echo 8192 ;;
    model) echo 32768 ;;
    *) echo 16384 ;;
  esac
}
# Per-target libFuzzer options. model: no leak check per input, since
# LibTorch leaks 4 KB on every malformed archive (fuzz/lsan.supp) and the
# check that then follows each input made it a hundred times slower (leaks
# are still checked when the process exits).
target_args() {
  case $1 in
    model) echo -detect_leaks=0 ;;
  esac
}

export CCACHE_BASEDIR=${CCACHE_BASEDIR:-/work} CCACHE_NOHASHDIR=1
if [[ ! -f $build/build.ninja ]]; then
  launcher=()
  command -v ccache >/dev/null &&
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  # -O1 (OSS-Fuzz's level for its ASan builds) and a unity build
  # (cmake/UnityBuild.cmake): the smoke run's three targets take 242 s of
  # CPU from scratch instead of 369 s at -O3 one source at a time, for
  # 86-98% of the executions in the same 10 s (29 Nov, seed corpora).
  nice -n 19 cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" \
    -DCMAKE_UNITY_BUILD=ON \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 "${launcher[@]}" \
    -DCMAKE_C_FLAGS=-gline-tables-only -DCMAKE_CXX_FLAGS=-gline-tables-only \
    -DDOPPLER_FUZZ=ON "-DDOPPLER_SANITIZE=address;undefined" \
    -DDOPPLER_BUILD_BENCHMARKS=OFF -DDOPPLER_ENABLE_CUDA=OFF \
    >"$build.configure.log" 2>&1 || {
      tail -n 40 "$build.configure.log"; echo "fuzz: configure failed"; exit 1; }
fi
binaries=()
for t in "${targets[@]}"; do binaries+=("doppler-fuzz-$t"); done
# One build at a time in the build tree (runs of this script may overlap);
# DOPPLER_FUZZ_SKIP_BUILD=1 runs the binaries as they are.
if [[ ${DOPPLER_FUZZ_SKIP_BUILD:-} != 1 ]] && ! flock "$build/.build.lock" nice -n 19 ninja -C "$build" -j "$jobs" "${binaries[@]}" >"$build.log" 2>&1; then
  tail -n 60 "$build.log"; echo "fuzz: build failed"; exit 1
fi
# DOPPLER_FUZZ_BUILD_ONLY=1 stops here (scripts/test.sh builds this tree
# in the background while other tests run, then fuzzes).
if [[ ${DOPPLER_FUZZ_BUILD_ONLY:-} == 1 ]]; then
  echo "fuzz: built"; exit 0
fi

# halt_on_error: the first finding is the crash; leaks are findings too.
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its slabs when
# compiled with ASan, as its inline code in our (instrumented) MLIR target
# is, while Debian's (uninstrumented) MLIR libraries allocate from the same
# slabs without unpoisoning: false use-after-poison reports otherwise.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:allocator_may_return_null=1:allow_user_poisoning=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$root/fuzz/lsan.supp:print_suppressions=0"
# One target's run: prints "fuzz TARGET: N executions in S s, K crashes"
# and, on a crash, its first lines and the saved inputs.
fuzz_target() {
  local t=$1 corpus=$build/corpus/$1 crashes=$build/crashes/$1 log=$build/fuzz-$1.log
  local before start status elapsed runs found
  mkdir -p "$corpus" "$crashes"
  cp -n "$root/fuzz/corpus/$t"/* "$corpus/" 2>/dev/null
  before=$(find "$crashes" -type f | wc -l)
  start=$(date +%s)
  nice -n 19 "$build/bin/doppler-fuzz-$t" "$corpus" -max_total_time="$seconds" \
    -max_len="$(max_len "$t")" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$crashes/" -print_final_stats=1 $(target_args "$t") "${extra[@]}" \
    >"$log" 2>&1
  status=$?
  elapsed=$(( $(date +%s) - start ))
  runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -n 1)
  if [[ -z $runs ]]; then  # killed before its final stats: the last status line
    runs=$(sed -nE 's/^#([0-9]+).*/\1/p' "$log" | tail -n 1)
  fi
  runs=${runs:-0}
  found=$(( $(find "$crashes" -type f | wc -l) - before ))
  if (( status != 0 && found == 0 )); then found=1; fi
  echo "fuzz $t: $runs executions in $elapsed s, $found crashes (log $log)"
  if (( found > 0 )); then
    grep -m 3 -E "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|==ERROR" "$log" | sed 's/^/  /'
    ls -t "$crashes" | head -n 3 | sed "s|^|  saved: $crashes/|"
  fi
}

# The smoke run's targets fuzz at once (each is bounded by time, not work:
# 10 s for all three instead of 30 s one after the other); a campaign runs
# its targets in turn, each with the machine to itself.
results=()
if [[ $mode == smoke ]]; then
  for t in "${targets[@]}"; do
    fuzz_target "$t" >"$build/fuzz-$t.result" &
  done
  wait
  for t in "${targets[@]}"; do results+=("$build/fuzz-$t.result"); done
else
  for t in "${targets[@]}"; do
    fuzz_target "$t" | tee "$build/fuzz-$t.result"
    results+=("$build/fuzz-$t.result")
  done
fi
total_runs=0; total_crashes=0
for r in "${results[@]}"; do
  [[ $mode == smoke ]] && cat "$r"
  line=$(head -n 1 "$r")
  if [[ $line =~ :\ ([0-9]+)\ executions\ in\ [0-9]+\ s,\ ([0-9]+)\ crashes ]]; then
    total_runs=$(( total_runs + BASH_REMATCH[1] )); total_crashes=$(( total_crashes + BASH_REMATCH[2] ))
  else
    total_crashes=$(( total_crashes + 1 ))  # no summary: the run itself failed
  fi
done
echo "fuzz: $total_runs executions, $total_crashes crashes"
(( total_crashes == 0 ))
