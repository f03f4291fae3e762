#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sanitizer runs (CUDA and Kokkos off):
#   asan  configure, build and ctest the whole suite with the asan preset
#         (address,undefined) in build-asan;
#   tsan  build the concurrency tests with the tsan preset in build-tsan,
#         using clang and LLVM's libomp with the Archer tool so TSan
#         understands OpenMP synchronization, and run them.
#   scripts/sanitize.sh [asan|tsan|all]   (default all)
#   SANITIZE_JOBS=N  build parallelism (default 2)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WHAT="${1:-all}"
JOBS="${SANITIZE_JOBS:-2}"
cd "$ROOT"

run_asan() {
  echo "sanitize.sh: ASan+UBSan, whole test suite (build-asan)"
  cmake --preset asan -DSPLITZIP_CUDA=OFF -DSPLITZIP_KOKKOS=OFF >build-asan.configure.log 2>&1 \
    || { cat build-asan.configure.log >&2; return 1; }
  cmake --build --preset asan -j "$JOBS"
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
  OMP_WAIT_POLICY=passive \
    ctest --preset asan -j "$JOBS"
}

run_tsan() {
  echo "sanitize.sh: TSan, concurrency tests (build-tsan, clang + libomp/Archer)"
  local archer
  archer="$(clang -print-resource-dir)/../../libarcher.so"
  [ -f "$archer" ] || archer="$(ls /usr/lib/llvm-*/lib/libarcher.so 2>/dev/null | head -1 || true)"
  CC=clang CXX=clang++ cmake --preset tsan -DSPLITZIP_CUDA=OFF -DSPLITZIP_KOKKOS=OFF \
    -DSPLITZIP_BUILD_TOOLS=OFF >build-tsan.configure.log 2>&1 \
    || { cat build-tsan.configure.log >&2; return 1; }
  grep -q 'CMAKE_CXX_COMPILER:.*clang' build-tsan/CMakeCache.txt || {
    echo "sanitize.sh: build-tsan was configured with another compiler; remove it and rerun" >&2
    return 1
  }
  cmake --build --preset tsan -j "$JOBS" --target splitzip_concurrency_tests
  # Without Archer, libomp's internal synchronization looks like races.
  if [ -n "$archer" ] && [ -f "$archer" ]; then
    export OMP_TOOL_LIBRARIES="$archer"
  else
    echo "sanitize.sh: libarcher.so not found; OpenMP regions may give false reports" >&2
  fi
  TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1 ignore_noninstrumented_modules=1}" OMP_WAIT_POLICY=passive \
    ctest --test-dir build-tsan -R 'ReliabilityConcurrency' --output-on-failure
}

case "$WHAT" in
  asan) run_asan ;;
  tsan) run_tsan ;;
  all) run_asan; run_tsan ;;
  *) echo "usage: $0 [asan|tsan|all]" >&2; exit 2 ;;
esac
echo "sanitize.sh: $WHAT passed"
