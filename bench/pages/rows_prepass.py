#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python work decompress_batch(frames, rows) does before the codec:
the frames' dtype. Times, per frame, the pass it used (batch_outputs: a
tuple per frame, then a set) against the one it uses (batch_dtypes: the
distinct names only), on real bf16 KV (../shared/data/kv/smollm2) in
32 KiB pages, best of REPS (200) passes, wall time.

  python bench/pages/rows_prepass.py
"""
import glob
import os
import time

import ml_dtypes
import numpy as np

import splitzip_kv as sz
from splitzip_kv import _core

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KV = os.environ.get("KV") or next((d for d in (os.path.join(ROOT, up, "shared", "data", "kv", "smollm2")
                                                for up in ("..", os.path.join("..", ".."))) if os.path.isdir(d)), "")
raw = np.concatenate([np.fromfile(f, "<u2") for f in sorted(glob.glob(os.path.join(KV, "layer*.bf16")))])
n = 32 * 512
count = raw.size // n
frames = sz.compress_batch(raw[:count * n].reshape(count, n).view(ml_dtypes.bfloat16), threads=1)
reps = int(os.environ.get("REPS", "200"))


def per_frame_ns(f):
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best / count * 1e9


old = per_frame_ns(lambda: {o[0] for o in _core.batch_outputs(frames)})
new = per_frame_ns(lambda: _core.batch_dtypes(frames))
print(f"{count} frames of 32 KiB: batch_outputs + set {old:.0f} ns/frame, batch_dtypes {new:.0f} ns/frame")
