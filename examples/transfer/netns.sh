#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Emulated link for the transfer example: two network namespaces joined by a
# veth pair, the prefill side's egress shaped with tc tbf. Traffic stays
# inside the two namespaces (10.231.0.1 <-> 10.231.0.2). Needs root and
# iproute2 (Debian: apt-get install iproute2).
#   netns.sh up            create sztx_pre / sztx_dec and the veth pair
#   netns.sh rate 1gbit    shape prefill -> decode to 1 Gbit/s ("off": unshaped)
#   netns.sh down          remove both namespaces (and with them the veth pair)
set -euo pipefail
A=sztx_pre; B=sztx_dec; IA=10.231.0.1; IB=10.231.0.2

case "${1:-}" in
  up)
    "$0" down
    ip netns add $A
    ip netns add $B
    ip link add sztx_p type veth peer name sztx_d
    ip link set sztx_p netns $A
    ip link set sztx_d netns $B
    ip -n $A addr add $IA/24 dev sztx_p
    ip -n $B addr add $IB/24 dev sztx_d
    for ns in $A $B; do ip -n $ns link set lo up; done
    ip -n $A link set sztx_p up
    ip -n $B link set sztx_d up
    ;;
  rate)
    r="${2:?rate, e.g. 500mbit, 2gbit or off}"
    if [ "$r" = off ]; then
      tc -n $A qdisc del dev sztx_p root 2>/dev/null || true
    else
      # Burst of 4 ms at the rate (at least 64 KiB, one GSO segment) so
      # tbf can reach the rate at the kernel's timer granularity.
      bits=$(python3 -c "import sys;s=sys.argv[1].lower();m={'kbit':1e3,'mbit':1e6,'gbit':1e9};u=[k for k in m if s.endswith(k)][0];print(int(float(s[:-len(u)])*m[u]))" "$r")
      burst=$(( bits / 8 / 250 )); [ $burst -lt 65536 ] && burst=65536
      tc -n $A qdisc replace dev sztx_p root tbf rate "$r" burst "$burst" latency 50ms
    fi
    tc -n $A qdisc show dev sztx_p
    ;;
  down)
    ip netns del $A 2>/dev/null || true
    ip netns del $B 2>/dev/null || true
    ;;
  *) echo "usage: $0 up|rate RATE|down" >&2; exit 2 ;;
esac
