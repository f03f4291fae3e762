#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the raw vs compressed KV handoff over a sweep of link rates and
payload sizes and appends one JSON line per run to --out.

--link netns (root): netns.sh builds two namespaces joined by a veth pair and
  shapes the prefill side's egress with tc tbf at each rate; the decode side
  runs in one namespace, the prefill side in the other. The namespaces are
  removed at the end, also on error.
--link loopback: both sides on 127.0.0.1, no shaping (no root needed).

Example (the run behind docs/TRANSFER.md):
  sudo build-transfer/venv/bin/python examples/transfer/run_sweep.py \\
      --rates 500mbit,1gbit,2gbit,5gbit,10gbit,off --sizes 256 --real-repeat 40 \\
      --size-sweep-rate 1gbit --size-sweep 64,256,1024 --out build-transfer/results.jsonl
"""
import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NETNS = os.path.join(HERE, "netns.sh")
SCRIPT = os.path.join(HERE, "kv_transfer.py")
PRE_NS, DEC_NS, PRE_IP, DEC_IP = "sztx_pre", "sztx_dec", "10.231.0.1", "10.231.0.2"


def run_one(args, link, rate, mode, backend, source, size_mb, repeat, port, logf):
    common = ["--mode", mode, "--backend", backend, "--source", source, "--size-mb", str(size_mb),
              "--repeat", str(repeat), "--frame-mb", str(args.frame_mb),
              "--slots", str(args.slots), "--ctl-port", str(port),
              "--codec-threads", str(args.codec_threads), "--inflight", str(args.inflight),
              "--rate-label", rate]
    py = sys.executable
    if link == "netns":
        dec_cmd = ["ip", "netns", "exec", DEC_NS, py, SCRIPT, "--role", "decode",
                   "--local-ip", DEC_IP] + common
        pre_cmd = ["ip", "netns", "exec", PRE_NS, py, SCRIPT, "--role", "prefill",
                   "--local-ip", PRE_IP, "--peer-ip", DEC_IP] + common
    else:
        dec_cmd = [py, SCRIPT, "--role", "decode", "--local-ip", "127.0.0.1"] + common
        pre_cmd = [py, SCRIPT, "--role", "prefill", "--local-ip", "127.0.0.1",
                   "--peer-ip", "127.0.0.1"] + common
    dec = subprocess.Popen(dec_cmd, stdout=logf, stderr=logf, cwd=HERE)
    try:
        pre = subprocess.run(pre_cmd, stdout=subprocess.PIPE, stderr=logf, cwd=HERE,
                             timeout=args.timeout, text=True)
        dec_rc = dec.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"mode": mode, "rate": rate, "error": "timeout"}
    finally:
        if dec.poll() is None:  # never leave the decode side behind
            dec.kill()
            dec.wait()
    lines = [l for l in pre.stdout.splitlines() if l.startswith("{")]
    r = json.loads(lines[-1]) if lines else {"mode": mode, "rate": rate, "source": source}
    if pre.returncode != 0 or dec_rc != 0 or not lines:
        # decode rc 3: the bytes that arrived differ from the payload.
        r["error"] = f"prefill rc={pre.returncode} decode rc={dec_rc}"
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--link", choices=["netns", "loopback"], default="netns")
    p.add_argument("--rates", default="500mbit,1gbit,2gbit,5gbit,10gbit,off")
    p.add_argument("--sizes", default="256", help="synthetic MiB for the rate sweep")
    p.add_argument("--real-repeat", type=int, default=40,
                   help="copies of the bundled real KV in the rate sweep (0: skip)")
    p.add_argument("--size-sweep-rate", default="1gbit")
    p.add_argument("--size-sweep", default="64,256,1024", help="synthetic MiB ('': skip)")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--frame-mb", type=float, default=4)
    p.add_argument("--slots", type=int, default=4)
    p.add_argument("--codec-threads", type=int, default=1)
    p.add_argument("--inflight", type=int, default=2)
    p.add_argument("--backends", default="cpu",
                   help="backends for the compressed runs, e.g. cpu,reference")
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--out", default="transfer_results.jsonl")
    p.add_argument("--log", default="transfer_sweep.log")
    args = p.parse_args()

    # Removing the namespaces in `finally` must also happen on kill/Ctrl-C
    # (a background job starts with SIGINT ignored).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if args.link == "netns" and os.geteuid() != 0:
        sys.exit("--link netns needs root (ip netns, tc); use --link loopback otherwise")
    backends = [b for b in args.backends.split(",") if b]
    rates = [r for r in args.rates.split(",") if r] if args.link == "netns" else ["off"]
    plan = []  # (rate, source, size_mb, repeat)
    for rate in rates:
        for s in [x for x in args.sizes.split(",") if x]:
            plan.append((rate, "synthetic", float(s), 1))
        if args.real_repeat > 0:
            plan.append((rate, "real", 0.0, args.real_repeat))
    sweep_rate = args.size_sweep_rate if args.link == "netns" else "off"
    for s in [x for x in args.size_sweep.split(",") if x]:
        if (sweep_rate, "synthetic", float(s), 1) not in plan:
            plan.append((sweep_rate, "synthetic", float(s), 1))

    meta = {"host": platform.node(), "cpus": os.cpu_count(), "link": args.link,
            "frame_mb": args.frame_mb, "slots": args.slots, "codec_threads": args.codec_threads, "inflight": args.inflight,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:])}
    port = 17600
    with open(args.out, "a") as out, open(args.log, "a") as logf:
        try:
            if args.link == "netns":
                subprocess.run([NETNS, "up"], check=True, stdout=logf, stderr=logf)
            current = None
            for rate, source, size_mb, repeat in sorted(plan, key=lambda x: x[0]):
                if args.link == "netns" and rate != current:
                    subprocess.run([NETNS, "rate", rate], check=True, stdout=logf, stderr=logf)
                    current = rate
                for rep in range(args.repeats):
                    runs = [("raw", ""), ("raw-window", "")] + [("compressed", b) for b in backends]
                    for mode, backend in runs:
                        port += 1
                        load = os.getloadavg()[0]
                        r = run_one(args, args.link, rate, mode, backend, source, size_mb, repeat,
                                    port, logf)
                        r.update(meta, repeat_index=rep, size_mb=size_mb, real_repeat=repeat,
                                 loadavg_before=load)
                        out.write(json.dumps(r) + "\n")
                        out.flush()
                        msg = (f"{rate:>8} {source:9} {r.get('payload_bytes', 0) / 2**20:7.0f} MiB "
                               f"{mode + ' ' + backend:20} ")
                        if "error" in r:
                            msg += "ERROR " + r["error"]
                        else:
                            msg += (f"{r['wall_s']:7.3f} s  {r['goodput_MBps']:7.1f} MB/s "
                                    f"bit_exact={r['bit_exact']}")
                        print(msg, flush=True)
        finally:
            if args.link == "netns":
                subprocess.run([NETNS, "down"], stdout=logf, stderr=logf)


if __name__ == "__main__":
    main()
