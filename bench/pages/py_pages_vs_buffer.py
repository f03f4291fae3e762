#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fast mode through the Python batch call against one 256 MiB buffer, one
thread, as bench/pages/run.py measures them (issue 29 target: 32 and 64 KiB
pages >= 0.85x of the 256 MiB figure), without the peers: real bf16 KV
(../shared/data/kv/smollm2) cut into pages; each round compress_batch then
decompress_batch into one array; best of REPS (7) rounds, GB of raw bytes per
CPU-second. CS=0 turns the checksum off. Prints one line.

  python bench/pages/py_pages_vs_buffer.py [label]
"""
import glob
import os
import sys
import time

import ml_dtypes
import numpy as np

import splitzip_kv as sz

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KV = os.environ.get("KV") or next((d for d in (os.path.join(ROOT, up, "shared", "data", "kv", "smollm2")
                                                for up in ("..", os.path.join("..", ".."))) if os.path.isdir(d)), "")
raw = np.concatenate([np.fromfile(f, "<u2") for f in sorted(glob.glob(os.path.join(KV, "layer*.bf16")))])
reps = int(os.environ.get("REPS", "7"))
cs = os.environ.get("CS", "1") == "1"


def cpu(f):
    t = time.process_time()
    r = f()
    return time.process_time() - t, r


res = {}
for kib in (32, 64):
    n = kib * 512
    count = raw.size // n
    pages = raw[:count * n].reshape(count, n).view(ml_dtypes.bfloat16)
    out = np.zeros_like(pages)
    be = bd = 1e9
    for _ in range(reps):
        te, fr = cpu(lambda: sz.compress_batch(pages, mode="fast", threads=1, checksum=cs))
        td, _ = cpu(lambda: sz.decompress_batch(fr, out, threads=1))
        be, bd = min(be, te), min(bd, td)
    assert np.array_equal(out.view(np.uint16), pages.view(np.uint16))
    res[kib] = (pages.nbytes / be / 1e9, pages.nbytes / bd / 1e9)
n = 256 << 19
a = np.resize(raw, n).view(ml_dtypes.bfloat16)
o = np.zeros(sz.compress_bound("bf16", n), np.uint8)
back = np.zeros_like(a)
be = bd = 1e9
for _ in range(max(3, reps // 2)):
    te, r = cpu(lambda: sz.compress_into(a, o, mode="fast", threads=1, checksum=cs))
    td, _ = cpu(lambda: sz.decompress(o[:r.size], out=back, threads=1))
    be, bd = min(be, te), min(bd, td)
assert np.array_equal(back.view(np.uint16), a.view(np.uint16))
big = (a.nbytes / be / 1e9, a.nbytes / bd / 1e9)
print(f"{sys.argv[1] if len(sys.argv) > 1 else ''} cs={int(cs)} 256MiB {big[0]:.2f}/{big[1]:.2f} "
      + " ".join(f"{k}KiB {e:.2f}/{d:.2f} ({e / big[0]:.2f}x/{d / big[1]:.2f}x)" for k, (e, d) in res.items()),
      f"load {os.getloadavg()[0]:.1f}")
