#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The engine integrations against the real, pinned engines (docs/ENGINES.md):
# splitzip_kv.engines.vllm_tier inside vLLM's TieringOffloadingManager and
# splitzip_kv.engines.sglang_hicache behind SGLang's HiCache storage factory,
# each in its own venv (vLLM pins torch 2.14.0, SGLang 2.14.1; PyPI's torch
# is the CUDA build, ~6 GB per venv, installs and imports without a GPU).
# Installs: each engine with --no-deps, plus exactly what the tests import
# from its dependencies (python/tests/engines/requirements-*.txt, pinned),
# plus its torch (with torch's own dependencies, the CUDA libraries it needs
# to import), pytest and Mooncake (examples/offload/requirements.txt). The
# wheels go to one directory first (build-engines/wheels) and resolve from
# it when it has them: the two torches pin the same CUDA libraries (~2.5
# GB), downloaded once; a CI cache of that directory (keyed on this script
# and the requirement files) makes a re-run download nothing. The vLLM venv
# installs while the SGLang wheels download; the SGLang venv unpacks its own
# packages meanwhile and hard-links the CUDA libraries from the vLLM venv.
# A venv is kept while the marker of its install (a hash of everything it
# was installed from) matches. Measured (docs/ENGINES.md): a cold machine
# has the venvs after ~310 s; the tests take ~2 min on the bundled KV.
#
#   scripts/engines_test.sh [extra pytest args]
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
WHEELS=$WORK/wheels
REQ=python/tests/engines
MOONCAKE_REQ=examples/offload/requirements.txt
T0=$(date +%s)

# spec NAME: the install of one venv, one argument a line:
#   ENGINE==VERSION  TORCH  then the --no-deps requirement file.
spec() {
  case $1 in
    vllm) printf '%s\n' "vllm==$VLLM_VERSION" "torch==2.14.0" "$REQ/requirements-vllm.txt" ;;
    sglang) printf '%s\n' "sglang==$SGLANG_VERSION" "torch==2.14.1" "$REQ/requirements-sglang.txt" ;;
  esac
}
# marker NAME: a hash of the install (the spec, the requirement files, python).
marker() {
  { spec "$1"; cat "$(spec "$1" | sed -n 3p)" "$MOONCAKE_REQ"; "$PYTHON" -V; } | sha256sum | cut -c1-16
}
ready() { [ -f "$WORK/$1-venv/.engines-$(marker "$1")" ] && [ -x "$WORK/$1-venv/bin/python" ]; }

