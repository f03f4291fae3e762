#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Shape of the capacity table sets, by measurement (docs/DESIGN.md, "capacity table sets").

Real frame sizes of the capacity mode on bf16 KV (no entropy bounds): 12-bit
length-limited Huffman lengths by package-merge (FORMAT.md 4.6.3, the same
tie rules), every block's table, kind byte, 32 stream sizes and whole-byte
streams, the block index, 16-byte stream alignment and the 64-byte header.
Sets are calibrated as core/capacity/tables.h does (histograms per table,
stream s -> table s mod T, every symbol seen anywhere in the set, or in
the reach of FORMAT.md 13.1, at least count 1 in every table) on some sequences and applied to others; a block
with a symbol its table lacks falls back to its own table (FORMAT.md 4.9).

  python bench/pages/tables_shape.py [--smollm2 DIR] [--bundled DIR]

Rows: today's per-block tables; one set per model (all layers, K and V);
one set per layer and K/V; for T = 1..32; on whole sequences (one frame per
sequence and layer file) and on 32 KiB pages.
"""
import argparse
import glob
import os

import numpy as np

MAX_LEN = 12
STREAMS = 32
BLOCK = 65536


def package_merge(counts):
    """Code lengths (FORMAT.md 4.6.3): leaves by (count, value), a leaf before a package of equal weight."""
    counts = [int(c) for c in counts]
    sym = sorted((c, e) for e, c in enumerate(counts) if c > 0)
    lens = [0] * len(counts)
    m = len(sym)
    if m == 0:
        return lens
    if m == 1:
        lens[sym[0][1]] = 1
        return lens
    leaves = [c for c, _ in sym]
    cur = list(leaves)
    is_leaf = {MAX_LEN: [1] * m}
    for lvl in range(MAX_LEN - 1, 0, -1):
        packages = [cur[2 * j] + cur[2 * j + 1] for j in range(len(cur) // 2)]
        i = j = 0
        nxt, marks = [], []
        while i < m or j < len(packages):
            if i < m and (j >= len(packages) or leaves[i] <= packages[j]):
                nxt.append(leaves[i]); marks.append(1); i += 1
            else:
                nxt.append(packages[j]); marks.append(0); j += 1
        is_leaf[lvl] = marks
        cur = nxt
    take = 2 * m - 2
    for lvl in range(1, MAX_LEN + 1):
        if take == 0:
            break
        nl = sum(is_leaf[lvl][:take])
        for q in range(nl):
            lens[sym[q][1]] += 1
        take = 2 * (take - nl)
    return lens


def table_bytes(lens):
    present = [e for e, l in enumerate(lens) if l]
    return 2 + (present[-1] - present[0] + 2) // 2


def stream_bytes(exps, lens_by_stream):
    """Bytes of the 32 streams of one block; lens_by_stream: [32][256] array."""
    m = len(exps)
    pad = (-m) % STREAMS
    e = np.concatenate([exps, np.zeros(pad, np.uint8)]).reshape(-1, STREAMS)
    valid = np.concatenate([np.ones(m, bool), np.zeros(pad, bool)]).reshape(-1, STREAMS)
    bits = lens_by_stream[np.arange(STREAMS)[None, :], e] * valid
    return int(((bits.sum(axis=0) + 7) // 8).sum()), bool((bits[valid] > 0).all())


def own_block_bytes(exps):
    counts = np.bincount(exps, minlength=256)
    lens = package_merge(counts)
    if sum(1 for l in lens if l) == 1:
        return table_bytes(lens)
    lbs = np.tile(np.array(lens, np.int64), (STREAMS, 1))
    return table_bytes(lens) + 2 * STREAMS + stream_bytes(exps, lbs)[0]


def align16(x):
    return (x + 15) // 16 * 16


def frame_bytes(exps, lens_set=None):
    """Mode-1 frame of bf16 elements whose exponents are exps; lens_set: [T][256] or None."""
    n = len(exps)
    blocks, fallbacks = 0, 0
    for b0 in range(0, n, BLOCK):
        blk = exps[b0:b0 + BLOCK]
        if lens_set is None:
            blocks += own_block_bytes(blk)
            continue
        T = len(lens_set)
        lbs = np.array([lens_set[s % T] for s in range(STREAMS)], np.int64)
        z, fits = stream_bytes(blk, lbs)
        if fits:
            blocks += 1 + 2 * STREAMS + z
        else:
            blocks += 1 + own_block_bytes(blk)
            fallbacks += 1
    nb = (n + BLOCK - 1) // BLOCK
    return 64 + align16(n) + align16(4 * nb) + align16(blocks), fallbacks


# Which values get count >= 1 in every table: "reach" (FORMAT.md 13.1: 8
# below the least seen to 2 above the greatest, and 0), "seen" (the rule
# before the reach), "range" (0..max seen), "all".
FLOOR = "reach"


def calibrate(samples, T, floor=None):
    floor = floor or FLOOR
    hist = np.zeros((T, 256), np.int64)
    for e in samples:
        for t in range(T):
            hist[t] += np.bincount(e[t::T], minlength=256)
    present = hist.sum(axis=0) > 0
    if floor == "reach":
        seen = np.nonzero(present)[0]
        present[max(0, seen[0] - 8): seen[-1] + 3] = True
        present[0] = True
    elif floor == "range":
        present[: np.nonzero(present)[0][-1] + 1] = True
    elif floor == "all":
        present[:] = True
    out = []
    for t in range(T):
        c = np.where(present, np.maximum(hist[t], 1), 0)
        out.append(package_merge(c))
    return out


def load_exps(path):
    raw = np.fromfile(path, dtype="<u2")
    return ((raw >> 7) & 0xFF).astype(np.uint8)


def pages_of(e, page_elems):
    return [e[i:i + page_elems] for i in range(0, len(e), page_elems)]


def measure(name, files, seqs, calib_idx, test_idx, page_elems, Ts):
    """files: {key: exps}; seqs(e) -> list of per-sequence arrays."""
    data = {k: seqs(v) for k, v in files.items()}
    orig = sum(2 * len(s) for k in data for i, s in enumerate(data[k]) if i in test_idx)
    rows = []

    def total(lens_for, pages):
        tb, fb, nf = 0, 0, 0
        for k in data:
            for i in test_idx:
                units = pages_of(data[k][i], page_elems) if pages else [data[k][i]]
                for u in units:
                    b, f = frame_bytes(u, lens_for(k))
                    tb += b
                    fb += f
                    nf += 1
        return tb, fb, nf

    for pages in (False, True):
        tb, _, nf = total(lambda k: None, pages)
        rows.append((name, "per-block tables (today)", "-", pages, orig / tb, 0, nf))
    for T in Ts:
        model_set = calibrate([data[k][i] for k in data for i in calib_idx], T)
        per_file = {k: calibrate([data[k][i] for i in calib_idx], T) for k in data}
        for label, lens_for in (("one set per model", lambda k: model_set), ("one set per layer and K/V", lambda k: per_file[k])):
            for pages in (False, True):
                tb, fb, nf = total(lens_for, pages)
                rows.append((name, label, T, pages, orig / tb, fb, nf))
    return rows


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    shared = [os.path.join(root, *([".."] * k), "shared", "data", "kv", "smollm2") for k in (1, 2)]
    ap.add_argument("--smollm2", default=next((p for p in shared if os.path.isdir(p)), shared[0]))
    ap.add_argument("--bundled", default=os.path.join(root, "data", "kv", "stories260k"))
    ap.add_argument("--page-kib", type=int, default=32)
    ap.add_argument("--T", default="1,2,4,8,16,32")
    ap.add_argument("--floor", default="reach", choices=["reach", "seen", "range", "all"])
    a = ap.parse_args()
    Ts = [int(x) for x in a.T.split(",")]
    global FLOOR
    FLOOR = a.floor
    page = a.page_kib * 1024 // 2
    rows = []
    sm = {os.path.basename(p): load_exps(p) for p in sorted(glob.glob(os.path.join(a.smollm2, "layer*_*.bf16")))}
    if sm:
        # [seq 2][head 3][pos 512][dim 64]: calibrate on one sequence, apply to the other, both ways
        half = lambda e: [e[: len(e) // 2], e[len(e) // 2:]]
        for c, t in ((0, 1), (1, 0)):
            rows += measure(f"smollm2 (calib seq {c}, test seq {t})", sm, half, [c], [t], page, Ts)
    bd = {os.path.basename(p): load_exps(p) for p in sorted(glob.glob(os.path.join(a.bundled, "layer*_*.bf16")))}
    if bd:
        # [seq 16][pos 512][head 4][dim 8]: calibrate on sequences 0..7, apply to 8..15
        sixteen = lambda e: list(e.reshape(16, -1))
        rows += measure("stories260k bundled (calib seq 0-7, test 8-15)", bd, sixteen, range(8), range(8, 16), page, Ts)
    print(f"| data | tables | T | unit | ratio | fallback blocks | frames |")
    print("|---|---|--:|---|--:|--:|--:|")
    for name, label, T, pages, r, fb, nf in rows:
        unit = f"{a.page_kib} KiB pages" if pages else "sequence"
        print(f"| {name} | {label} | {T} | {unit} | {r:.4f} | {fb} | {nf} |")


if __name__ == "__main__":
    main()
