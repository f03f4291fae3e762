#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds capacity_bench against the library as shipped (CPU backend on, the
# capacity codec with the library's own flags and Highway dispatch):
#   bench/capacity/build_lib.sh [BUILD_DIR]
set -e
cd "$(dirname "$0")/../.."
B=${1:-build-cap-lib}
[ -f "$B/build.ninja" ] || cmake -G Ninja -S . -B "$B" -DSPLITZIP_CUDA=OFF -DSPLITZIP_KOKKOS=OFF \
  -DSPLITZIP_BUILD_TOOLS=OFF -DSPLITZIP_BUILD_BENCH=OFF -DSPLITZIP_BUILD_TESTS=OFF
nice -n 10 ninja -C "$B" splitzip
nice -n 10 g++ -std=c++17 -O2 -fopenmp -I. -Iinclude bench/capacity/capacity_bench.cpp \
  -o "$B/capacity_bench" "$B/lib/libsplitzip.a" -lhwy -lxxhash
echo "$B/capacity_bench"
