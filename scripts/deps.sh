#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs every Debian and PyPI package splitzip's build, tests, demo and
# benchmarks need. Idempotent: only missing packages are fetched.
set -euo pipefail

APT_PKGS=(
  build-essential cmake ninja-build pkg-config git
  libhwy-dev libomp-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libtrilinos-kokkos-dev
  libzstd-dev liblz4-dev libblosc-dev libxxhash-dev
  libcli11-dev nlohmann-json3-dev  # CLI option parsing and JSON (tools/cli)
  clang libclang-rt-14-dev
  python3 python3-venv
  help2man man-db unzip binutils util-linux  # man page, packaging checks (readelf, nm, unshare)
  zstd lz4 time  # bench/cli: the zstd and lz4 CLIs, GNU time for peak RSS
  iproute2 libibverbs1  # examples/transfer: ip netns + tc; Mooncake's engine.so links libibverbs
)

missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
