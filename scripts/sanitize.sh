#!/usr/bin/env bash
# Builds the MLIR-free test binaries with sanitizers and runs them, or the
# whole suite (full).
#   scripts/sanitize.sh [address|thread|thread-learning|full]   (default: address)
# address: ASan + UBSan into build-asan/, runs DopplerSupportTests,
#          DopplerPlacementTests, DopplerRuntimeTests, DopplerPlanTests and
#          doppler-run-plan on plans.
# thread:  TSan into build-tsan/, runs the runtime ones (the executor is
#          multi-threaded): DopplerRuntimeTests, DopplerPlanTests,
#          doppler-run-plan.
# thread-learning: TSan into build-tsan-learning/ with LibTorch on (not
#          instrumented itself), runs DopplerLearningTests (the learned
#          policy, training, the loader dlopening the library).
# full:    ASan + UBSan into build-asan-full/ with LibTorch on (not
#          instrumented itself): builds everything check-doppler needs (the
#          MLIR tools, the passes, every GoogleTest binary) and runs the whole
#          lit suite (test/ and the GoogleTest suites) with the instrumented
#          binaries, 2 jobs at nice 15. Too long for CI (see README).
# Any finding fails its binary (halt_on_error, no UBSan recovery). CUDA is
# off, LibTorch too but in thread-learning and full; prebuilt libraries
# (GoogleTest, nlohmann_json headers aside) are not instrumented. Ends with
# one line "sanitize (KIND): N passed, M failed" and a non-zero status on
# failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:-address}
case $kind in
  address) build=${DOPPLER_SANITIZE_BUILD_DIR:-$root/build-asan}; sanitize="address;undefined"
           tests=(DopplerSupportTests DopplerPlacementTests DopplerRuntimeTests DopplerPlanTests) ;;
  thread)  build=${DOPPLER_SANITIZE_BUILD_DIR:-$root/build-tsan}; sanitize="thread"
           tests=(DopplerRuntimeTests DopplerPlanTests) ;;
  thread-learning)
           # The learned policy and its training (LibTorch on, not
           # instrumented itself), under TSan: about 8 minutes to build on
           # 2 cores, 35 s to run.
           build=${DOPPLER_SANITIZE_BUILD_DIR:-$root/build-tsan-learning}; sanitize="thread"
           tests=(DopplerLearningTests) ;;
  full)    build=${DOPPLER_SANITIZE_BUILD_DIR:-$root/build-asan-full}; sanitize="address;undefined"
           tests=() ;;
  *) echo "usage: $0 [address|thread|thread-learning|full]" >&2; exit 2 ;;
esac
torch=OFF
[[ $kind == thread-learning || $kind == full ]] && torch=ON
# The MLIR-free trees build as unity builds (cmake/UnityBuild.cmake); the
# ones with LibTorch and MLIR code as before (not tried as unity builds).
unity=ON
[[ $torch == ON ]] && unity=OFF

export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"

if [[ ! -f $build/build.ninja ]]; then
  launcher=()
  command -v ccache >/dev/null &&
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  # A unity build for address and thread (cmake/UnityBuild.cmake: 539 s of
  # CPU instead of 825 s for the address tree from scratch).
  # -O1 -g1 (line tables: the reports' file:line) rather than
  # RelWithDebInfo's -O2 -g: ASan's recommended level, and half the build
  # (unittests/Runtime/ExecutorTests.cpp: 65 s at -O2 -g, 36 s at -O1 -g1).
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
    "-DDOPPLER_SANITIZE=$sanitize" -DDOPPLER_BUILD_BENCHMARKS=OFF "-DCMAKE_UNITY_BUILD=$unity" \
    -DDOPPLER_ENABLE_CUDA=OFF "-DDOPPLER_ENABLE_TORCH=$torch" "${launcher[@]}" \
    >"$build.configure.log" 2>&1 || {
      tail -n 40 "$build.configure.log"; echo "sanitize ($kind): 0 passed, 1 failed (configure failed)"; exit 1; }
fi

if [[ $kind == full ]]; then
  # What check-doppler depends on, built at nice 15 on 2 jobs (the machine is
  # shared), then lit on test/ and test/Unit with the same ASan options as
  # the fuzz targets: allow_user_poisoning=0 because LLVM's BumpPtrAllocator,
  # inlined into our instrumented code, poisons slabs that Debian's
  # uninstrumented MLIR libraries then use (false use-after-poison). The
  # lit config sets the feature "asan" (UNSUPPORTED: asan marks the few
  # tests that cannot run instrumented, each with its reason).
  # check-doppler's inputs but the custom command that runs lit.
  deps=$(ninja -C "$build" -t query test/check-doppler |
         sed -n '/^  input:/,/^  outputs:/{/^    [^ |]/p}' | sed -e 's/^ *//' -e '/CMakeFiles/d')
  if ! nice -n 15 ninja -C "$build" -j "${DOPPLER_SANITIZE_JOBS:-2}" $deps >"$build.log" 2>&1; then
    tail -n 60 "$build.log"; echo "sanitize ($kind): 0 passed, 1 failed (build failed)"; exit 1
  fi
  # allocator_may_return_null=1: the tools probe a size the host may not
  # hold with malloc and report a null as an error (test/Runtime/
  # plan-errors.test asks for 1e15 bytes); ASan's default aborts instead.
  export ASAN_OPTIONS="$ASAN_OPTIONS:allow_user_poisoning=0:allocator_may_return_null=1"
  # Upstream leaks only (fuzz/lsan.supp says which).
  export LSAN_OPTIONS="suppressions=$root/fuzz/lsan.supp:print_suppressions=0"
  log=$build/lit.log
  nice -n 15 "${LLVM_LIT:-/usr/lib/llvm-22/bin/lit}" -sv -j "${DOPPLER_SANITIZE_JOBS:-2}" \
    "$build/test" "$build/test/Unit" >"$log" 2>&1
  status=$?
  # lit's summary: "  Passed: N", "  Failed: M", ...
  count() { sed -nE "s/^ *$1 *: *([0-9]+).*/\1/p" "$log" | tail -n 1; }
  passed=$(count Passed); failed=$(count Failed)
  passed=${passed:-0}; failed=${failed:-0}
  grep -E '^(  (Unsupported|Expectedly Failed|Unresolved|Timed Out)|Failed Tests|  Doppler)' "$log" | head -n 60
  if (( status != 0 && failed == 0 )); then failed=1; fi
  echo "lit log: $log"
  echo "sanitize ($kind): $passed passed, $failed failed"
  (( failed == 0 ))
  exit
