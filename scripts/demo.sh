#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's main command: installs what is missing, builds, and runs the
# demo on the bundled real KV cache per backend: fast mode (dynamic and
# calibrated codebooks), capacity mode, the bf16 files cast to fp8 (e4m3,
# e5m2), and zstd -1 on the same files in the same run; ratio, escape rate,
# throughput next to memcpy. About half a minute on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake --preset default >/dev/null
cmake --build build -j "${JOBS:-$(nproc)}" --target splitzip-demo splitzip
exec build/bin/splitzip-demo "$@"
