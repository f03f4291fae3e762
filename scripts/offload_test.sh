#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI test of the KV offload layer (docs/OFFLOAD.md): a real Mooncake Store
# deployment on loopback (mooncake_master + 2 store-client processes, started
# by scripts/offload_cluster.sh from the tests' fixture), the offload layer's
# put/get/corruption/fault tests on the bundled real KV, and the LMCache serde
# plugin's contract. Small (well under 3 minutes once splitzip is built) and
# never skipped: if Mooncake cannot start, the tests fail.
#
#   scripts/offload_test.sh [extra pytest args]
#
# Env: SZOF_VENV: a virtualenv with splitzip installed (default
# build-python/venv, made by scripts/python_test.sh; built here if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${SZOF_VENV:-build-python/venv}
if ! "$VENV/bin/python" -c "import splitzip_kv._core, splitzip_kv.offload" 2>/dev/null; then
  echo "offload_test: installing splitzip into $VENV"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  SPLITZIP_CUDA=${SPLITZIP_CUDA:-OFF} "$VENV/bin/pip" install -q ./python
fi
"$VENV/bin/pip" install -q -r examples/offload/requirements.txt
# libibverbs1 (scripts/deps.sh): Mooncake's engine links it even for TCP.
"$VENV/bin/python" -c "import mooncake.store" ||
  { echo "offload_test: mooncake.store does not import (is libibverbs1 installed? scripts/deps.sh)" >&2; exit 1; }
export SZOF_TEST_RUN=$PWD/build-offload/ci-cluster
set +e
timeout 240 "$VENV/bin/pytest" -q -p no:cacheprovider tests/offload "$@"
rc=$?
set -e
# The fixture stops the cluster; make sure nothing is left if pytest was killed.
SZOF_RUN=$SZOF_TEST_RUN bash scripts/offload_cluster.sh down >/dev/null 2>&1 || true
echo "offload_test: pytest exit $rc"
exit $rc
