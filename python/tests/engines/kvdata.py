# SPDX-License-Identifier: Apache-2.0
"""Real KV pages for the engine tests: the shared SmolLM2-135M caches
(../shared/data/kv/smollm2, 30 layers, [2 seq, 512 tok, 3 heads, 64] bf16)
when present, else the bundled stories260K slice (data/kv/stories260k,
5 layers, [16 seq, 512 tok, 4 heads, 8] bf16).

A page is what an engine offloads for ``block_tokens`` tokens of one
sequence: every layer's K then V for those tokens, concatenated (vLLM's CPU
chunk and SGLang's layer-first host page hold the same values; the order
inside the page changes the compressed size by well under 1%)."""

import os
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
# ../shared next to the checkout (a worktree one level deeper: ../../shared),
# or $SZ_SHARED_KV (the directory holding smollm2/).
_SHARED = [Path(os.environ["SZ_SHARED_KV"])] if os.environ.get("SZ_SHARED_KV") else []
_SHARED += [ROOT.parent / "shared/data/kv", ROOT.parent.parent / "shared/data/kv"]
_SMOL = next((d / "smollm2" for d in _SHARED if (d / "smollm2/layer00_k.bf16").exists()),
             _SHARED[0] / "smollm2")
SETS = {
    "smollm2": (_SMOL, 30, (2, 512, 3, 64)),
    "stories260k": (ROOT / "data/kv/stories260k", 5, (16, 512, 4, 8)),
}


def available():
    return [n for n, (d, _, _) in SETS.items() if (d / "layer00_k.bf16").exists()]


def pages(name, block_tokens):
    """uint8 array [n_pages, page_bytes] of real KV pages."""
    d, layers, (seqs, toks, heads, dim) = SETS[name]
    kv = []
    for l in range(layers):
        for kind in "kv":
            a = np.fromfile(d / f"layer{l:02d}_{kind}.bf16", np.uint16)
            kv.append(a.reshape(seqs, toks // block_tokens, block_tokens * heads * dim))
    # [layer*2, seq, block, vals] -> [seq, block, layer*2, vals]
    arr = np.stack(kv).transpose(1, 2, 0, 3)
    return np.ascontiguousarray(arr.reshape(seqs * (toks // block_tokens), -1)).view(np.uint8)


def tagged(base, i):
    """Page ``i`` of an endless supply: real page i % n with i written, 7
    bits at a time, into the mantissas of its first 8 bf16 values, so every
    key has distinct content (a value returned under the wrong key is
    caught) while every value keeps its sign and exponent (what the codec
    codes stays real KV)."""
    p = base[i % len(base)].copy()
    bits = np.array([(i >> (7 * j)) & 0x7F for j in range(8)], np.uint8)
    p[0:16:2] = (p[0:16:2] & 0x80) | bits
    return p


def held_out_tables(pages, path=None):
    """A capacity table set calibrated on the first half of ``pages`` (the
    first sequence of smollm2, sequences 0-7 of the bundled KV) and the
    other half, whose pages are then stored (held out). With ``path`` the
    set is also saved there (the file a deployment's config names)."""
    import ml_dtypes
    import splitzip_kv as splitzip
    half = len(pages) // 2
    ts = splitzip.calibrate([p.view(ml_dtypes.bfloat16) for p in pages[:half]], mode="capacity")
    if path is not None:
        ts.save(str(path))
    return ts, np.ascontiguousarray(pages[half:])