# download ARGS: pip download into $WHEELS from $WHEELS alone when it has
# everything, else from the index. (Resolving torch's dependencies online
# fetches every CUDA wheel again even when it is in $WHEELS: the index here
# serves no separate metadata.)
download() {
  "$PYTHON" -m pip download -q -d "$WHEELS" --no-index --find-links "$WHEELS" "$@" 2>/dev/null ||
    "$PYTHON" -m pip download -q -d "$WHEELS" "$@"
}
# fetch NAME: the venv's wheels into $WHEELS: the pinned ones first, so that
# the second torch's dependencies (the first's) resolve from $WHEELS.
fetch() {
  local eng torch req
  { read -r eng; read -r torch; read -r req; } < <(spec "$1")
  download --no-deps "$torch" "$eng" -r "$req" && download "$torch" pytest -r "$MOONCAKE_REQ"
}
# link_cuda FROM TO: hard-links into venv TO the CUDA libraries (nvidia-*,
# cuda-*, triton) venv FROM has. Both torches pin the same ones (~3 GB
# unpacked): pip then finds them installed instead of unpacking them twice.
link_cuda() {
  "$1/bin/python" - "$2" <<'PY'
import importlib.metadata as md, os, re, subprocess, sys, sysconfig
src = sysconfig.get_paths()["purelib"]
dst = subprocess.check_output([sys.argv[1] + "/bin/python", "-c",
                               "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip()
tops = set()
for d in md.distributions(path=[src]):
    if re.match(r"(nvidia-|cuda-|triton$)", d.metadata["Name"].lower()):
        tops.update(str(f).split("/")[0] for f in d.files or [] if not str(f).startswith(".."))
for t in sorted(tops):
    if os.path.exists(os.path.join(src, t)) and not os.path.exists(os.path.join(dst, t)):
        subprocess.check_call(["cp", "-al", os.path.join(src, t), os.path.join(dst, t)])
PY
}
# install_pre NAME: the venv with what does not depend on the CUDA
# libraries (--no-deps): the engine, its torch, the pinned imports.
install_pre() {
  local eng torch req venv=$WORK/$1-venv
  { read -r eng; read -r torch; read -r req; } < <(spec "$1")
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv" &&
    "$venv/bin/pip" install -q --no-index --find-links "$WHEELS" --no-deps "$eng" "$torch" -r "$req"
}
# install_post NAME [DONOR]: torch's dependencies (the CUDA libraries linked
# from venv DONOR where given), pytest and Mooncake; then the marker.
install_post() {
  local eng torch req venv=$WORK/$1-venv
  { read -r eng; read -r torch; read -r req; } < <(spec "$1")
  { [ -z "${2:-}" ] || link_cuda "$2" "$venv"; } &&
    "$venv/bin/pip" install -q --no-index --find-links "$WHEELS" "$torch" pytest -r "$MOONCAKE_REQ" &&
    touch "$venv/.engines-$(marker "$1")"
}
fetch_log() {
  echo "engines_test: fetching the $1 wheels into ${WHEELS#$ROOT/} (log: ${WORK#$ROOT/}/$1-venv.log)"
  local t; t=$(date +%s)
  fetch "$1" >"$WORK/$1-venv.log" 2>&1 || { tail -n 30 "$WORK/$1-venv.log"; fail "downloading the $1 wheels"; }
  echo "engines_test: $1 wheels fetched in $(( $(date +%s) - t ))s"
}
# logged STEP NAME [ARGS]: runs install_STEP, logged; its time printed.
logged() {
  local t; t=$(date +%s)
  "install_$1" "${@:2}" >>"$WORK/$2-venv.log" 2>&1 || { tail -n 30 "$WORK/$2-venv.log"; return 1; }
  echo "engines_test: $2 venv: $1 in $(( $(date +%s) - t ))s"
}

# The splitzip wheel: the newest one built from the current python/ tree
# (scripts/python_test.sh's), or one built here while the wheels download.
wheel=""
for w in $(ls -t build-python/wheelhouse/*.whl "$WORK"/dist/*.whl 2>/dev/null); do
  if [ -z "$(find python CMakeLists.txt core cpu include -newer "$w" -type f \
        -not -path '*/__pycache__/*' -not -path 'python/tests/*' -print -quit)" ]; then
    wheel=$w; break
  fi
done
WHEEL_PID=""
if [ -z "$wheel" ]; then
  echo "engines_test: building the splitzip wheel in the background (log: ${WORK#$ROOT/}/wheel.log)"
  rm -rf "$WORK/dist"
  if command -v ccache >/dev/null; then
    export CMAKE_ARGS="${CMAKE_ARGS:-} -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"
  fi
  ( [ -x "$WORK/tools/bin/pip" ] || "$PYTHON" -m venv "$WORK/tools"
    SPLITZIP_CUDA=OFF CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
      "$WORK/tools/bin/pip" wheel --no-deps -w "$WORK/dist" ./python ) >"$WORK/wheel.log" 2>&1 &
  WHEEL_PID=$!
fi

# vLLM installs while the SGLang wheels download; SGLang's own packages
# (its torch included) unpack meanwhile, then it links the CUDA libraries
# from the vLLM venv instead of unpacking them again.
VPID=""
if ! ready vllm; then
  fetch_log vllm
  { logged pre vllm && logged post vllm; } & VPID=$!
fi
if ! ready sglang; then
  fetch_log sglang
  logged pre sglang & SPID=$!
  if [ -n "$VPID" ]; then wait "$VPID" || fail "installing the vllm venv"; VPID=""; fi
  wait "$SPID" || fail "installing the sglang venv"
  logged post sglang "$WORK/vllm-venv" || fail "installing the sglang venv"
fi
if [ -n "$VPID" ]; then wait "$VPID" || fail "installing the vllm venv"; fi
echo "engines_test: venvs ready after $(( $(date +%s) - T0 ))s"

if [ -n "$WHEEL_PID" ]; then
  wait "$WHEEL_PID" || { tail -n 40 "$WORK/wheel.log"; fail "building the wheel"; }
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
  # Mooncake's client logs INFO and WARNING lines (glog) to stderr: dropped
  # here with the engines' own; its errors (a killed store client's) stay.
  SZ_ENGINES_REQUIRE=1 timeout 900 "$venv/bin/python" -m pytest -q -s -p no:cacheprovider \
    -W ignore::DeprecationWarning "$test" "$@" 2>&1 |
    grep -vE "^(WARNING|INFO) |^[IW][0-9]{4} [0-9:.]+ |^WARNING: Logging before InitGoogleLogging"
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
echo "engines_test: stage took $(( $(date +%s) - T0 ))s"
leftover=$(ls /dev/shm 2>/dev/null | grep -E "splitzip-(test|bench)" || true)
[ -z "$leftover" ] || { echo "engines_test: left in /dev/shm: $leftover" >&2; rc=1; }
exit $rc
