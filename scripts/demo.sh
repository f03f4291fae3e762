#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's main command: installs what is missing, builds, and runs the
# demo on the bundled real KV cache (ratio, escape rate, throughput per backend).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake --preset default >/dev/null
cmake --build build -j "${JOBS:-$(nproc)}" --target splitzip-demo splitzip
exec build/bin/splitzip-demo "$@"
