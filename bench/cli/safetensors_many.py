#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times `splitzip compress` and `decompress` of .safetensors files with many
small tensors, to show the cost is linear in the tensor count (issue 31:
100k tensors once took 12.3 s, quadratic in the JSON header parse).

usage: safetensors_many.py SPLITZIP [COUNTS...]   (default 12500 25000 50000 100000)

Each file holds COUNT bf16 tensors of 32 elements (random bytes) and a
compact JSON header padded with spaces; every run is checked to restore the
file byte for byte. Prints one line per count: seconds (best of 3) and
microseconds per tensor. Standard library only.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time


def write_file(path, count, elems=32):
    header, blob = {}, bytearray()
    for i in range(count):
        data = os.urandom(2 * elems)
        header["t%d" % i] = {"dtype": "BF16", "shape": [elems], "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + blob)


def best_of(cmd, n=3):
    best = None
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 1
    sz = argv[1]
    counts = [int(c) for c in argv[2:]] or [12500, 25000, 50000, 100000]
    with tempfile.TemporaryDirectory() as d:
        print("%9s %9s %12s %12s %14s" % ("tensors", "MB", "compress s", "decompress s", "us/tensor (c)"))
        for count in counts:
            src = os.path.join(d, "m.safetensors")
            write_file(src, count)
            packed, back = src + ".sz", os.path.join(d, "back.safetensors")
            c = best_of([sz, "compress", "-f", "--no-sync", "-o", packed, src])
            x = best_of([sz, "decompress", "-f", "--no-sync", "-o", back, packed])
            if open(back, "rb").read() != open(src, "rb").read():
                print("round trip differs at %d tensors" % count)
                return 1
            mb = os.path.getsize(src) / 1e6
            print("%9d %9.1f %12.3f %12.3f %14.2f" % (count, mb, c, x, 1e6 * c / count))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
