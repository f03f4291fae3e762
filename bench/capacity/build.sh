#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds bench/capacity/capacity_bench against a lean library build.
#   bench/capacity/build.sh [BUILD_DIR] [extra compiler flags, e.g. -mavx2 or -march=native]
set -e
cd "$(dirname "$0")/../.."
B=${1:-build-cap}
shift || true
[ -f "$B/build.ninja" ] || cmake -G Ninja -S . -B "$B" -DSPLITZIP_CPU=OFF -DSPLITZIP_CUDA=OFF \
  -DSPLITZIP_KOKKOS=OFF -DSPLITZIP_BUILD_TOOLS=OFF -DSPLITZIP_BUILD_BENCH=OFF -DSPLITZIP_BUILD_TESTS=OFF
nice -n 10 ninja -C "$B" splitzip
FLAGS=${*:--march=native}
nice -n 10 g++ -std=c++17 -O3 $FLAGS -fopenmp -I. -Iinclude bench/capacity/capacity_bench.cpp \
  cpu/capacity_codec.cpp -o "$B/capacity_bench" "$B/lib/libsplitzip.a" -lxxhash
echo "$B/capacity_bench"
