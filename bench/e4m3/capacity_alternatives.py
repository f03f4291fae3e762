#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the capacity mode (FORMAT.md 4.6) should code for fp8 (issue 30, item 1): measured.

Per set, each file its own frame (as fp8_peers.py and an offload layer store layers), ratio
= input bytes / coded bytes of:
  zstd -1                      (zstandard, one frame per file)
  byte H0 / byte HUF12         the whole byte per 64K-element block: order-0 entropy bound, and
                               the real 12-bit length-limited Huffman (package-merge, FORMAT.md
                               4.6.3) with 4.6.2's block bytes (table, 32 u16 stream sizes,
                               byte-rounded streams) + 4 index bytes per block + 64 header bytes
  split H0 / split HUF12 + raw E4M3: sign and exponent coded per block as above, the mantissa bits raw
                               (E4M3: 3 bits; E5M2: today's v2 mode 1 = exponent coded, sign and
                               2 mantissa bits raw as the 3-bit stream 2)
  byte T=2/4/8 tables          whole byte, T tables per block: stream s (element j mod 32) uses
                               table s mod T; every table's bytes counted
Sets: smollm2 (../shared/data/kv/smollm2/*.e4m3, real fp8 KV; E5M2 = its .bf16 cast), and the
bundled data/kv/stories260k/*.bf16 cast to E4M3/E5M2 as bench/e4m3/fp8_peers.py does (scale
1.0); each also without layer 0's V (whose rows repeat with the token).

  python bench/e4m3/capacity_alternatives.py      (numpy, ml_dtypes, zstandard)
"""
import glob
import json
import math
import os
import sys

import ml_dtypes
import numpy as np
import zstandard

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = next((p for p in (os.path.join(ROOT, "..", "shared", "data", "kv", "smollm2"),
                           os.path.join(ROOT, "..", "..", "shared", "data", "kv", "smollm2"))
               if os.path.isdir(p)), os.path.join(ROOT, "..", "shared", "data", "kv", "smollm2"))
BLOCK = 1 << 16
STREAMS = 32
MAXLEN = 12


def package_merge(counts):
    """Code lengths limited to MAXLEN, FORMAT.md 4.6.3's tie rules; {symbol: length}."""
    leaves = sorted((c, s) for s, c in enumerate(counts) if c)
    m = len(leaves)
    if m == 1:
        return {leaves[0][1]: 1}
    # items: (weight, is_leaf, leaf index or list of children)
    cur = [(w, [i]) for i, (w, _) in enumerate(leaves)]
    for _ in range(MAXLEN - 1):
        pk = [(cur[2 * j][0] + cur[2 * j + 1][0], cur[2 * j][1] + cur[2 * j + 1][1]) for j in range(len(cur) // 2)]
        merged, i, j = [], 0, 0
        while i < m or j < len(pk):
            if i < m and (j >= len(pk) or leaves[i][0] <= pk[j][0]):
                merged.append((leaves[i][0], [i]))
                i += 1
            else:
                merged.append(pk[j])
                j += 1
        cur = merged
    lens = [0] * m
    for _, idx in cur[:2 * m - 2]:
        for k in idx:
            lens[k] += 1
    return {leaves[k][1]: lens[k] for k in range(m)}


def table_bytes(lens):
    first, last = min(lens), max(lens)
    return 2 + (last - first + 2) // 2


def h0_bits(sym):
    c = np.bincount(sym, minlength=256).astype(np.float64)
    c = c[c > 0]
    p = c / c.sum()
    return float(-(c * np.log2(p)).sum())


def huf_block_bytes(sym, tables=1):
    """Bytes of one block (4.6.2) coding sym, table s mod T for stream s; + 4 index bytes."""
    m = len(sym)
    j = np.arange(m)
    stream = j % STREAMS
    total = 0
    lens_per_t = []
    for t in range(tables):
        sel = (stream % tables) == t
        counts = np.bincount(sym[sel], minlength=256)
        lens = package_merge(counts)
        lens_per_t.append(lens)
        total += table_bytes(lens)
    if all(len(L) == 1 for L in lens_per_t):
        return total + 4
    total += 2 * STREAMS
    for s in range(STREAMS):
        lens = lens_per_t[s % tables]
        lut = np.zeros(256, np.int64)
        for k, v in lens.items():
            lut[k] = v if len(lens) > 1 else 0
        total += (int(lut[sym[s::STREAMS]].sum()) + 7) // 8
    return total + 4


def frame_costs(raw, kind):
    """Coded bytes of one file per alternative (header 64 counted once per frame)."""
    b = np.frombuffer(raw, np.uint8)
    n = len(b)
    if kind == "e4m3":
        se = (b >> 3)                      # sign + 4-bit exponent: 5 bits
        raw_bits = 3
    else:
        se = (b >> 2) & 0x1F               # E5M2 v2 mode 1: exponent coded, sign + 2 mantissa bits raw
        raw_bits = 3
    out = {"byte H0": 0.0, "byte HUF12": 0, "split H0 + raw": 0.0, "split HUF12 + raw": 0}
    for T in (2, 4, 8):
        out[f"byte T={T} tables"] = 0
    for off in range(0, n, BLOCK):
        blk = b[off:off + BLOCK]
        sblk = se[off:off + BLOCK]
        out["byte H0"] += h0_bits(blk) / 8
        out["byte HUF12"] += huf_block_bytes(blk)
        out["split H0 + raw"] += h0_bits(sblk) / 8
        out["split HUF12 + raw"] += huf_block_bytes(sblk)
        for T in (2, 4, 8):
            out[f"byte T={T} tables"] += huf_block_bytes(blk, T)
    rawb = (raw_bits * n + 7) // 8
    out["split H0 + raw"] += rawb
    out["split HUF12 + raw"] += rawb + 16   # stream 2 and its alignment
    for k in out:
        if "HUF" in k or "tables" in k:
            out[k] += 64
    out["zstd -1"] = len(zstandard.ZstdCompressor(level=1).compress(raw))
    return out


def cast(pattern, dt):
    bufs = []
    for p in sorted(glob.glob(pattern)):
        x = np.fromfile(p, dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)
        bufs.append((os.path.basename(p), x.astype(dt).view(np.uint8).tobytes()))
    return bufs


def main():
    sets = {
        "smollm2 e4m3 (real fp8)": ("e4m3", [(os.path.basename(p), open(p, "rb").read())
                                             for p in sorted(glob.glob(os.path.join(SHARED, "*.e4m3")))]),
        "bundled e4m3 (cast)": ("e4m3", cast(os.path.join(ROOT, "data", "kv", "stories260k", "*.bf16"),
                                              ml_dtypes.float8_e4m3fn)),
        "smollm2 e5m2 (cast)": ("e5m2", cast(os.path.join(SHARED, "*.bf16"), ml_dtypes.float8_e5m2)),
        "bundled e5m2 (cast)": ("e5m2", cast(os.path.join(ROOT, "data", "kv", "stories260k", "*.bf16"),
                                              ml_dtypes.float8_e5m2)),
    }
    results = {}
    for name, (kind, files) in sets.items():
        if not files:
            print(f"{name}: no files", file=sys.stderr)
            continue
        per = [(fn, len(raw), frame_costs(raw, kind)) for fn, raw in files]
        for label, keep in (("all", lambda fn: True), ("without layer 0 V", lambda fn: not fn.startswith("layer00_v"))):
            rows = [(n, c) for fn, n, c in per if keep(fn)]
            total = sum(n for n, _ in rows)
            ratios = {k: total / sum(c[k] for _, c in rows) for k in rows[0][1]}
            results[f"{name}, {label}"] = {"bytes": total, "files": len(rows), "ratios": ratios}
    keys = list(next(iter(results.values()))["ratios"])
    print("| set | MiB | " + " | ".join(keys) + " |")
    print("|---|---:|" + "---:|" * len(keys))
    for name, r in results.items():
        print(f"| {name} | {r['bytes'] / 2**20:.2f} | " + " | ".join(f"{r['ratios'][k]:.4f}" for k in keys) + " |")
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
