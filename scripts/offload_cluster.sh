#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A real Mooncake Store deployment for the KV offload layer (docs/OFFLOAD.md):
# mooncake_master plus N store clients, each its own process contributing a
# memory segment (python -m splitzip_kv.offload.server).
#
#   offload_cluster.sh up [--servers N] [--segment-mib M] [--netns] [--rate R]
#   offload_cluster.sh rate R          reshape the link (netns only), R = 1gbit, 10gbit, off
#   offload_cluster.sh kill-server I   SIGKILL store client I (0-based), for fault tests
#   offload_cluster.sh start-server I  (re)start store client I
#   offload_cluster.sh restart-master  SIGKILL the master and start it again
#   offload_cluster.sh status | down
#
# Loopback (default): everything on 127.0.0.1. --netns (root): the master and
# the store clients live in namespace szof_srv (10.232.0.2), the benchmark /
# application client runs in szof_cli (10.232.0.1); a veth pair joins them and
# both directions are shaped with tc tbf at R ("off" = unshaped). Nothing
# leaves the machine. State (pids, logs, cluster.env) is in $SZOF_RUN
# (default build-offload/cluster). Source cluster.env for SZOF_MASTER,
# SZOF_CLIENT_HOST and SZOF_CLIENT_EXEC (the prefix that runs a command on
# the client side: empty on loopback, "ip netns exec szof_cli" with --netns).
#
# Env: SZOF_PY (python with splitzip + mooncake; default build-offload/venv),
#      SZOF_MASTER_BIN (default: mooncake_master of SZOF_PY's mooncake package),
#      SZOF_PORT (master RPC port, default 50551), SZOF_CLIENT_TTL (s, default 3),
#      SZOF_MASTER_FLAGS (more mooncake_master flags, e.g. --memory_allocator=cachelib),
#      SZOF_LEASE_MS (lease a get takes on an object, default 5000: a get that
#      outlasts it fails with LEASE_EXPIRED).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUN=${SZOF_RUN:-$ROOT/build-offload/cluster}
PY=${SZOF_PY:-$ROOT/build-offload/venv/bin/python}
# The binary itself, not the venv's bin/ wrapper (whose pid is not the master's).
MASTER_BIN=${SZOF_MASTER_BIN:-$("$PY" -c 'import os, mooncake; print(os.path.join(os.path.dirname(mooncake.__file__), "mooncake_master"))' 2>/dev/null || true)}
PORT=${SZOF_PORT:-50551}
TTL=${SZOF_CLIENT_TTL:-3}
NS_CLI=szof_cli; NS_SRV=szof_srv; IP_CLI=10.232.0.1; IP_SRV=10.232.0.2

die() { echo "offload_cluster: $*" >&2; exit 1; }
state() { [ -f "$RUN/cluster.env" ] || die "no cluster (run: $0 up)"; . "$RUN/cluster.env"; }
srv_prefix() {  # the command prefix that runs on the server side (none on loopback)
  SRV=(); [ "${SZOF_NETNS:-0}" = 1 ] && SRV=(ip netns exec $NS_SRV); return 0
}

wait_log() {  # wait_log FILE PATTERN SECONDS PID
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$4" 2>/dev/null || { tail -n 20 "$1" >&2; return 1; }
    sleep 0.1
  done
  tail -n 20 "$1" >&2; return 1
}

start_master() {
  state; srv_prefix
  # No function or subshell in between: $! must be the process itself.
  "${SRV[@]}" "$MASTER_BIN" --rpc_port="$PORT" --rpc_address="$SZOF_SRV_IP" \
    --metrics_host="$SZOF_SRV_IP" --metrics_port=$((PORT + 1)) --enable_metric_reporting=false \
    --client_ttl="$TTL" --default_kv_lease_ttl=${SZOF_LEASE_MS:-5000} --eviction_high_watermark_ratio=0.95 \
    ${SZOF_MASTER_FLAGS:-} >>"$RUN/master.log" 2>&1 &
  echo $! >"$RUN/master.pid"
  wait_log "$RUN/master.log" "Master service started on port $PORT" 20 "$(cat "$RUN/master.pid")" ||
    die "mooncake_master did not start (log: $RUN/master.log)"
}

start_server() {  # start_server INDEX
  state; srv_prefix
  local i=$1 log="$RUN/server$1.log"
  : >"$log"
  "${SRV[@]}" "$PY" -m splitzip_kv.offload.server --master "$SZOF_MASTER" --host "$SZOF_SRV_IP" \
    --segment-mib "$SZOF_SEGMENT_MIB" >>"$log" 2>&1 &
  echo $! >"$RUN/server$i.pid"
  wait_log "$log" "^ready" 30 "$(cat "$RUN/server$i.pid")" ||
    die "store client $i did not start (log: $log)"
}

stop_pid() {  # stop_pid FILE SIGNAL
  [ -f "$1" ] || return 0
  local pid; pid=$(cat "$1")
  if kill -0 "$pid" 2>/dev/null; then
    kill "-$2" "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$1"
}

