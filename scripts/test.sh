#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: installs what is missing, builds everything and
# runs every test suite: unit/golden/CLI tests (ctest, including the packaging
# checks: shared library exports and SONAME, no CUDA library in NEEDED, the
# CLI on a host with no CUDA reachable, the pkg-config and C-only CMake
# consumers, man page vs --help vs docs/CLI.md), the same under ASan+UBSan,
# the concurrency tests under TSan, a short fuzz run per target, SPDX
# headers, and the Python wheel (built, auditwheel-repaired, installed into
# a fresh virtualenv, run without CUDA, mypy).
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
  stage "spdx headers" bash scripts/spdx.sh --check
  # The GPU check script, every step that needs no GPU, on the build above:
  # a broken script is caught here, not in scarce device time.
  stage "gpu_check.sh --dry-run" env GPU_CHECK_BUILD=build bash scripts/gpu_check.sh --dry-run
  stage "asan+ubsan / tsan" bash scripts/sanitize.sh
  stage "fuzz (${FUZZ_SECONDS}s per target)" bash scripts/fuzz.sh "$FUZZ_SECONDS"
  stage "python wheel (auditwheel, fresh venv, no CUDA)" bash scripts/python_test.sh
  stage "offload (Mooncake Store, loopback)" bash scripts/offload_test.sh
  stage "engines (vLLM 0.34.0 tier, SGLang 0.5.23 HiCache, real packages)" bash scripts/engines_test.sh
fi

echo
echo "stages passed: ${passed[*]:-none}"
[ ${#failed[@]} -gt 0 ] && echo "stages FAILED: ${failed[*]}"
echo "${#passed[@]} passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
