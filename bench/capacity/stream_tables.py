#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a table per group of streams would give a capacity frame (docs/DESIGN.md section 2).

Mode 1 codes element j of a 65536-element block in stream j mod 32 with one
Huffman table per block. This sizes the same layout with G tables per block,
stream s using table s mod G (a channel context when the channel period
divides 32): per table mode 1's table bytes and the Huffman-coded bits
(unlimited lengths; the 12-bit limit costs < 0.1% on KV), per block the 32
stream sizes, the index entry and ~16 bytes of stream padding.

  python bench/capacity/stream_tables.py FILE.bf16 [MAX_ELEMS]
"""
import heapq
import sys

import numpy as np


def huffman_bits(counts):
    h = [int(c) for c in counts if c > 0]
    if len(h) < 2:
        return 0
    heapq.heapify(h)
    total = 0
    while len(h) > 1:
        a, b = heapq.heappop(h), heapq.heappop(h)
        total += a + b
        heapq.heappush(h, a + b)
    return total


def table_bytes(counts):
    present = np.nonzero(counts)[0]
    return 2 + (present[-1] - present[0] + 2) // 2  # first, last, one nibble per value between


def main():
    raw = np.fromfile(sys.argv[1], dtype="<u2")
    if len(sys.argv) > 2:
        raw = raw[: int(sys.argv[2])]
    e = ((raw >> 7) & 0xFF).astype(np.int64)
    n, block = len(e), 1 << 16
    for g in (1, 2, 4, 8, 16, 32):
        exp_bytes = 0.0
        for b in range(0, n, block):
            blk = e[b : b + block]
            for t in range(g):
                c = np.bincount(np.concatenate([blk[s::32] for s in range(t, 32, g)]), minlength=256)
                exp_bytes += table_bytes(c) + huffman_bits(c) / 8
            exp_bytes += 64 + 4 + 16
        print(f"G={g:2d} tables per block: {8 * exp_bytes / n:.3f} bits per exponent, "
              f"ratio {2 * n / (64 + n + exp_bytes):.4f}", flush=True)


if __name__ == "__main__":
    main()
