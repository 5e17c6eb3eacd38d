#!/usr/bin/env bash
# Sets up, builds and runs every test: the lit regression tests and the
# GoogleTest suites (lit runs both). Ends with one line "tests: N passed,
# M failed[, K skipped]" and a non-zero status if anything failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DOPPLER_BUILD_DIR:-$root/build}
bash "$root/scripts/setup.sh" || exit 1
bash "$root/scripts/build.sh" >"$root/build.log" 2>&1 || {
  tail -n 60 "$root/build.log"; echo "tests: 0 passed, 1 failed (build failed)"; exit 1; }

log=$(mktemp)
ninja -C "$build" check-doppler 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# lit's summary lines: "  Passed: 12" or, padded when other kinds appear,
# "  Passed : 12".
count() { sed -nE "s/^ *$1[^:]*: *([0-9]+).*/\1/p" "$log" | awk '{ n += $1 } END { print n + 0 }'; }
passed=$(( $(count Passed) + $(count Expectedly) ))
failed=$(( $(count Failed) + $(count Unexpectedly) + $(count Unresolved) + $(count Timed) ))
skipped=$(( $(count Unsupported) + $(count Skipped) ))
rm -f "$log"
if (( status != 0 && failed == 0 )); then failed=1; fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit "$status"
