#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds what the transfer example needs, under build-transfer/ of the repo:
#   build-transfer/ex/libsplitzip_transfer.so  (splitzip + transfer/stream.h, C entry points)
#   build-transfer/venv                         (Mooncake Transfer Engine, numpy, matplotlib)
# Debian packages: iproute2 (ip netns, tc) and libibverbs1 (Mooncake's
# engine.so links it even for the TCP transport); scripts/deps.sh installs them.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
B="$ROOT/build-transfer"
missing=()
for p in iproute2 libibverbs1; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: missing Debian packages ${missing[*]}: run scripts/deps.sh (as root)" >&2
  exit 1
fi
cmake -S "$ROOT/examples/transfer" -B "$B/ex" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$B/ex" -j"${JOBS:-2}" splitzip_transfer
if [ ! -x "$B/venv/bin/python" ]; then
  python3 -m venv "$B/venv"
fi
"$B/venv/bin/pip" install -q -r "$ROOT/examples/transfer/requirements.txt"
"$B/venv/bin/python" -c "from mooncake.engine import TransferEngine; TransferEngine()"
echo "setup: ok ($B/ex/libsplitzip_transfer.so, $B/venv)"
