#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds bench/capacity/coder_alternatives (rANS vs Huffman exponent coders,
# docs/DESIGN.md section 2). Header-only use of core/capacity/format.h: no library.
#   bench/capacity/build_coder.sh [BUILD_DIR] [compiler flags, default -O3 -march=native]
set -e
cd "$(dirname "$0")/../.."
B=${1:-build-cap}
shift || true
FLAGS=${*:--O3 -march=native}
mkdir -p "$B"
nice -n 10 g++ -std=c++17 $FLAGS -Wall -Wextra -I. -Iinclude bench/capacity/coder_alternatives.cpp \
  -o "$B/coder_alternatives"
echo "$B/coder_alternatives"
