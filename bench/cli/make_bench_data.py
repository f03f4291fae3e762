#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes SIZE MiB of bf16 with the statistics of the bundled real KV cache.

usage: make_bench_data.py OUT SIZE_MIB [DATA_DIR] [--seed N]

The output is a sequence of 512 KiB blocks. Each block is one of the bundled
real bf16 KV files (data/kv/stories260k/*.bf16, 2^18 values each), picked at
random, with the 7 low mantissa bits of every value replaced by random bits.
Sign and exponent, the part splitzip codes, are the real KV's own, value for
value; the mantissa stays as uniform as in real KV (its low bits are
noise-like there too), and no block repeats the bytes of another, so LZ
coders (zstd, lz4) cannot win by finding copies of the 5 MiB of source data.
Deterministic for a given seed. Standard library only.
"""
import glob
import os
import random
import sys


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--seed")]
    seed = 12
    for a in argv[1:]:
        if a.startswith("--seed="):
            seed = int(a.split("=", 1)[1])
    if len(args) < 2:
        sys.stderr.write(__doc__)
        return 1
    out, size_mib = args[0], int(args[1])
    here = os.path.dirname(os.path.abspath(__file__))
    data_dir = args[2] if len(args) > 2 else os.path.join(here, "..", "..", "data", "kv", "stories260k")
    files = sorted(glob.glob(os.path.join(data_dir, "*.bf16")))
    blocks = [open(f, "rb").read() for f in files]
    if not blocks or any(len(b) != len(blocks[0]) for b in blocks):
        sys.stderr.write("make_bench_data.py: no bundled bf16 files of one size in %s\n" % data_dir)
        return 1
    blk = len(blocks[0])
    src = [int.from_bytes(b, "little") for b in blocks]
    # Low byte of each little-endian bf16 value: 7 mantissa bits + exponent bit 0.
    mask = int.from_bytes(b"\x7f\x00" * (blk // 2), "little")
    keep = int.from_bytes(b"\x80\xff" * (blk // 2), "little")
    rng = random.Random(seed)
    total = size_mib << 20
    tmp = out + ".part"
    with open(tmp, "wb") as f:
        done = 0
        while done < total:
            x = src[rng.randrange(len(src))] & keep
            x |= int.from_bytes(rng.randbytes(blk), "little") & mask
            n = min(blk, total - done)
            f.write(x.to_bytes(blk, "little")[:n])
            done += n
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
