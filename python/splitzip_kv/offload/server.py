# SPDX-License-Identifier: Apache-2.0
"""A Mooncake Store client that contributes a memory segment to the pool and
serves it until SIGTERM/SIGINT. Started by scripts/offload_cluster.sh.

    python -m splitzip_kv.offload.server --master 127.0.0.1:50051 \
        --host 127.0.0.1 --segment-mib 256

Prints ``ready <host> <segment bytes>`` once the segment is mounted; exits
non-zero if the set-up fails. It holds the segment's memory: killing it
takes every replica stored there away from the pool.
"""

import argparse
import signal
import sys
import threading

from .store import MiB, OffloadConfig, connect


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--master", required=True)
    p.add_argument("--host", required=True, help="this client's address (IP or IP:port)")
    p.add_argument("--segment-mib", type=int, required=True)
    p.add_argument("--buffer-mib", type=int, default=16)
    a = p.parse_args(argv)
    if a.segment_mib <= 0:
        p.error("--segment-mib must be positive")
    cfg = OffloadConfig(master=a.master, local_hostname=a.host,
                        segment_bytes=a.segment_mib * MiB, local_buffer_bytes=a.buffer_mib * MiB)
    try:
        client = connect(cfg)
    except RuntimeError as e:
        print(f"server: {e}", file=sys.stderr, flush=True)
        return 1
    stop = threading.Event()
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: stop.set())
    print(f"ready {a.host} {cfg.segment_bytes}", flush=True)
    while not stop.wait(1.0):
        if client.health_check() == 2:
            print("server: master unreachable", file=sys.stderr, flush=True)
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
