#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The GPU check of the CUDA backend, built so that one device call (the
# device tool: <= 600 s per command, ~15 min of device time in all) cannot be
# wasted: nothing is compiled on the GPU machine when the carried build is
# current, CPU-only suites do not run there, every step has its own timeout
# (cut to what is left of GPU_CHECK_BUDGET), and every step's results are in
# $OUT before the next step starts, so a run killed at any point still
# returns everything finished so far.
#
# Steps (in this order):
#   1 build       reuse the carried build-gpu/ (source stamp matches: no
#                 compile); else an incremental build of the CUDA targets only
#   2 smoke       60 s: device visible, kernels load, small round trips; on
#                 failure only a memcheck of the smoke tests follows
#   3 gpu tests   splitzip_cuda_gpu_tests except CudaHuge.*, XML to $OUT; a
#                 summary row for the capacity mode's identity tests
#                 (CudaCapacity.*: frames byte-identical to the reference,
#                 round trips, error vectors) and one for the capacity mode
#                 through the async API (CudaCapacityAsync.*: compress_async
#                 with EncodeConfig::mode, mixed-mode batch decodes, graph
#                 replay; CudaSanitize.CapacityAsyncSmall runs in step 6),
#                 and one for fp8_e4m3 in mode 1 (format v3: CudaCapacity.
#                 Fp8E4M3Frames and the dtype sweep, which includes it)
#   3b capacity   throughput lines of both modes, sync and async API
#                 (CudaCapacityBench.*)
#   4 golden      GPU-produced frames, cross-checked against the CPU reference
#                 bytes (tar of the frames + MANIFEST.txt to $OUT); every
#                 dtype, fp8_e4m3 included (gpu_golden_cases())
#   5 bench       bf16 first, JSON + markdown rewritten after every point
#   6 sanitizers  compute-sanitizer memcheck + racecheck on CudaSanitize.* (small)
#   7 huge        CudaHuge.*: > 2^31 elements (bf16 4.3 GB, fp8 2 GiB), XML
#   8 nvcomp      last and optional (needs .gpu_deps/nvcomp in the build)
#
# $OUT (at most 8 files, the device tool's limit):
#   summary.txt  one line per step, appended as each step ends
#   gpu_tests.xml, huge_tests.xml   gtest XML per suite run
#   golden_gpu.tar                  frames for tests/golden/gpu/
#   bench.json, bench.md, nvcomp.json
#   logs.tar.gz  every step's log, refreshed after every step
#
# Modes:
#   scripts/gpu_check.sh --prepare-build  (CPU machine with nvcc) configure +
#       build build-gpu/ (CUDA targets only), copy the non-system runtime libs
#       next to it, write its source stamp; prints the carry size. Then:
#       run(command="bash scripts/gpu_check.sh", carry=["build-gpu"], timeout_s=590)
#   scripts/gpu_check.sh --prepare        (network) stage .gpu_deps/ (GoogleTest
#       sources, nvCOMP wheel) for a fallback build / step 8; carry it too.
#   scripts/gpu_check.sh --dry-run        every step that needs no GPU, on a
#       machine without one (CI): script syntax, the carried build's size and
#       reuse, every binary present and runnable, every gtest filter matching
#       tests, GPU tests skipping cleanly without a device, $OUT within the
#       tool's limits. Uses build-gpu/ when present, else build/ (the build
#       scripts/test.sh makes). About a minute on 2 cores.
#   scripts/gpu_check.sh                  the device run.
# Knobs: GPU_CHECK_BUDGET (seconds, 540), GPU_CHECK_BENCH_ITERS (10),
#        GPU_CHECK_CUDA_ARCHS (90-real), GPU_CHECK_BUILD (build dir).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
DEPS="$ROOT/.gpu_deps"
export PATH=/usr/local/cuda/bin:$PATH
CUDA_TARGETS=(splitzip_cuda_gpu_tests splitzip_cuda_golden_gen splitzip_cuda_golden_tests splitzip_bench_cuda)
ARCHS=${GPU_CHECK_CUDA_ARCHS:-90-real}
CARRY_LIMIT=$((64 * 1024 * 1024))

