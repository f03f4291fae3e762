#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per-call cost of the Python API on KV pages, as offload layers call it.

A page is 16,384 bf16 values (32 KiB) of the bundled stories260K KV
(data/kv): the 160 pages of the 10 files, K and V of a layer paired into
80 chunks. Each call takes the next page or chunk in turn, so a capacity
frame's code tables change from call to call as they do in a store (the
decoder reuses its lookups only while the table bytes repeat). Timed, each
the best of REPS runs of N calls, runs alternating between the rows:
  memcpy               numpy.copyto of a page (the baseline)
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
    """The (K, V) page pairs: file layerNN_k with layerNN_v, page by page."""
    out = []
    for layer in range(5):
        k = np.fromfile(os.path.join(ROOT, "data", "kv", "stories260k", f"layer{layer:02d}_k.bf16"), np.uint16)
        v = np.fromfile(os.path.join(ROOT, "data", "kv", "stories260k", f"layer{layer:02d}_v.bf16"), np.uint16)
        for p in range(k.size // PAGE):
            out.append((k[p * PAGE:(p + 1) * PAGE].view(ml_dtypes.bfloat16).copy(),
                        v[p * PAGE:(p + 1) * PAGE].view(ml_dtypes.bfloat16).copy()))
    return out


def cycling(items, call):
    """A no-argument function that calls call(item) on the next item each time."""
    state = {"i": 0}

    def f():
        i = state["i"]
        state["i"] = i + 1 if i + 1 < len(items) else 0
        return call(items[i])
    return f


def rows(pairs):
    out = {}
    x, y = np.empty_like(pairs[0][0]), np.empty_like(pairs[0][1])
    ks = [k for k, _ in pairs]
    out["memcpy (numpy.copyto), one page"] = cycling(ks, lambda k: np.copyto(x, k))
    for mode in ("fast", "capacity"):
        frames = [sz.compress(k, threads=1, mode=mode) for k in ks]
        bound = chunk.chunk_bound("bf16", 2, PAGE)
        bufs = [np.empty(bound, np.uint8) for _ in pairs]
        values = []
        for i, (k, v) in enumerate(pairs):
            n = chunk.encode_into(f"bench/{i}", [k, v], bufs[i], dtype="bf16", threads=1, mode=mode)
            values.append((f"bench/{i}", bufs[i][:n].copy()))
        jobs = [(f"bench/{i}", k, v, bufs[i]) for i, (k, v) in enumerate(pairs)]
        out[f"{mode}: compress, one page"] = cycling(ks, lambda k, m=mode: sz.compress(k, threads=1, mode=m))
        out[f"{mode}: decompress(out=), one page"] = cycling(frames, lambda f: sz.decompress(f, out=x, threads=1))
        out[f"{mode}: chunk.encode_into, K+V"] = cycling(
            jobs, lambda j, m=mode: chunk.encode_into(j[0], [j[1], j[2]], j[3], dtype="bf16", threads=1, mode=m))
        out[f"{mode}: chunk.decode_into, K+V"] = cycling(
            values, lambda kv: chunk.decode_into(kv[0], kv[1], [x, y], threads=1))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--json")
    args = ap.parse_args()
    fns = rows(pages())
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
