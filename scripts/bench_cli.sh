#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the splitzip CLI (Release, every host backend) and runs the
# whole-process CLI benchmark (bench/cli/run_cli_bench.py): splitzip
# compress/decompress with default options and with --mode capacity at
# -T1/-T2 against zstd -1/-3, lz4 -1 and cp on 256 MiB of bf16 in tmpfs, best
# of 3; peak RSS at 1 GiB; the capacity CLI against the codec in memory
# (splitzip_cpu_timing, built when GoogleTest is installed).
# Writes bench/results/cli.{json,md,png}. A few minutes on 2 cores.
#
#   scripts/bench_cli.sh            full run, results in bench/results/
#   scripts/bench_cli.sh --quick    64 MiB, 1 round; results in $BUILD_DIR/bench-cli-quick/
#   scripts/bench_cli.sh -- ARGS    extra run_cli_bench.py flags (--size-mib, --reps, ...)
#
# Needs zstd, lz4 and GNU time (scripts/deps.sh installs them). Environment:
# BUILD_DIR (default build-bench-cli), JOBS (default 2), CMAKE_ARGS, PYTHON.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench-cli}"
JOBS="${JOBS:-2}"
PYTHON="${PYTHON:-python3}"
OUT_DIR="$ROOT/bench/results"

extra=()
while (($#)); do
  case "$1" in
    --quick) extra+=(--quick); OUT_DIR="$BUILD_DIR/bench-cli-quick" ;;
    --) shift; extra+=("$@"); break ;;
    -h|--help) sed -n '3,16p' "$0"; exit 0 ;;
    *) echo "bench_cli.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
for t in zstd lz4 /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "bench_cli.sh: $t missing (run scripts/deps.sh)" >&2; exit 1; }
done
mkdir -p "$OUT_DIR" "$BUILD_DIR"

echo "== configure ($BUILD_DIR, Release)"
# Tests on only for splitzip_cpu_timing (the codec timing the capacity rows
# are set against); without GoogleTest, configure without them and skip it.
configure() {
  # shellcheck disable=SC2086
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSPLITZIP_BUILD_TESTS="$1" -DSPLITZIP_BUILD_BENCH=OFF -DSPLITZIP_CUDA=OFF \
    ${CMAKE_ARGS:-} >"$BUILD_DIR/configure.log" 2>&1
}
timing=1
if ! configure ON; then
  echo "note: no GoogleTest: the CLI-against-codec comparison is skipped" >&2
  timing=0
  configure OFF || { cat "$BUILD_DIR/configure.log"; exit 1; }
fi
grep -E "splitzip backends" "$BUILD_DIR/configure.log" || true
echo "== build splitzip_cli"
ninja -C "$BUILD_DIR" -j"$JOBS" splitzip_cli
if [ "$timing" = 1 ]; then
  ninja -C "$BUILD_DIR" -j"$JOBS" splitzip_cpu_timing
else
  extra=(--timing '' "${extra[@]}")
fi

echo "== python with matplotlib"
plot_py="$PYTHON"
if ! "$PYTHON" -c "import matplotlib" 2>/dev/null; then
  venv="$BUILD_DIR/venv"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import matplotlib" 2>/dev/null; then
    "$PYTHON" -m venv "$venv"
    "$venv/bin/pip" install -q matplotlib
  fi
  plot_py="$venv/bin/python"
fi

load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
  echo "warning: the machine is busy (load $load); whole-process times will be noisy" >&2
fi
"$PYTHON" "$ROOT/bench/cli/run_cli_bench.py" --splitzip "$BUILD_DIR/bin/splitzip" \
  --out-dir "$OUT_DIR" --plot-python "$plot_py" "${extra[@]}"
