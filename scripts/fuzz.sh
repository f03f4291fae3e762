#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets with clang (ASan+UBSan) in build-fuzz and runs
# each for a bounded time. Fails on any crash, leak, sanitizer report or
# broken invariant. Usable by CI.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#     SECONDS_PER_TARGET  default 60
#     TARGET              decompress frame_info roundtrip differential tables (default: all)
#   Environment:
#     FUZZ_BUILD_DIR   build directory (default <repo>/build-fuzz)
#     FUZZ_PARALLEL=1  run the targets at once instead of one after another
#     FUZZ_NICE=N      run the fuzzers under nice -n N (default 0)
#     FUZZ_NO_BUILD=1  skip configure/build (binaries must exist)
#
# New inputs go to $FUZZ_BUILD_DIR/corpus/<target> (not committed); crashes
# to $FUZZ_BUILD_DIR/artifacts/<target>/; logs to $FUZZ_BUILD_DIR/logs/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_TARGET="${1:-60}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(decompress frame_info roundtrip differential tables)
BUILD="${FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
NICE="${FUZZ_NICE:-0}"

if ! [[ "$SECONDS_PER_TARGET" =~ ^[0-9]+$ ]] || [ "$SECONDS_PER_TARGET" -eq 0 ]; then
  echo "fuzz.sh: SECONDS_PER_TARGET must be a positive integer" >&2
  exit 2
fi

if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
  command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (scripts/deps.sh)" >&2; exit 2; }
  # The library is built by the same clang with the same sanitizers, and
  # instrumented for coverage (fuzzer-no-link) so libFuzzer sees its branches.
  # Every host backend that is found (cpu, kokkos) goes in, for the
  # differential target; CUDA needs a GPU at run time.
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link \
    -DSPLITZIP_BUILD_FUZZ=ON -DSPLITZIP_SANITIZE=address,undefined \
    -DSPLITZIP_BUILD_TESTS=OFF -DSPLITZIP_BUILD_BENCH=OFF -DSPLITZIP_BUILD_TOOLS=OFF \
    -DSPLITZIP_CUDA=OFF -DSPLITZIP_KOKKOS=AUTO -DSPLITZIP_BUILD_SHARED=OFF >"$BUILD.configure.log" 2>&1 \
    || { cat "$BUILD.configure.log" >&2; exit 1; }
  ninja -C "$BUILD" -j"${FUZZ_BUILD_JOBS:-2}" $(printf 'fuzz_%s ' "${TARGETS[@]}")
fi

mkdir -p "$BUILD/logs"
# The CPU backend's OpenMP threads must not spin between calls.
export OMP_WAIT_POLICY=passive KMP_BLOCKTIME=0
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

run_one() {
  local t="$1" bin="$BUILD/bin/fuzz_$1"
  local work="$BUILD/corpus/$t" art="$BUILD/artifacts/$t/" log="$BUILD/logs/$t.log"
  [ -x "$bin" ] || { echo "fuzz.sh: $bin missing" >&2; return 1; }
  mkdir -p "$work" "$art"
  # Round-trip and differential inputs describe up to 70k elements; frames
  # stay small. -malloc_limit_mb flags any single allocation out of scale
  # with the input (the "no unbounded allocation" promise).
  local max_len=65536
  [ "$t" = frame_info ] && max_len=4096
  echo "fuzz.sh: fuzz_$t for ${SECONDS_PER_TARGET}s (log $log)"
  local rc=0
  nice -n "$NICE" "$bin" "$work" "$ROOT/tests/fuzz/corpus/$t" \
    -max_total_time="$SECONDS_PER_TARGET" -max_len="$max_len" -timeout=30 \
    -rss_limit_mb=4096 -malloc_limit_mb=512 -artifact_prefix="$art" \
    -print_final_stats=1 >"$log" 2>&1 || rc=$?
  grep -E '^(stat::|#[0-9]+ +DONE)' "$log" | sed "s/^/  [$t] /" || true
  if [ $rc -ne 0 ]; then
    echo "fuzz.sh: fuzz_$t FAILED (exit $rc); artifacts in $art" >&2
    tail -40 "$log" >&2
  fi
  return $rc
}

failed=0
if [ "${FUZZ_PARALLEL:-0}" = 1 ]; then
  pids=()
  for t in "${TARGETS[@]}"; do run_one "$t" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
else
  for t in "${TARGETS[@]}"; do run_one "$t" || failed=1; done
fi
[ $failed -eq 0 ] && echo "fuzz.sh: all targets ran ${SECONDS_PER_TARGET}s without a finding"
exit $failed
