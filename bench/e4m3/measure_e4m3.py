# SPDX-License-Identifier: Apache-2.0
"""FP8 E4M3 escape-layout study (docs/DESIGN.md section 5) on the bundled real KV.

Casts each bf16 tensor of data/kv/<set>/ to E4M3 the way vLLM does (per-tensor
scale amax / 448, ml_dtypes.float8_e4m3fn) and reports, per file and in total:
exponent entropy, top-7 coverage, the ratio of the fixed 3-bit code with
(a) u16 positions + per-chunk counts per escape (the nibble-mode layout),
(b) the in-band marker (code 7) with 4-bit side-stream exponents (this
format), the measured splitzip frame (when splitzip_kv is importable), an
order-0 entropy bound per 64K block, a per-block Huffman code (the small
variable-length alternative), and zstd -1 (numcodecs.Zstd).

    python bench/e4m3/measure_e4m3.py [data/kv/stories260k]
"""
import glob
import heapq
import math
import os
import sys
import time

import ml_dtypes
import numpy as np


def to_e4m3(raw_bf16_u16):
    x = raw_bf16_u16.view(ml_dtypes.bfloat16).astype(np.float32)
    amax = float(np.max(np.abs(x)))
    scale = amax / 448.0 if amax > 0 else 1.0
    return (x / scale).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)


def huffman_bits(counts):
    """Total bits of an (unlimited) Huffman code for the counts."""
    items = [c for c in counts if c > 0]
    if len(items) <= 1:
        return 0
    heapq.heapify(items)
    total = 0
    while len(items) > 1:
        a = heapq.heappop(items)
        b = heapq.heappop(items)
        total += a + b
        heapq.heappush(items, a + b)
    return total


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "data/kv/stories260k"
    try:
        import splitzip_kv
    except ImportError:
        splitzip_kv = None
    try:
        from numcodecs import Zstd
    except ImportError:
        Zstd = None
    tot = dict(n=0, pos=0, marker=0, frame=0, ent=0.0, huff=0, zstd=0, cover=0)
    print(f"{'file':20s} {'H(exp)':>7s} {'top7%':>6s} {'pos':>6s} {'marker':>7s} {'frame':>6s} "
          f"{'H/blk':>6s} {'huff':>6s} {'zstd1':>6s}")
    for path in sorted(glob.glob(os.path.join(root, "*.bf16"))):
        v = to_e4m3(np.fromfile(path, dtype=np.uint16))
        n = v.size
        e = (v >> 3) & 15
        counts = np.bincount(e, minlength=16)
        p = counts[counts > 0] / n
        h = float(-(p * np.log2(p)).sum())
        top = np.argsort(-counts, kind="stable")[:7]
        cover = int(counts[top].sum())
        E = n - cover
        payload = math.ceil(n / 2) + math.ceil(3 * n / 8)
        # (a) positions: u16 position + 4-bit exponent (a byte in nibble mode) + u16 count per 1024 chunk
        pos_bytes = payload + 3 * E + 2 * math.ceil(n / 1024)
        marker_bytes = payload + math.ceil(E / 2)
        ent_bits = 0.0
        huff_bits = 0
        for b in range(0, n, 65536):
            c = np.bincount(e[b:b + 65536], minlength=16)
            q = c[c > 0] / c.sum()
            ent_bits += float(-(q * np.log2(q)).sum()) * c.sum()
            huff_bits += huffman_bits(list(c)) + 8 * 16  # + a code-length table per block
        ent_bytes = math.ceil(n / 2) + ent_bits / 8
        huff_bytes = math.ceil(n / 2) + huff_bits / 8
        frame = 0
        if splitzip_kv is not None:
            frame = len(splitzip_kv.compress(v, dtype="fp8_e4m3", checksum=False))
        zs = len(Zstd(level=1).encode(v)) if Zstd else 0
        print(f"{os.path.basename(path):20s} {h:7.3f} {100 * cover / n:6.2f} {n / pos_bytes:6.3f} "
              f"{n / marker_bytes:7.3f} {n / frame if frame else 0:6.3f} {n / ent_bytes:6.3f} "
              f"{n / huff_bytes:6.3f} {n / zs if zs else 0:6.3f}")
        tot["n"] += n
        tot["pos"] += pos_bytes
        tot["marker"] += marker_bytes
        tot["frame"] += frame
        tot["ent"] += ent_bytes
        tot["huff"] += huff_bytes
        tot["zstd"] += zs
        tot["cover"] += cover
    n = tot["n"]
    print(f"{'TOTAL':20s} {'':7s} {100 * tot['cover'] / n:6.2f} {n / tot['pos']:6.3f} {n / tot['marker']:7.3f} "
          f"{n / tot['frame'] if tot['frame'] else 0:6.3f} {n / tot['ent']:6.3f} {n / tot['huff']:6.3f} "
          f"{n / tot['zstd'] if tot['zstd'] else 0:6.3f}")
    if splitzip_kv is not None:
        v = np.concatenate([to_e4m3(np.fromfile(p, dtype=np.uint16))
                            for p in sorted(glob.glob(os.path.join(root, "*.bf16")))])
        for _ in range(2):
            t = time.perf_counter()
            f = splitzip_kv.compress(v, dtype="fp8_e4m3", checksum=False, threads=1)
            tc = time.perf_counter() - t
            t = time.perf_counter()
            splitzip_kv.decompress(f, threads=1)
            td = time.perf_counter() - t
        print(f"splitzip fp8_e4m3, 1 thread: compress {v.size / tc / 1e9:.2f} GB/s, "
              f"decompress {v.size / td / 1e9:.2f} GB/s ({v.size} bytes)")


if __name__ == "__main__":
    main()
