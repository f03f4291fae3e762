#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a CPU-only host sees (run under scripts/without_cuda.sh): the CLI
# starts, `backends` lists cuda as not available with a reason, -V prints the
# library version, and the bundled real KV round-trips bit for bit.
#   cpu_only_host.sh SPLITZIP DATA_DIR VERSION
set -euo pipefail
sz=$1; data=$2; version=$3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

backends=$("$sz" backends)
echo "$backends"
if echo "$backends" | grep -q '^cuda '; then
  echo "$backends" | grep -qE '^cuda +not available: .+' ||
    { echo "FAIL: cuda is compiled in but not reported unavailable with a reason" >&2; exit 1; }
fi
echo "$backends" | grep -qE '^reference +available$' || { echo "FAIL: reference not available" >&2; exit 1; }

v=$("$sz" -V)
echo "$v"
[ "$v" = "$("$sz" --version)" ] || { echo "FAIL: -V and --version differ" >&2; exit 1; }
echo "$v" | head -n 1 | grep -qE "^splitzip $version \(library $version," ||
  { echo "FAIL: -V does not print library version $version" >&2; exit 1; }

for f in "$data"/layer00_k.bf16 "$data"/layer03_v.bf16; do
  for be in $(echo "$backends" | awk '$2=="available"{print $1}'); do
    "$sz" compress --backend "$be" -o "$work/x.sz" -f "$f"
    "$sz" decompress --backend "$be" -o "$work/x.out" -f "$work/x.sz"
    cmp "$f" "$work/x.out"
    echo "round trip ok: $(basename "$f") via $be ($(stat -c %s "$f") -> $(stat -c %s "$work/x.sz") bytes)"
  done
done
