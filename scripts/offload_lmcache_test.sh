#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The LMCache serde plugin against the real `lmcache` package (not part of
# scripts/test.sh: `pip install lmcache` pulls PyPI's CUDA torch and CUDA
# runtime wheels, ~6 GB, even on a CPU-only machine; it installs and imports
# without a GPU). Makes build-offload/lmcache-venv, installs lmcache and
# splitzip there, then runs tests/offload/test_lmcache_serde.py with the real
# LMCache classes (TensorMemoryObj, AsyncSerdeProcessor, serde registry).
#   scripts/offload_lmcache_test.sh        (about 5-10 minutes the first time)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${SZOF_LMCACHE_VENV:-build-offload/lmcache-venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q "lmcache==${LMCACHE_VERSION:-0.5.6}" pytest
"$VENV/bin/python" -c "import splitzip_kv._core, splitzip_kv.offload.lmcache_serde" 2>/dev/null ||
  SPLITZIP_CUDA=OFF "$VENV/bin/pip" install -q ./python
SZOF_REQUIRE_REAL_LMCACHE=1 "$VENV/bin/pytest" -q -p no:cacheprovider tests/offload/test_lmcache_serde.py "$@"
