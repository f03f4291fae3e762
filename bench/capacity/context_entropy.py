#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How much an exponent model with context could gain over the capacity
mode's order-0 code per 64 Ki-element block (docs/DESIGN.md section 2).

Prints, for real KV (data/kv/stories260k/*.bf16 by default), the empirical
entropy in bits per exponent of: order-0 per block (what mode 1 approaches),
(sign, exponent) jointly, the exponent given the element's position mod P
(head_dim channel, one token row), given the previous exponent, and given the
exponent P elements back (the same channel one row up), each counted with one
table per 64 Ki-element block and per context value, table costs left out (a
lower bound for each model). Then the ratio 16 / (8 + H) each would allow.

  python bench/capacity/context_entropy.py [FILE.bf16 ...]
"""
import glob
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BLOCK = 1 << 16


def block_entropy(sym, nsym, ctx=None, nctx=1):
    """Bits per symbol: sum over blocks and context values of n * H(counts)."""
    total = 0.0
    for i in range(0, sym.size, BLOCK):
        x = sym[i:i + BLOCK]
        c = ctx[i:i + BLOCK] if ctx is not None else np.zeros(x.size, np.int64)
        counts = np.bincount(c * nsym + x, minlength=nctx * nsym).reshape(nctx, nsym).astype(np.float64)
        rows = counts.sum(axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(counts > 0, counts / rows, 1.0)
        total -= (counts * np.log2(p)).sum()
    return total / sym.size


def main():
    files = sys.argv[1:] or sorted(glob.glob(os.path.join(ROOT, "data", "kv", "stories260k", "layer*.bf16")))
    bits = np.concatenate([np.fromfile(f, dtype="<u2") for f in files])
    e = ((bits >> 7) & 0xFF).astype(np.int64)
    s = (bits >> 15).astype(np.int64)
    idx = np.arange(e.size)
    rows = [("order-0 per block (mode 1's model)", block_entropy(e, 256))]
    rows.append(("(sign, exponent) jointly, minus the 1 raw sign bit", block_entropy(s * 256 + e, 512) - 1.0))
    for p in (2, 8, 32, 128):
        rows.append((f"given position mod {p}", block_entropy(e, 256, idx % p, p)))
    prev = np.concatenate([[0], e[:-1]])
    rows.append(("given the previous exponent (order 1)", block_entropy(e, 256, prev, 256)))
    for p in (8, 32):
        back = np.concatenate([np.zeros(p, np.int64), e[:-p]])
        rows.append((f"given the exponent {p} elements back", block_entropy(e, 256, back, 256)))
    print(f"{e.size} exponents from {len(files)} file(s); 64 Ki-element blocks, table costs left out\n")
    print("| model | bits/exponent | ratio bound 16/(8+H) |")
    print("|---|---:|---:|")
    for name, h in rows:
        print(f"| {name} | {h:.3f} | {16 / (8 + h):.4f} |")


if __name__ == "__main__":
    main()
