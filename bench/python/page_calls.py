#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per-call cost of the Python API on one KV page, as offload layers call it.

A page is 16,384 bf16 values (32 KiB: one layer's K or V of a 512-token block
of the bundled stories260K KV, data/kv). Timed, each the best of REPS runs
of N calls, runs alternating between the rows:
  memcpy               numpy.copyto of the page (the baseline)
  compress / decompress(out=)     the public API, threads=1
  chunk encode_into / decode_into the offload layer's chunk of K and V
                                  (two frames, header, key hash)
in both modes. Prints a markdown table; --json also writes the figures.

  python bench/python/page_calls.py [--reps 5] [--calls 2000] [--json FILE]
"""
import argparse
import json
import os
import time

import ml_dtypes
import numpy as np

import splitzip_kv as sz
from splitzip_kv.offload import chunk

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = 16384


def pages():
    k = np.fromfile(os.path.join(ROOT, "data", "kv", "stories260k", "layer02_k.bf16"), np.uint16)[:PAGE]
    v = np.fromfile(os.path.join(ROOT, "data", "kv", "stories260k", "layer02_v.bf16"), np.uint16)[:PAGE]
    return k.view(ml_dtypes.bfloat16).copy(), v.view(ml_dtypes.bfloat16).copy()


def rows(k, v):
    out = {}
    x, y = np.empty_like(k), np.empty_like(v)
    out["memcpy (numpy.copyto), one page"] = lambda: np.copyto(x, k)
    for mode in ("fast", "capacity"):
        frame = sz.compress(k, threads=1, mode=mode)
        buf = np.empty(chunk.chunk_bound("bf16", 2, PAGE), np.uint8)
        n = chunk.encode_into("bench/L", [k, v], buf, dtype="bf16", threads=1, mode=mode)
        value = buf[:n].copy()
        out[f"{mode}: compress, one page"] = lambda m=mode: sz.compress(k, threads=1, mode=m)
        out[f"{mode}: decompress(out=), one page"] = lambda f=frame: sz.decompress(f, out=x, threads=1)
        out[f"{mode}: chunk.encode_into, K+V"] = (
            lambda m=mode, b=buf: chunk.encode_into("bench/L", [k, v], b, dtype="bf16", threads=1, mode=m))
        out[f"{mode}: chunk.decode_into, K+V"] = (
            lambda val=value: chunk.decode_into("bench/L", val, [x, y], threads=1))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--json")
    args = ap.parse_args()
    k, v = pages()
    fns = rows(k, v)
    best = {name: float("inf") for name in fns}
    for _ in range(args.reps):
        for name, f in fns.items():
            t = time.perf_counter()
            for _ in range(args.calls):
                f()
            best[name] = min(best[name], (time.perf_counter() - t) / args.calls)
    base = best["memcpy (numpy.copyto), one page"]
    print(f"splitzip {sz.__version__}, {os.cpu_count()} CPUs, load {tuple(round(x, 2) for x in os.getloadavg())}, "
          f"best of {args.reps} runs of {args.calls} calls\n")
    print("| call | us per call | x memcpy of one page | GB/s of raw bytes |")
    print("|---|---:|---:|---:|")
    for name, t in best.items():
        raw = 4 * PAGE if "K+V" in name else 2 * PAGE
        print(f"| {name} | {t * 1e6:.2f} | {t / base:.1f} | {raw / t / 1e9:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({k: v * 1e6 for k, v in best.items()}, f, indent=1)


if __name__ == "__main__":
    main()
