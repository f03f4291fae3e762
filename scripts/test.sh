#!/usr/bin/env bash
# The README's test command: installs what is missing, builds everything and
# runs every test suite: unit/golden/CLI tests (ctest), the same under
# ASan+UBSan, the concurrency tests under TSan, a short fuzz run per target,
# the Python package in a fresh virtualenv, and the installed-package consumer.
# Usage: scripts/test.sh [--quick]   (--quick: main ctest only)
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
quick=0; [ "${1:-}" = "--quick" ] && quick=1

bash scripts/deps.sh || { echo "deps: install failed"; exit 1; }

failed=(); passed=()
stage() {  # stage NAME CMD...
  local name=$1; shift
  echo; echo "=== $name ==="
  local t0=$SECONDS
  if "$@"; then passed+=("$name"); echo "=== $name: ok ($((SECONDS - t0)) s) ===";
  else failed+=("$name"); echo "=== $name: FAILED ($((SECONDS - t0)) s) ==="; fi
}

main_build() {
  cmake --preset default >/dev/null && cmake --build build -j "$JOBS" &&
    ctest --test-dir build -j "$JOBS" --output-on-failure
}
stage "build + ctest" main_build

if [ $quick -eq 0 ]; then
  [ -f scripts/sanitize.sh ] && stage "asan+ubsan / tsan" bash scripts/sanitize.sh
  [ -f scripts/fuzz.sh ] && stage "fuzz (${FUZZ_SECONDS}s per target)" bash scripts/fuzz.sh "$FUZZ_SECONDS"
  [ -f scripts/python_test.sh ] && stage "python (fresh venv)" bash scripts/python_test.sh
  [ -f scripts/offload_test.sh ] && stage "offload (Mooncake Store, loopback)" bash scripts/offload_test.sh
fi

echo
echo "stages passed: ${passed[*]:-none}"
[ ${#failed[@]} -gt 0 ] && echo "stages FAILED: ${failed[*]}"
echo "${#passed[@]} passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
