#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Reproduces every figure of docs/OFFLOAD.md (as root for the shaped links):
#   1. capacity:   loopback cluster, 2 store clients x 32 MiB, filled with real KV
#   2. faults:     same cluster; >= 10,000 chunk operations, corruption through
#                  the store API, a store client killed mid-get, master restart, 4x overfill
#   3. throughput: 1 GiB of KV, raw vs compressed batch put/get, 2 x 640 MiB:
#                  unshaped loopback, then (root) network namespaces with the
#                  link shaped to off (unshaped veth), 10, 5 and 1 Gbit/s
# Writes JSON lines to $1 (default build-offload/offload_results.jsonl) and
# the tables of docs/OFFLOAD.md to stdout (examples/offload/report.py).
#   scripts/offload_bench.sh [OUT.jsonl]      (about 25 minutes on a loaded 2-core VM)
# Env: PARTS (default "capacity faults throughput"), REPEATS (default 5; every
# figure is the best of them), MODES (coding modes of the throughput runs,
# default "fast capacity"), RATES
# (default "off 10gbit 5gbit 2gbit 1gbit"), SZOF_PY (default build-offload/venv/bin/python,
# a venv with splitzip + examples/offload/requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build-offload/offload_results.jsonl}
export SZOF_PY=${SZOF_PY:-$PWD/build-offload/venv/bin/python}
REPEATS=${REPEATS:-5}
MODES=${MODES:-fast capacity}
RATES=${RATES:-off 10gbit 5gbit 2gbit 1gbit}
PARTS=${PARTS:-capacity faults throughput}
has() { [[ " $PARTS " == *" $1 "* ]]; }
C="bash scripts/offload_cluster.sh"
mkdir -p "$(dirname "$OUT")"
trap '$C down >/dev/null 2>&1 || true' EXIT

run() {  # run SUBCOMMAND ARGS...: on the client side of the current cluster
  ( set -a; . build-offload/cluster/cluster.env; set +a
    $SZOF_CLIENT_EXEC "$SZOF_PY" examples/offload/bench_offload.py "$@" --out "$OUT" \
      2> >(grep -v '^[IWE][0-9]\{4\} \|^WARNING: Logging' >&2) )
}

if has capacity || has faults; then
  $C up --servers 2 --segment-mib 32
  has capacity && run capacity --repeats "$REPEATS"
  has faults && run faults --ops 10000 --repeats 1
  $C down
fi
has throughput || { "$SZOF_PY" examples/offload/report.py "$OUT"; exit 0; }

$C up --servers 2 --segment-mib 640
run throughput --rate loopback --gib 1 --repeats "$REPEATS" --modes $MODES
$C down

if [ "$(id -u)" = 0 ] && command -v tc >/dev/null; then
  $C up --netns --servers 2 --segment-mib 640
  for r in $RATES; do
    $C rate "$r"
    run throughput --rate "$r" --gib 1 --repeats "$REPEATS" --modes $MODES
  done
  $C down
else
  echo "offload_bench: not root (or no tc): shaped links skipped" >&2
fi
"$SZOF_PY" examples/offload/report.py "$OUT"
