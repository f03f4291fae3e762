#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CPU time per page of compress_batch / decompress_batch, as a serving stack
calls them: held-out smollm2 pages of 32 KiB in serving order (page p of
every layer file, then p + 1), capacity mode with the page's layer set
(calibrated on the file's other sequence), one batch call per direction,
the frames of each call dropped before the next (docs/DESIGN.md 7a,
"Python batches and the heap"). Best of REPS calls.

  python bench/pages/batch_heap.py [--reps 10] [--page-kib 32]

Run it twice to see what the binding's heap keeping buys: as is, and with
MALLOC_TRIM_THRESHOLD_=131072 in the environment (a fixed trim threshold
turns glibc's own raising of it off, so every batch faults its pages again).
"""
import argparse
import glob
import os
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--page-kib", type=int, default=32)
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "kv", "smollm2"))
    args = ap.parse_args()
    import ml_dtypes
    import splitzip_kv as sz
    bf16 = ml_dtypes.bfloat16
    files = sorted(glob.glob(os.path.join(args.data, "layer*.bf16")))
    if not files:
        raise SystemExit(f"no layer*.bf16 in {args.data}")
    raw = [np.fromfile(f, "<u2") for f in files]
    half = raw[0].size // 2
    sets = [sz.calibrate(r[:half].view(bf16), mode="capacity") for r in raw]
    test = [r[half:] for r in raw]
    page = args.page_kib * 512
    n = half // page
    pages = np.stack([t[p * page:(p + 1) * page] for p in range(n) for t in test]).view(bf16)
    tables = [sets[f] for p in range(n) for f in range(len(test))]
    out = np.zeros_like(pages)

    def best(f):
        b = float("inf")
        for _ in range(args.reps):
            t = time.process_time()
            f()
            b = min(b, time.process_time() - t)
        return b

    frames = sz.compress_batch(pages, tables=tables, threads=1)
    sz.decompress_batch(frames, out, tables=sets, threads=1)
    if not np.array_equal(out.view(np.uint16), pages.view(np.uint16)):
        raise SystemExit("round trip differs")
    te = best(lambda: sz.compress_batch(pages, tables=tables, threads=1))
    td = best(lambda: sz.decompress_batch(frames, out, tables=sets, threads=1))
    tn = best(lambda: sz.decompress_batch(frames, tables=sets, threads=1))
    count = len(frames)
    trim = os.environ.get("MALLOC_TRIM_THRESHOLD_", "glibc default")
    print(f"{count} pages of {args.page_kib} KiB, MALLOC_TRIM_THRESHOLD_={trim}: us of CPU per page: "
          f"compress_batch {te / count * 1e6:.2f}, decompress_batch into one array {td / count * 1e6:.2f}, "
          f"decompress_batch new arrays {tn / count * 1e6:.2f}; round trip exact")


if __name__ == "__main__":
    main()
