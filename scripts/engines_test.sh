#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The engine integrations against the real, pinned engines (docs/ENGINES.md):
# splitzip_kv.engines.vllm_tier inside vLLM's TieringOffloadingManager and
# splitzip_kv.engines.sglang_hicache behind SGLang's HiCache storage factory,
# each in its own venv (vLLM pins torch 2.14.0, SGLang 2.14.1; PyPI's torch
# is the CUDA build, ~6 GB per venv, installs and imports without a GPU).
# The venvs are kept in build-engines/ and reused while their pins match
# (pip's cache serves a re-install where the index lets pip cache; the
# mirror of the dev VM does not, so there the venvs are the cache). Only the GPU copy (and SGLang's device
# pointer tables) is faked; see python/tests/engines/.
#
#   scripts/engines_test.sh [extra pytest args]     (~2 min with the venvs made;
#                                                    first run ~10-20 min of installs)
#   scripts/engines_test.sh --bench                 also writes bench/results/engines.md
#
# Env: SZ_ENGINES_DIR (default build-engines), VLLM_VERSION (0.34.0),
#      SGLANG_VERSION (0.5.23), PYTHON (python3).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python3}
WORK=${SZ_ENGINES_DIR:-$ROOT/build-engines}
VLLM_VERSION=${VLLM_VERSION:-0.34.0}
SGLANG_VERSION=${SGLANG_VERSION:-0.5.23}
BENCH=0
if [ "${1:-}" = --bench ]; then BENCH=1; shift; fi
fail() { echo "engines_test: FAIL: $*" >&2; exit 1; }
mkdir -p "$WORK"

# vLLM 0.34.0 pins flashinfer-python==0.7.3, which the package index here
# lacks: install vLLM without dependencies, then what its offloading code
# imports, at vLLM's own pins.
VLLM_DEPS=("torch==2.14.0" "transformers>=5.16.1,<5.23.0" "pillow>=13.0.0" "llguidance>=1.7.0,<1.8.0"
  "xgrammar==0.2.8" "pydantic>=2.12.0" "aiohttp>=3.14.4" "openai>=2.25.0"
  "fastapi[standard]>=0.133.0,<0.137.0" regex cachetools psutil numpy msgspec cloudpickle pyzmq
  blake3 cbor2 pybase64 tqdm safetensors pyyaml einops py-cpuinfo prometheus_client sentencepiece
  requests setproctitle ijson python-json-logger partial-json-parser ml_dtypes pytest)

# make_venv NAME MARKER INSTALL-COMMAND...: (re)builds $WORK/NAME unless the
# marker of a finished install with these pins is there.
make_venv() {
  local name=$1 marker=$2; shift 2
  local venv=$WORK/$name
  if [ -f "$venv/.engines-$marker" ] && [ -x "$venv/bin/python" ]; then return; fi
  echo "engines_test: installing $marker into ${venv#$ROOT/} (log: ${venv#$ROOT/}.log)"
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv"
  local start; start=$(date +%s)
  if ! ( "$@" ) >"$venv.log" 2>&1; then tail -n 30 "$venv.log"; fail "installing $marker"; fi
  touch "$venv/.engines-$marker"
  echo "engines_test: $marker installed in $(( $(date +%s) - start ))s"
}
make_venv vllm-venv "vllm-$VLLM_VERSION" bash -c \
  '"$0/bin/pip" install --no-deps "vllm==$1" && shift 1 && "$0/bin/pip" install "$@"' \
  "$WORK/vllm-venv" "$VLLM_VERSION" "${VLLM_DEPS[@]}"
make_venv sglang-venv "sglang-$SGLANG_VERSION" \
  "$WORK/sglang-venv/bin/pip" install "sglang==$SGLANG_VERSION" pytest

# The splitzip wheel: the newest one built from the current python/ tree
# (scripts/python_test.sh's, or one built here).
wheel=""
for w in $(ls -t build-python/wheelhouse/*.whl "$WORK"/dist/*.whl 2>/dev/null); do
  if [ -z "$(find python CMakeLists.txt core cpu include -newer "$w" -type f \
        -not -path '*/__pycache__/*' -not -path 'python/tests/*' -print -quit)" ]; then
    wheel=$w; break
  fi
done
if [ -z "$wheel" ]; then
  echo "engines_test: building the splitzip wheel (log: ${WORK#$ROOT/}/wheel.log)"
  rm -rf "$WORK/dist"
  [ -x "$WORK/tools/bin/pip" ] || "$PYTHON" -m venv "$WORK/tools"
  if command -v ccache >/dev/null; then
    export CMAKE_ARGS="${CMAKE_ARGS:-} -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"
  fi
  SPLITZIP_CUDA=OFF CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
    "$WORK/tools/bin/pip" wheel --no-deps -w "$WORK/dist" ./python >"$WORK/wheel.log" 2>&1 ||
    { tail -n 40 "$WORK/wheel.log"; fail "building the wheel"; }
  wheel=$(ls "$WORK"/dist/*.whl)
fi
echo "engines_test: splitzip wheel ${wheel#$ROOT/}"

cleanup() {
  # vLLM's shared offload regions of these tests (SharedOffloadRegion files).
  rm -f /dev/shm/vllm_offload_splitzip-test-* /dev/shm/vllm_offload_splitzip-bench-* 2>/dev/null || true
  rm -rf "$WORK/hicache-file" 2>/dev/null || true
}
trap cleanup EXIT

rc=0
for engine in vllm sglang; do
  venv=$WORK/$engine-venv
  "$venv/bin/pip" install -q --no-deps --force-reinstall "$wheel"
  test=python/tests/engines/test_vllm_tier.py
  [ $engine = sglang ] && test=python/tests/engines/test_sglang_hicache.py
  echo "engines_test: $engine: $("$venv/bin/pip" list 2>/dev/null | grep -E "^(vllm|sglang|torch) " | tr -s ' ' | tr '\n' ' ')"
  set +e
  SZ_ENGINES_REQUIRE=1 timeout 900 "$venv/bin/python" -m pytest -q -s -p no:cacheprovider \
    -W ignore::DeprecationWarning "$test" "$@" 2>&1 | grep -vE "^(WARNING|INFO) " 
  r=${PIPESTATUS[0]}
  set -e
  echo "engines_test: $engine pytest exit $r"
  [ "$r" = 0 ] || rc=1
done
if [ $BENCH = 1 ] && [ $rc = 0 ]; then
  "$WORK/vllm-venv/bin/python" bench/engines/bench_engines.py vllm --out "$WORK/bench-vllm.json"
  "$WORK/sglang-venv/bin/python" bench/engines/bench_engines.py sglang --out "$WORK/bench-sglang.json"
  "$PYTHON" bench/engines/report.py "$WORK/bench-vllm.json" "$WORK/bench-sglang.json" \
    --md bench/results/engines.md
fi
leftover=$(ls /dev/shm 2>/dev/null | grep -E "splitzip-(test|bench)" || true)
[ -z "$leftover" ] || { echo "engines_test: left in /dev/shm: $leftover" >&2; rc=1; }
exit $rc
