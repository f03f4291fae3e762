#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The figures of bench/results/cpu_v2.md (issue 12 items 2-4), from
# tests/cpu/cpu_timing.cpp: single-thread kernels at 256 MiB per Highway
# target, dynamic vs calibrated codebook on back-to-back frames, and batched
# pages vs one buffer. Every figure is the best of --reps alternating rounds
# with memcpy measured in the same run. Usage: bench/scripts/cpu_v2.sh [build dir]
set -euo pipefail
BIN=${1:-build}/bin/splitzip_cpu_timing
REPS=${REPS:-7}
echo "# $(date -u +%FT%TZ) $(uname -n), load: $(cut -d' ' -f1-3 /proc/loadavg)"
for target in AVX3 AVX2; do
  "$BIN" --mb 256 --threads 1 --reps "$REPS" --cpu-time --target "$target" || true
done
for kib in 16 64 256 1024; do
  "$BIN" --frames "$kib" --mb 256 --reps "$REPS" --cpu-time
done
"$BIN" --frames 64 --mb 1 --reps 41 --cpu-time  # in cache
"$BIN" --batch --threads 1,2 --reps "$REPS" --cpu-time --no-dynamic
"$BIN" --batch --threads 1,2 --reps "$REPS" --cpu-time
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
