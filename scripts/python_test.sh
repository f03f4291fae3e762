#!/usr/bin/env bash
# Python bindings test: a fresh virtualenv, `pip install ./python` into it
# (the real build, as a user would run it), then pytest over the bindings'
# suite and the LMCache-style serde example. Exit code = pytest's.
#
#   scripts/python_test.sh [extra pytest args]
#
# Env: PYTHON (default python3), SPLITZIP_PY_VENV (default build-python/venv),
#      SPLITZIP_CUDA=ON to build the CUDA backend into the extension.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python3}
VENV=${SPLITZIP_PY_VENV:-$ROOT/build-python/venv}
LOG=$ROOT/build-python/pip-install.log

mkdir -p "$ROOT/build-python"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
PY=$VENV/bin/python

echo "python_test: pip install ./python (log: ${LOG#$ROOT/})"
start=$(date +%s)
if ! "$PY" -m pip install -v ./python >"$LOG" 2>&1; then
  tail -n 60 "$LOG"
  echo "python_test: pip install ./python FAILED" >&2
  exit 1
fi
echo "python_test: installed in $(( $(date +%s) - start ))s"
grep -E "splitzip backends:" "$LOG" | tail -n 1 || true

"$PY" -m pip install -q pytest numpy ml_dtypes
"$PY" -c "import splitzip; print('python_test: splitzip', splitzip.__version__, 'backends', splitzip.backends())"

# Run from the repository root: python/ itself is not on sys.path, so the
# installed package (with its compiled _core) is the one under test.
set +e
"$VENV/bin/pytest" -q -p no:cacheprovider python/tests examples/lmcache_serde "$@"
rc=$?
set -e
echo "python_test: pytest exit $rc"
exit $rc
