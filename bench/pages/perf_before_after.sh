#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Before/after rounds for bench/results/perf_pages.md and checksum_cost.md
# (issues 29 and 30): the same tools of two builds, alternating, ROUNDS
# rounds; each tool prints its own best of 5. The reader takes the best
# round of each figure.
#
#   bench/pages/perf_before_after.sh BEFORE_BIN AFTER_BIN BEFORE_PY AFTER_PY [AFTER_PYTHONPATH] > log
# BEFORE_BIN / AFTER_BIN: build/bin folders holding splitzip_cpu_timing and
# splitzip_bench_fp8; BEFORE_PY / AFTER_PY: Python interpreters with
# splitzip_kv (AFTER_PYTHONPATH, if given, puts the after package first).
# Env: ROUNDS (3), KV (../shared/data/kv/smollm2).
set -uo pipefail
cd "$(dirname "$0")/../.."
B=$1 A=$2 BPY=$3 APY=$4 APP=${5:-}
ROUNDS=${ROUNDS:-3}
KV=${KV:-$(cd .. && pwd)/shared/data/kv/smollm2}
[ -d "$KV" ] || KV=$(cd ../.. && pwd)/shared/data/kv/smollm2
export OMP_WAIT_POLICY=passive
E4=$(ls "$KV"/*.e4m3)
BF=$(mktemp /tmp/perf_kv.XXXXXX.bf16)  # the bf16 layers as one file (--data file:)
cat "$KV"/layer*.bf16 > "$BF"
trap 'rm -f "$BF"' EXIT
run() {  # label, then the command
  local label=$1; shift
  echo "### $label: $*"
  "$@" 2>&1 | grep -E "threads 1:|checksum on:|^dtype=|cs=" | sed "s/^/$label | /"
}
for r in $(seq 1 "$ROUNDS"); do
  echo "## round $r, $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for side in before after; do
    if [ $side = before ]; then bin=$B; else bin=$A; fi
    T=$bin/splitzip_cpu_timing F=$bin/splitzip_bench_fp8
    for tg in AVX3 AVX2; do
      run "$side $tg fast 64MiB" "$T" --mb 64 --threads 1 --reps 5 --cpu-time --target $tg --no-dynamic --data file:$BF
      run "$side $tg capacity 64MiB" "$T" --mode capacity --mb 64 --threads 1 --reps 5 --cpu-time --target $tg --data file:$BF
      for kib in 32 64; do
        for cs in "" --checksum; do
          run "$side $tg fast batch ${kib}KiB${cs:+ checksum}" "$T" --batch --page-kib $kib --pages $((65536 / kib)) \
            $cs --threads 1 --reps 5 --cpu-time --target $tg --data file:$BF
        done
      done
      for cs in "" --no-checksum; do
        run "$side $tg e4m3${cs:+ no-checksum}" "$F" --target $tg --threads 1 --reps 5 $cs $E4
      done
    done
    for cs in 1 0; do
      if [ $side = before ]; then
        CS=$cs run "$side python pages" "$BPY" bench/pages/py_pages_vs_buffer.py $side
      else
        CS=$cs PYTHONPATH=$APP run "$side python pages" "$APY" bench/pages/py_pages_vs_buffer.py $side
      fi
    done
  done
done