fi
if ! ninja -C "$build" "${tests[@]}" doppler-run-plan >"$build.log" 2>&1; then
  tail -n 60 "$build.log"; echo "sanitize ($kind): 0 passed, 1 failed (build failed)"; exit 1
fi
# DOPPLER_SANITIZE_BUILD_ONLY=1 stops here (scripts/test.sh builds this
# tree in the background while other tests run, then runs it).
if [[ ${DOPPLER_SANITIZE_BUILD_ONLY:-} == 1 ]]; then
  echo "sanitize ($kind): built"; exit 0
fi

passed=0; failed=0; failures=()
run() {  # run NAME COMMAND...: one pass or fail, the output kept on failure
  local name=$1; shift
  local log; log=$(mktemp)
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1)); echo "PASS $name"
  else
    failed=$((failed + 1)); failures+=("$name"); echo "FAIL $name"; tail -n 80 "$log"
  fi
  rm -f "$log"
}
# The GoogleTest binaries run at once, in the background, while the plans
# below run (DopplerPlacementTests alone takes a minute or two under ASan,
# on one core), and are collected at the end.
bg_names=(); bg_pids=(); bg_logs=()
for t in "${tests[@]}"; do
  bg_names+=("$t"); bg_logs+=("$(mktemp)")
  "$build/unittests/$t" --gtest_brief=1 >"${bg_logs[-1]}" 2>&1 &
  bg_pids+=($!)
done
collect() {
  local i
  for i in "${!bg_pids[@]}"; do
    if wait "${bg_pids[$i]}"; then
      passed=$((passed + 1)); echo "PASS ${bg_names[$i]}"
    else
      failed=$((failed + 1)); failures+=("${bg_names[$i]}"); echo "FAIL ${bg_names[$i]}"
      tail -n 80 "${bg_logs[$i]}"
    fi
    rm -f "${bg_logs[$i]}"
  done
}
# doppler-run-plan on a checked-in plan (41 tasks, 2 devices), on more
# devices with the priority order, and with its JSON report and trace.
tmp=$(mktemp -d)
plan=$root/test/Runtime/Inputs/chain.plan.json
run "doppler-run-plan chain" "$build/bin/doppler-run-plan" "$plan" --seed 9 --repeat 2
run "doppler-run-plan chain --devices 6 --order priority" \
  "$build/bin/doppler-run-plan" "$plan" --seed 9 --repeat 2 --devices 6 --order priority
run "doppler-run-plan chain --json" "$build/bin/doppler-run-plan" "$plan" --json \
  --trace "$tmp/trace.json" --write-outputs "$tmp/out.json"
# Offload under a memory limit: evicts, reloads, parked tasks, in the free,
# program and planned orders.
offload=$root/test/Runtime/Inputs/offload.plan.json
for order in fifo program planned; do
  run "doppler-run-plan offload --order $order" "$build/bin/doppler-run-plan" "$offload" \
    --repeat 3 --memory-limit 768 --memory-policy wait --order "$order"
done
# A bigger plan (a LLaMA block, 568 tasks on 4 devices) when the main build
# has the MLIR tools to export one.
main_bin=${DOPPLER_BUILD_DIR:-$root/build}/bin
if [[ -x $main_bin/doppler-run && -x $main_bin/doppler-opt ]] &&
   python3 "$root/examples/generate_examples.py" llama --seq 16 --d-model 32 --heads 4 --ffn 48 >"$tmp/llama.mlir" 2>/dev/null &&
   "$main_bin/doppler-opt" "$tmp/llama.mlir" --doppler-pipeline="devices=4" -o "$tmp/llama.placed.mlir" 2>/dev/null &&
   "$main_bin/doppler-run" "$tmp/llama.placed.mlir" --export-plan "$tmp/llama.plan.json" >/dev/null 2>&1; then
  run "doppler-run-plan llama" "$build/bin/doppler-run-plan" "$tmp/llama.plan.json" --seed 9 --repeat 3
fi
rm -rf "$tmp"
collect

(( failed > 0 )) && echo "failed: ${failures[*]}"
echo "sanitize ($kind): $passed passed, $failed failed"
(( failed == 0 ))
