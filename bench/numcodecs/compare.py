# SPDX-License-Identifier: Apache-2.0
"""splitzip's numcodecs codec against Blosc2 (shuffle+zstd-1, shuffle+lz4)
and numcodecs Zstd(1) on data/kv, one thread each, same run.

Ratio = original bytes / encoded bytes over all files; speed = original
bytes / seconds, best of --reps runs per file, summed over files.

    python bench/numcodecs/compare.py [--reps 5] [data/kv/stories260k]
"""
import argparse
import glob
import os
import time

import numpy as np


def best(fn, reps):
    t = float("inf")
    out = None
    for _ in range(reps):
        s = time.perf_counter()
        out = fn()
        t = min(t, time.perf_counter() - s)
    return t, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?", default="data/kv/stories260k")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    import blosc2
    import numcodecs
    from numcodecs import Zstd

    from splitzip_kv.numcodecs_codec import SplitzipCodec

    blosc2.set_nthreads(1)
    codecs = {
        "splitzip (checksum on, default)": SplitzipCodec(dtype="bf16", view="uint16", threads=1),
        "splitzip (checksum=False)": SplitzipCodec(dtype="bf16", view="uint16", threads=1, checksum=False),
        "numcodecs Zstd(level=1)": Zstd(level=1),
    }

    class B2:
        def __init__(self, codec):
            self.cp = {"codec": codec, "clevel": 1, "filters": [blosc2.Filter.SHUFFLE], "typesize": 2,
                       "nthreads": 1}

        def encode(self, a):
            return blosc2.compress2(a.tobytes(), **self.cp)

        def decode(self, b):
            return np.frombuffer(blosc2.decompress2(b), dtype=np.uint16)

    codecs["Blosc2 shuffle+zstd-1"] = B2(blosc2.Codec.ZSTD)
    codecs["Blosc2 shuffle+lz4 (clevel 1)"] = B2(blosc2.Codec.LZ4)
    files = sorted(glob.glob(os.path.join(args.root, "*.bf16")))
    data = [np.fromfile(f, dtype=np.uint16) for f in files]
    total = sum(d.nbytes for d in data)
    print(f"{len(files)} files, {total} bytes of bf16 KV ({args.root}), 1 thread, best of {args.reps}")
    print(f"{'codec':34s} {'ratio':>7s} {'enc MB/s':>9s} {'dec MB/s':>9s}")
    for name, c in codecs.items():
        enc_t = dec_t = 0.0
        size = 0
        for d in data:
            te, b = best(lambda: c.encode(d), args.reps)
            td, back = best(lambda: c.decode(b), args.reps)
            back = np.frombuffer(back, np.uint8) if isinstance(back, (bytes, bytearray)) else np.asarray(back)
            assert back.view(np.uint8).tobytes() == d.tobytes(), name
            enc_t += te
            dec_t += td
            size += len(b)
        print(f"{name:34s} {total / size:7.4f} {total / enc_t / 1e6:9.0f} {total / dec_t / 1e6:9.0f}")
    print("versions: numcodecs", numcodecs.__version__, "blosc2", blosc2.__version__)


if __name__ == "__main__":
    main()
