#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the CPU benchmark harness (Release) and runs it: every available
# host backend of splitzip against memcpy, zstd, lz4 and blosc on the bundled
# real KV and a 512 MB synthetic buffer. Writes bench/results/cpu.json (Google
# Benchmark JSON, medians over repetitions), cpu.md (table + issue-3 targets)
# and cpu.png (throughput against ratio). About 6-8 minutes on 2 cores.
#
#   scripts/bench_cpu.sh            full run, results in bench/results/
#   scripts/bench_cpu.sh --quick    16M-element synthetic buffer, 1 repetition,
#                                   results in $BUILD_DIR/bench-quick/
#   scripts/bench_cpu.sh -- ARGS    extra harness / Google Benchmark flags,
#                                   e.g. -- --inputs=synth --backends=cpu
#
# Environment: BUILD_DIR (default build-bench), JOBS (build jobs, default 2),
# REPS (repetitions, default 3), MIN_TIME (seconds per repetition, default
# 0.2), CMAKE_ARGS (extra configure flags), PYTHON (default python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"
JOBS="${JOBS:-2}"
REPS="${REPS:-3}"
MIN_TIME="${MIN_TIME:-0.2}"
PYTHON="${PYTHON:-python3}"
OUT_DIR="$ROOT/bench/results"

quick=0
extra=()
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --) shift; extra+=("$@"); break ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "bench_cpu.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if ((quick)); then
  OUT_DIR="$BUILD_DIR/bench-quick"
  REPS=1
  MIN_TIME=0.1
  extra=(--synth_elems=16777216 --synth_esc_elems=4194304 "${extra[@]}")
fi
mkdir -p "$OUT_DIR" "$BUILD_DIR"

start=$(date +%s)
echo "== configure ($BUILD_DIR, Release)"
# The CUDA backend cannot run on a host-only benchmark; bench/cuda has its own script.
# shellcheck disable=SC2086
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSPLITZIP_BUILD_TESTS=OFF -DSPLITZIP_BUILD_BENCH=ON -DSPLITZIP_CUDA=OFF \
  ${CMAKE_ARGS:-} >"$BUILD_DIR/configure.log" 2>&1 || { cat "$BUILD_DIR/configure.log"; exit 1; }
grep -E "splitzip backends|bench: peer" "$BUILD_DIR/configure.log" || true

echo "== build splitzip_bench_cpu"
ninja -C "$BUILD_DIR" -j"$JOBS" splitzip_bench_cpu

echo "== python with matplotlib"
if ! "$PYTHON" -c "import matplotlib" 2>/dev/null; then
  venv="$BUILD_DIR/venv"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import matplotlib" 2>/dev/null; then
    "$PYTHON" -m venv "$venv"
    "$venv/bin/pip" install -q matplotlib
  fi
  PYTHON="$venv/bin/python"
fi

load=$(cut -d' ' -f1 /proc/loadavg)
echo "== run (load average $load, $REPS repetitions, min time ${MIN_TIME}s)"
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
  echo "warning: the machine is busy (load $load); multi-thread figures will be noisy" \
       "(niced processes of other sessions still take a full core under autogroup scheduling)" >&2
fi
"$BUILD_DIR/bin/splitzip_bench_cpu" \
  --benchmark_repetitions="$REPS" \
  --benchmark_min_time="$MIN_TIME" \
  --benchmark_report_aggregates_only="$( ((REPS > 1)) && echo true || echo false)" \
  --benchmark_out="$OUT_DIR/cpu.json" --benchmark_out_format=json \
  "${extra[@]}" | tee "$BUILD_DIR/bench_cpu.log"

echo "== report"
"$PYTHON" "$ROOT/bench/scripts/report.py" --json "$OUT_DIR/cpu.json" \
  --md "$OUT_DIR/cpu.md" --png "$OUT_DIR/cpu.png"
echo "== done in $(( $(date +%s) - start )) s: $OUT_DIR/cpu.{json,md,png}"