shape() {  # shape RATE
  local r=$1 dev ns
  for pair in "$NS_CLI:szof_c" "$NS_SRV:szof_s"; do
    ns=${pair%%:*}; dev=${pair##*:}
    if [ "$r" = off ]; then
      tc -n "$ns" qdisc del dev "$dev" root 2>/dev/null || true
    else
      local bits burst
      bits=$("$PY" -c "import sys;s=sys.argv[1].lower();m={'kbit':1e3,'mbit':1e6,'gbit':1e9};u=[k for k in m if s.endswith(k)][0];print(int(float(s[:-len(u)])*m[u]))" "$r")
      burst=$((bits / 8 / 250)); [ $burst -lt 65536 ] && burst=65536
      tc -n "$ns" qdisc replace dev "$dev" root tbf rate "$r" burst "$burst" latency 50ms
    fi
  done
  echo "offload_cluster: link shaped to $r (both directions)"
}

netns_up() {
  netns_down
  ip netns add $NS_CLI; ip netns add $NS_SRV
  ip link add szof_c type veth peer name szof_s
  ip link set szof_c netns $NS_CLI; ip link set szof_s netns $NS_SRV
  ip -n $NS_CLI addr add $IP_CLI/24 dev szof_c
  ip -n $NS_SRV addr add $IP_SRV/24 dev szof_s
  for ns in $NS_CLI $NS_SRV; do ip -n $ns link set lo up; done
  ip -n $NS_CLI link set szof_c up; ip -n $NS_SRV link set szof_s up
}
netns_down() {
  ip netns del $NS_CLI 2>/dev/null || true
  ip netns del $NS_SRV 2>/dev/null || true
}

down() {
  [ -d "$RUN" ] || return 0
  for f in "$RUN"/server*.pid; do [ -e "$f" ] && stop_pid "$f" TERM; done
  stop_pid "$RUN/master.pid" TERM
  if [ -f "$RUN/cluster.env" ]; then
    . "$RUN/cluster.env"
    [ "${SZOF_NETNS:-0}" = 1 ] && netns_down
  fi
  rm -f "$RUN/cluster.env"
}

cmd=${1:-}; shift || true
case "$cmd" in
  up)
    servers=2; seg=64; netns=0; rate=off
    while [ $# -gt 0 ]; do
      case "$1" in
        --servers) servers=$2; shift 2 ;;
        --segment-mib) seg=$2; shift 2 ;;
        --netns) netns=1; shift ;;
        --rate) rate=$2; shift 2 ;;
        *) die "unknown option $1" ;;
      esac
    done
    [ "$servers" -ge 1 ] || die "--servers must be >= 1"
    [ -x "$PY" ] || die "no python at $PY (set SZOF_PY)"
    [ -x "$MASTER_BIN" ] || die "no mooncake_master at $MASTER_BIN (pip install mooncake-transfer-engine-non-cuda)"
    down; mkdir -p "$RUN"; rm -f "$RUN"/*.log
    if [ $netns = 1 ]; then
      [ "$(id -u)" = 0 ] || die "--netns needs root"
      netns_up
      srv_ip=$IP_SRV; cli_ip=$IP_CLI; cli_exec="ip netns exec $NS_CLI"
    else
      srv_ip=127.0.0.1; cli_ip=127.0.0.1; cli_exec=""
    fi
    cat >"$RUN/cluster.env" <<EOF
SZOF_NETNS=$netns
SZOF_SRV_IP=$srv_ip
SZOF_MASTER=$srv_ip:$PORT
SZOF_CLIENT_HOST=$cli_ip
SZOF_CLIENT_EXEC="$cli_exec"
SZOF_SERVERS=$servers
SZOF_SEGMENT_MIB=$seg
EOF
    [ $netns = 1 ] && shape "$rate"
    start_master
    for ((i = 0; i < servers; i++)); do start_server $i; done
    echo "offload_cluster: up: master $srv_ip:$PORT, $servers store clients x $seg MiB ($([ $netns = 1 ] && echo "netns, link $rate" || echo loopback)); env: $RUN/cluster.env"
    ;;
  rate) state; [ "${SZOF_NETNS:-0}" = 1 ] || die "rate needs a --netns cluster"; shape "${1:?rate}" ;;
  kill-server) state; stop_pid "$RUN/server${1:?index}.pid" KILL; echo "offload_cluster: store client $1 killed" ;;
  start-server) start_server "${1:?index}" ;;
  restart-master) state; stop_pid "$RUN/master.pid" KILL; start_master; echo "offload_cluster: master restarted" ;;
  status)
    state
    for f in "$RUN"/*.pid; do
      [ -e "$f" ] || continue
      pid=$(cat "$f"); st=dead; kill -0 "$pid" 2>/dev/null && st=running
      echo "$(basename "$f" .pid) pid $pid $st"
    done ;;
  down) down; echo "offload_cluster: down" ;;
  *) sed -n '2,24p' "$0"; exit 2 ;;
esac
