#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ELF checks on the shipped binaries.
#   check_elf.sh needed FILE...   no libcudart / libcuda / libnvrtc in NEEDED
#   check_elf.sh exports LIB ABI  SONAME is libsplitzip.so.ABI and every
#                                 exported symbol is sz_* or splitzip::*
set -euo pipefail
mode=$1; shift
case "$mode" in
  needed)
    for f in "$@"; do
      needed=$(readelf -d "$f" | awk '/\(NEEDED\)/{gsub(/[\[\]]/,"",$5); print $5}')
      echo "$f NEEDED: $(echo $needed)"
      bad=$(echo "$needed" | grep -E '^lib(cudart|cuda|nvrtc|nvJitLink|cublas|nvcomp)' || true)
      if [ -n "$bad" ]; then
        echo "FAIL: $f needs a CUDA library: $bad" >&2
        exit 1
      fi
    done
    echo "ok: no CUDA library in NEEDED"
    ;;
  exports)
    lib=$1; abi=$2
    soname=$(readelf -d "$lib" | awk '/\(SONAME\)/{gsub(/[\[\]]/,"",$5); print $5}')
    if [ "$soname" != "libsplitzip.so.$abi" ]; then
      echo "FAIL: SONAME is '$soname', expected libsplitzip.so.$abi" >&2
      exit 1
    fi
    # Defined dynamic symbols, demangled; field 3 on is the name.
    syms=$(nm -D --defined-only -C "$lib" | cut -d' ' -f3-)
    total=$(echo "$syms" | grep -c . || true)
    bad=$(echo "$syms" | grep -vE '^(sz_[A-Za-z0-9_]+|splitzip::.*)$' || true)
    if [ -n "$bad" ]; then
      echo "FAIL: $lib exports symbols outside sz_* and splitzip::* :" >&2
      echo "$bad" | head -n 40 >&2
      echo "($(echo "$bad" | wc -l) of $total)" >&2
      exit 1
    fi
    for must in sz_compress sz_decompress sz_version 'splitzip::compress(' 'splitzip::version()'; do
      if ! echo "$syms" | grep -qF "$must"; then
        echo "FAIL: $lib does not export $must" >&2
        exit 1
      fi
    done
    echo "ok: SONAME $soname, $total exported symbols, all sz_* or splitzip::*"
    ;;
  *) echo "usage: check_elf.sh needed FILE... | exports LIB ABI" >&2; exit 2 ;;
esac