# Hash of every source the CUDA targets are built from (relative paths, no
# git needed: the device copy may have no .git).
source_stamp() {
  (cd "$ROOT" && find CMakeLists.txt cmake core backends cuda include tests/CMakeLists.txt tests/cuda tests/support \
      bench/cuda -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \
      -o -name '*.txt' -o -name '*.cmake' \) 2>/dev/null | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
}
# Bytes the device tool carries: the working tree (tracked + untracked not
# ignored) plus the carried build.
carry_bytes() {
  local tree build
  tree=$(cd "$ROOT" && git ls-files -co --exclude-standard -z 2>/dev/null | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
  build=$(du -sb "$1" 2>/dev/null | cut -f1)
  echo $(( ${tree:-0} + ${build:-0} ))
}

configure_gpu_build() {  # configure_gpu_build DIR
  local gen=(-G "Unix Makefiles")
  command -v ninja >/dev/null && gen=(-G Ninja)
  local extra=()
  [[ -f "$DEPS/nvcomp/include/nvcomp/lz4.h" ]] && extra+=("-DSPLITZIP_NVCOMP_ROOT=$DEPS/nvcomp")
  [[ -d /tmp/gtest-install ]] && extra+=(-DCMAKE_PREFIX_PATH=/tmp/gtest-install)
  cmake -S "$ROOT" -B "$1" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DSPLITZIP_CUDA=ON -DSPLITZIP_CPU=OFF \
    -DSPLITZIP_KOKKOS=OFF -DSPLITZIP_BUILD_TOOLS=OFF -DSPLITZIP_BUILD_BENCH=OFF -DSPLITZIP_BUILD_CUDA_BENCH=ON \
    -DSPLITZIP_BUILD_TESTS=ON "-DCMAKE_CUDA_ARCHITECTURES=$ARCHS" "${extra[@]}"
}

# Shared libraries the binaries need that a bare GPU machine may lack
# (libcudart of this toolkit, libxxhash, GoogleTest if shared), copied into
# DIR/runtime; the run puts it first on LD_LIBRARY_PATH.
copy_runtime_libs() {
  local dir=$1
  mkdir -p "$dir/runtime"
  for bin in "$dir"/bin/*; do ldd "$bin" 2>/dev/null; done | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -E 'libcudart|libxxhash|libgtest|libgmock|libnvcomp' | while read -r lib; do cp -L "$lib" "$dir/runtime/"; done
}

if [[ "${1:-}" == "--prepare-build" ]]; then
  BUILD=${GPU_CHECK_BUILD:-$ROOT/build-gpu}
  set -e
  EXCLUDE=$(git rev-parse --git-path info/exclude)
  mkdir -p "$(dirname "$EXCLUDE")"
  grep -qx '/build-gpu/' "$EXCLUDE" 2>/dev/null || echo '/build-gpu/' >> "$EXCLUDE"
  mkdir -p "$BUILD"
  echo "prepare-build: log $BUILD/prepare.log"
  configure_gpu_build "$BUILD" > "$BUILD/prepare.log"
  nice -n 10 cmake --build "$BUILD" -j "${GPU_CHECK_JOBS:-2}" --target "${CUDA_TARGETS[@]}" >> "$BUILD/prepare.log"
  copy_runtime_libs "$BUILD"
  source_stamp > "$BUILD/STAMP"
  bytes=$(carry_bytes "$BUILD")
  echo "prepare-build: $BUILD stamp $(cat "$BUILD/STAMP"), carry $((bytes / 1024)) KiB of $((CARRY_LIMIT / 1024)) KiB"
  (( bytes <= CARRY_LIMIT )) || { echo "prepare-build: carry over the 64 MiB limit"; exit 1; }
  echo 'prepare-build: device call: carry ["build-gpu"], command "bash scripts/gpu_check.sh", timeout_s 590'
  exit 0
fi

if [[ "${1:-}" == "--prepare" ]]; then
  set -e
  mkdir -p "$DEPS"
  EXCLUDE=$(git rev-parse --git-path info/exclude)
  mkdir -p "$(dirname "$EXCLUDE")"
  grep -qx '/.gpu_deps/' "$EXCLUDE" 2>/dev/null || echo '/.gpu_deps/' >> "$EXCLUDE"
  if [[ -d /usr/src/googletest ]]; then
    rm -rf "$DEPS/googletest" && cp -r /usr/src/googletest "$DEPS/googletest"
    echo "prepare: GoogleTest sources staged"
  else
    echo "prepare: /usr/src/googletest missing (apt-get install googletest); tests need a system GTest there"
  fi
  tmp=$(mktemp -d)
  if python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
      -d "$tmp" nvidia-libnvcomp-cu13 >/dev/null 2>&1; then
    rm -rf "$DEPS/nvcomp" && mkdir -p "$DEPS/nvcomp"
    (cd "$tmp" && unzip -q -o ./*.whl 'nvidia/libnvcomp/include/*' 'nvidia/libnvcomp/lib64/libnvcomp.so*' \
       'nvidia/libnvcomp/LICENSE')
    mv "$tmp/nvidia/libnvcomp/"* "$DEPS/nvcomp/"
    echo "prepare: nvCOMP staged ($(ls "$tmp"/*.whl | xargs -n1 basename))"
  else
    echo "prepare: nvidia-libnvcomp-cu13 not downloadable; the benchmark will run without nvCOMP"
  fi
  rm -rf "$tmp"
  du -sh "$DEPS"
  echo 'prepare: done. Device call: carry [".gpu_deps"], command "bash scripts/gpu_check.sh", timeout_s 560 (the script stops itself at ~480 s)'
  exit 0
fi

DRY=0
[[ "${1:-}" == "--dry-run" ]] && DRY=1
OUT=${OUT:-$(mktemp -d /tmp/gpu_check_out.XXXXXX)}  # outside the tree: never carried
mkdir -p "$OUT"
LOGS=$(mktemp -d)
BUDGET=${GPU_CHECK_BUDGET:-540}
ITERS=${GPU_CHECK_BENCH_ITERS:-10}
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
T0=$(date +%s)
export SPLITZIP_DATA_DIR=$ROOT/data/kv/stories260k
export SPLITZIP_GOLDEN_DIR=$ROOT/tests/golden

note() { echo "[gpu_check +$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
# Seconds a step may take: its cap, or what is left of the budget minus a
# reserve for packing the results.
step_limit() {
  local l=$(( $(left) - 10 ))
  (( l < 1 )) && l=1
  (( l < $1 )) && echo "$l" || echo "$1"
}
slug() { echo "$1" | tr -c 'A-Za-z0-9._\n-' '_'; }
pack_logs() { tar -czf "$OUT/logs.tar.gz" -C "$LOGS" . 2>/dev/null; }
result() {  # result NAME STATUS DETAIL; results are in $OUT as soon as a step ends
  printf '%-28s %-5s +%4ss %s\n' "$1" "$2" "$(( $(date +%s) - T0 ))" "$3" | tee -a "$SUMMARY"
  pack_logs
}
finish() {
  pack_logs
  echo
  echo "================ gpu_check summary ($(( $(date +%s) - T0 )) s$([[ $DRY == 1 ]] && echo ', dry run')) ================"
  cat "$SUMMARY"
}
trap finish EXIT

# run_step NAME CAP LOG CMD...: the command under its own timeout.
run_step() {
  local name=$1 cap=$2 log=$3
  shift 3
  local lim
  lim=$(step_limit "$cap")
  timeout --kill-after=5 "$lim" "$@" > "$log" 2>&1
  local rc=$?
  (( rc == 124 || rc == 137 )) && echo "[gpu_check] $name: timed out after ${lim}s" >> "$log"
  return $rc
}
gtest_line() { grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ tests?' "$1" | tr '\n' ' '; }
# Tests a gtest filter selects (0 when the binary does not run).
filter_count() { "$1" --gtest_list_tests --gtest_filter="$2" 2>/dev/null | grep -c '^  '; }

{
  nvidia-smi || true
  nvcc --version || true
  cmake --version || true
  command -v compute-sanitizer || true
  nproc; free -g || true
} > "$LOGS/env.log" 2>&1
GPU_NAME=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
result "environment" "info" "${GPU_NAME:-no GPU visible}; $(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*')"

# ---------------------------------------------------------------- 1 build
STAMP=$(source_stamp)
if [[ -n "${GPU_CHECK_BUILD:-}" ]]; then BUILD=$GPU_CHECK_BUILD
elif [[ -d "$ROOT/build-gpu/bin" ]]; then BUILD=$ROOT/build-gpu
elif [[ $DRY == 1 && -d "$ROOT/build/bin" ]]; then BUILD=$ROOT/build   # scripts/test.sh's build
else BUILD=$ROOT/build-gpu
fi
BIN=$BUILD/bin
export LD_LIBRARY_PATH="$BUILD/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
have_all() { local t; for t in "${CUDA_TARGETS[@]}"; do [[ -x "$BIN/$t" ]] || return 1; done; }
if [[ -f "$BUILD/STAMP" && "$(cat "$BUILD/STAMP")" == "$STAMP" ]] && have_all; then
  result "1 build" "PASS" "carried build reused, no compile (stamp $STAMP, $BUILD)"
elif [[ $DRY == 1 ]]; then
  if have_all; then result "1 build" "info" "no carried build-gpu/ with a current stamp; dry run uses $BUILD"
  else result "1 build" "FAIL" "no build with the CUDA targets: run scripts/test.sh or --prepare-build first"; exit 1; fi
else
  note "carried build stale or missing: building the CUDA targets only"
  if [[ -f "$BUILD/CMakeCache.txt" ]] && grep -q "CMAKE_HOME_DIRECTORY:INTERNAL=$ROOT\$" "$BUILD/CMakeCache.txt"; then
    run_step build 240 "$LOGS/build.log" cmake --build "$BUILD" -j "$(nproc)" --target "${CUDA_TARGETS[@]}"
  else
    rm -rf "$BUILD"
    run_step build 300 "$LOGS/build.log" bash -c "$(declare -f configure_gpu_build); ROOT='$ROOT' DEPS='$DEPS' ARCHS='$ARCHS' \
      configure_gpu_build '$BUILD' && cmake --build '$BUILD' -j $(nproc) --target ${CUDA_TARGETS[*]}"
  fi
  if have_all; then result "1 build" "PASS" "built on the device ($(grep -c 'Building' "$LOGS/build.log") compiles): carry a fresh build next time"
  else result "1 build" "FAIL" "see build.log"; tail -20 "$LOGS/build.log"; exit 1; fi
fi
missing=$(for t in "${CUDA_TARGETS[@]}"; do ldd "$BIN/$t" 2>/dev/null | grep 'not found'; done | sort -u | tr -s ' \t\n' ' ')
[[ -n "$missing" ]] && result "1 runtime libs" "FAIL" "missing: $missing"
if [[ $DRY == 1 ]]; then
  bytes=$(carry_bytes "$ROOT/build-gpu")
  if [[ -d "$ROOT/build-gpu" ]]; then
    (( bytes <= CARRY_LIMIT )) && st=PASS || st=FAIL
    result "1 carry size" "$st" "working tree + build-gpu = $((bytes / 1024)) KiB (limit 65536 KiB)"
  else
    result "1 carry size" "info" "no build-gpu/ yet (--prepare-build); working tree alone $((bytes / 1024)) KiB"
  fi
  bash -n "$0" && result "script syntax" "PASS" "bash -n" || result "script syntax" "FAIL" "bash -n"
fi

GPU_TESTS=$BIN/splitzip_cuda_gpu_tests
SMOKE_FILTER='CudaBackend.RegisteredAndAvailable:CudaApi.HostSideArgumentErrors:CudaBackend.GoldenCases'
SUITE_FILTER='-CudaHuge.*:CudaSanitize.*:CudaCapacityBench.*'
CAP_FILTER='CudaCapacity.*'
CAP_ASYNC_FILTER='CudaCapacityAsync.*'
CAP_FP8_FILTER='CudaCapacity.Fp8E4M3*:CudaCapacity.SizesDtypesAndGenerators'
CAP_BENCH_FILTER='CudaCapacityBench.*'
SAN_FILTER='CudaSanitize.*'
HUGE_FILTER='CudaHuge.*'

# ---------------------------------------------------------------- 2 smoke
for f in "$SMOKE_FILTER" "$SUITE_FILTER" "$SAN_FILTER" "$HUGE_FILTER" "$CAP_FILTER" "$CAP_ASYNC_FILTER" "$CAP_BENCH_FILTER"; do
  c=$(filter_count "$GPU_TESTS" "$f")
  [[ "$c" -gt 0 ]] || result "filter" "FAIL" "'$f' selects no test"
done
run_step smoke 60 "$LOGS/smoke.log" "$GPU_TESTS" --gtest_filter="$SMOKE_FILTER"
rc=$?
if [[ $DRY == 1 ]]; then
  # No device: the tests must skip cleanly (not fail, not crash).
  if [[ $rc -eq 0 ]] && grep -q 'SKIPPED' "$LOGS/smoke.log"; then
    result "2 smoke (dry)" "PASS" "GPU tests skip without a device: $(gtest_line "$LOGS/smoke.log")"
  else
    result "2 smoke (dry)" "FAIL" "rc $rc; $(gtest_line "$LOGS/smoke.log")"
  fi
elif [[ $rc -eq 0 ]] && ! grep -q '^\[  SKIPPED' "$LOGS/smoke.log"; then
  result "2 smoke" "PASS" "$(gtest_line "$LOGS/smoke.log")"
else
  result "2 smoke" "FAIL" "rc $rc; $(gtest_line "$LOGS/smoke.log") (the GPU steps stop here)"
  SAN=$(command -v compute-sanitizer)
  if [[ -n "$SAN" ]]; then
    run_step "smoke memcheck" 120 "$LOGS/smoke_memcheck.log" "$SAN" --tool memcheck --error-exitcode 99 \
      "$GPU_TESTS" --gtest_filter="$SMOKE_FILTER"
    result "2 smoke memcheck" "info" "$(grep -E 'ERROR SUMMARY' "$LOGS/smoke_memcheck.log" | tail -1) (smoke_memcheck.log)"
  fi
  exit 1
fi

# ---------------------------------------------------------------- 3 GPU test suite
if [[ $DRY == 1 ]]; then
  result "3 gpu tests (dry)" "PASS" "$(filter_count "$GPU_TESTS" "$SUITE_FILTER") tests selected"
else
  run_step "gpu tests" 180 "$LOGS/gpu_tests.log" "$GPU_TESTS" --gtest_filter="$SUITE_FILTER" \
    --gtest_output="xml:$OUT/gpu_tests.xml"
  rc=$?
  if [[ $rc -eq 0 ]] && ! grep -q '^\[  SKIPPED' "$LOGS/gpu_tests.log"; then result "3 gpu tests" "PASS" "$(gtest_line "$LOGS/gpu_tests.log")"
  else result "3 gpu tests" "FAIL" "rc $rc; $(gtest_line "$LOGS/gpu_tests.log") (skips count as failures here)"; fi
fi
# Capacity mode (FORMAT.md 4.6): its identity row from the suite's log.
if [[ $DRY == 1 ]]; then
  result "3 capacity identity (dry)" "PASS" "$(filter_count "$GPU_TESTS" "$CAP_FILTER") CudaCapacity tests selected"
else
  cap_ok=$(grep -c '^\[       OK \] CudaCapacity\.' "$LOGS/gpu_tests.log")
  cap_bad=$(grep -cE '^\[  (FAILED|SKIPPED) +\] CudaCapacity\.' "$LOGS/gpu_tests.log")
  if [[ "$cap_ok" -gt 0 && "$cap_bad" -eq 0 ]]; then
    result "3 capacity identity" "PASS" "$cap_ok CudaCapacity tests: frames = reference bytes, round trips, error statuses"
  else
    result "3 capacity identity" "FAIL" "$cap_ok passed, $cap_bad failed or skipped (gpu_tests.log)"
  fi
fi
# fp8_e4m3 in mode 1 (format v3, FORMAT.md 4.6.7): its own row from the same log.
if [[ $DRY == 1 ]]; then
  result "3 fp8 capacity (dry)" "PASS" "$(filter_count "$GPU_TESTS" "$CAP_FP8_FILTER") fp8_e4m3 capacity tests selected"
else
  f8_ok=$(grep -cE '^\[       OK \] CudaCapacity\.(Fp8E4M3|SizesDtypesAndGenerators)' "$LOGS/gpu_tests.log")
  f8_bad=$(grep -cE '^\[  (FAILED|SKIPPED) +\] CudaCapacity\.(Fp8E4M3|SizesDtypesAndGenerators)' "$LOGS/gpu_tests.log")
  if [[ "$f8_ok" -eq 2 && "$f8_bad" -eq 0 ]]; then
    result "3 fp8 capacity" "PASS" "fp8_e4m3 mode-1 frames (v3 golden cases, 256-value tables) = reference bytes"
  else
    result "3 fp8 capacity" "FAIL" "$f8_ok passed, $f8_bad failed or skipped (gpu_tests.log)"
  fi
fi
# Capacity mode through the stream-ordered API (compress_async with
# EncodeConfig::mode, decompress_async of mode-1 and mixed batches, graph
# replay): its row from the same log.
if [[ $DRY == 1 ]]; then
  result "3 capacity async (dry)" "PASS" "$(filter_count "$GPU_TESTS" "$CAP_ASYNC_FILTER") CudaCapacityAsync tests selected"
else
  ca_ok=$(grep -c '^\[       OK \] CudaCapacityAsync\.' "$LOGS/gpu_tests.log")
  ca_bad=$(grep -cE '^\[  (FAILED|SKIPPED) +\] CudaCapacityAsync\.' "$LOGS/gpu_tests.log")
  if [[ "$ca_ok" -gt 0 && "$ca_bad" -eq 0 ]]; then
    result "3 capacity async" "PASS" "$ca_ok CudaCapacityAsync tests: async frames = reference bytes, mixed-mode batches, error statuses, graph replay"
  else
    result "3 capacity async" "FAIL" "$ca_ok passed, $ca_bad failed or skipped (gpu_tests.log)"
  fi
fi

# ---------------------------------------------------------------- 3b capacity throughput
run_step "capacity bench" 90 "$LOGS/capacity_bench.log" "$GPU_TESTS" --gtest_filter="$CAP_BENCH_FILTER"
rc=$?
if [[ $DRY == 1 ]]; then
  [[ $rc -eq 0 ]] && grep -q 'SKIPPED' "$LOGS/capacity_bench.log" && st=PASS || st=FAIL
  result "3b capacity bench (dry)" "$st" "skips without a device: $(gtest_line "$LOGS/capacity_bench.log")"
else
  if [[ $rc -eq 0 ]] && grep -q '^capacity_throughput' "$LOGS/capacity_bench.log"; then st=PASS; else st=FAIL; fi
  result "3b capacity bench" "$st" "rc $rc; $(gtest_line "$LOGS/capacity_bench.log")"
  grep '^capacity_throughput' "$LOGS/capacity_bench.log" >> "$SUMMARY"
fi

# ---------------------------------------------------------------- 4 golden frames
GOLD=$(mktemp -d)
mkdir -p "$GOLD/gpu"
run_step "golden gen" 60 "$LOGS/golden_gen.log" "$BIN/splitzip_cuda_golden_gen" "$GOLD/gpu"
rc=$?
if [[ $DRY == 1 ]]; then
  [[ $rc -ne 0 ]] && grep -qi 'device\|cuda' "$LOGS/golden_gen.log" && st=PASS || st=FAIL
  result "4 golden gen (dry)" "$st" "refuses cleanly without a device: $(tail -1 "$LOGS/golden_gen.log")"
  run_step "golden verifier" 60 "$LOGS/golden_verify.log" "$BIN/splitzip_cuda_golden_tests" \
    --gtest_filter='GpuGolden.Verifier*:GpuGolden.Manifest*'
  [[ $? -eq 0 ]] && st=PASS || st=FAIL
  result "4 golden verifier (dry)" "$st" "$(gtest_line "$LOGS/golden_verify.log")"
else
  if [[ $rc -eq 0 ]]; then result "4 golden gen" "PASS" "$(tail -1 "$LOGS/golden_gen.log")"
  else result "4 golden gen" "FAIL" "rc $rc; $(tail -1 "$LOGS/golden_gen.log")"; fi
  tar -cf "$OUT/golden_gpu.tar" -C "$GOLD/gpu" .
  SPLITZIP_GOLDEN_DIR=$GOLD run_step "golden verify" 60 "$LOGS/golden_verify.log" "$BIN/splitzip_cuda_golden_tests" \
    --gtest_filter='GpuGolden.CommittedFramesMatchCpuReference'
  verified=$(grep -ho '[0-9]* GPU-produced frames verified' "$LOGS/golden_verify.log" | grep -o '^[0-9]*')
  if [[ "${verified:-0}" -gt 0 ]] && grep -q '^\[  PASSED  \] 1 test' "$LOGS/golden_verify.log"; then
    result "4 golden cross-check" "PASS" "$verified GPU frames byte-identical to the CPU reference's"
  else
    result "4 golden cross-check" "FAIL" "${verified:-0} verified; $(gtest_line "$LOGS/golden_verify.log")"
  fi
fi

# ---------------------------------------------------------------- 5 benchmark
BENCH=$BIN/splitzip_bench_cuda
if [[ $DRY == 1 ]]; then
  run_step bench 30 "$LOGS/bench.log" "$BENCH" --iters 1 --quick --no-nvcomp --out-json "$OUT/bench.json"
  rc=$?
  [[ $rc -eq 2 ]] && grep -q 'no CUDA device' "$LOGS/bench.log" && st=PASS || st=FAIL
  result "5 bench (dry)" "$st" "rc $rc: $(tail -1 "$LOGS/bench.log")"
else
  run_step bench 200 "$LOGS/bench.log" "$BENCH" --iters "$ITERS" --no-nvcomp --out-json "$OUT/bench.json" \
    --out-md "$OUT/bench.md"
  rc=$?
  points=$(grep -c '"name"' "$OUT/bench.json" 2>/dev/null)
  if [[ $rc -eq 0 ]]; then result "5 bench" "PASS" "${points:-0} points (bench.json, bench.md)"
  else result "5 bench" "FAIL" "rc $rc; ${points:-0} points written before it stopped"; fi
  grep -E '^bench_cuda|^  ratio' "$LOGS/bench.log" >> "$SUMMARY"
fi

# ---------------------------------------------------------------- 6 sanitizers
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [[ -z "$SAN" && $DRY == 1 ]]; then
  result "6 sanitizers (dry)" "info" "no compute-sanitizer on this machine (the GPU machine needs it); $(filter_count "$GPU_TESTS" "$SAN_FILTER") small tests selected"
elif [[ -z "$SAN" ]]; then
  result "6 sanitizers" "FAIL" "compute-sanitizer not found"
elif [[ $DRY == 1 ]]; then
  v=$("$SAN" --version 2>/dev/null | tail -1)
  [[ -n "$v" ]] && st=PASS || st=FAIL
  result "6 sanitizers (dry)" "$st" "$v; $(filter_count "$GPU_TESTS" "$SAN_FILTER") small tests selected"
else
  for tool in memcheck racecheck; do
    run_step "$tool" 120 "$LOGS/sanitizer_$tool.log" "$SAN" --tool "$tool" --error-exitcode 99 \
      "$GPU_TESTS" --gtest_filter="$SAN_FILTER"
    rc=$?
    line=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOGS/sanitizer_$tool.log" | tail -1)
    if [[ $rc -eq 0 ]]; then result "6 $tool" "PASS" "$line"; else result "6 $tool" "FAIL" "rc $rc; $line"; fi
  done
fi

# ---------------------------------------------------------------- 7 > 2^31 elements
if [[ $DRY == 1 ]]; then
  result "7 huge (dry)" "PASS" "$(filter_count "$GPU_TESTS" "$HUGE_FILTER") tests selected; host RAM $(free -g 2>/dev/null | awk '/Mem:/ {print $2}') GiB"
else
  run_step huge 150 "$LOGS/huge.log" "$GPU_TESTS" --gtest_filter="$HUGE_FILTER" --gtest_output="xml:$OUT/huge_tests.xml"
  rc=$?
  if [[ $rc -eq 0 ]] && ! grep -q '^\[  SKIPPED' "$LOGS/huge.log"; then result "7 huge" "PASS" "$(gtest_line "$LOGS/huge.log")"
  else result "7 huge" "FAIL" "rc $rc; $(gtest_line "$LOGS/huge.log")"; fi
fi

# ---------------------------------------------------------------- 8 nvCOMP (optional)
if ! grep -q 'SPLITZIP_NVCOMP_ROOT:PATH=.\+' "$BUILD/CMakeCache.txt" 2>/dev/null; then
  result "8 nvcomp" "skip" "optional: the build has no nvCOMP (.gpu_deps/nvcomp at --prepare-build)"
elif [[ $DRY == 1 ]]; then
  result "8 nvcomp (dry)" "info" "nvCOMP linked"
elif (( $(left) < 40 )); then
  result "8 nvcomp" "skip" "optional: $(left) s of budget left"
else
  run_step nvcomp 120 "$LOGS/nvcomp.log" "$BENCH" --only-nvcomp --iters 5 --out-json "$OUT/nvcomp.json"
  rc=$?
  if [[ $rc -eq 0 ]]; then result "8 nvcomp" "PASS" "nvcomp.json"; else result "8 nvcomp" "FAIL" "rc $rc (optional)"; fi
fi

# $OUT within the device tool's limits: at most 8 files, 16 MiB each, 2 levels.
nfiles=$(find "$OUT" -type f | wc -l)
big=$(find "$OUT" -type f -size +16M | wc -l)
deep=$(find "$OUT" -mindepth 3 | wc -l)
if (( nfiles <= 8 && big == 0 && deep == 0 )); then result "out limits" "PASS" "$nfiles files"
else result "out limits" "FAIL" "$nfiles files, $big over 16 MiB, $deep too deep"; fi

grep -q ' FAIL ' "$SUMMARY" && exit 1
exit 0
