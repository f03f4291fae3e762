# SPDX-License-Identifier: Apache-2.0
"""Keys the way serving stacks key KV prefixes.

A prefix cache keys a block of ``block_tokens`` tokens by a hash chained
over every block before it (vLLM's prefix caching, LMCache's chunk hashes,
SGLang's radix pages): two requests share a block's KV exactly when they
share all tokens up to the end of that block. The offload key of one chunk
adds the model (and anything else that changes the KV: a LoRA, a TP rank)
and the layer:

    {namespace}/{model}/{block hash}/L{layer}
"""

import hashlib

import numpy as np


def block_hashes(tokens, block_tokens, *, salt=b"", parent=None):
    """Chained hashes (hex, 32 chars) of the full blocks of ``tokens``.

    ``tokens``: sequence of token ids. A trailing partial block has no hash
    (serving stacks cache full blocks only). ``salt`` separates anything the
    ids do not capture (model revision, LoRA, multimodal inputs); ``parent``
    continues a chain from an earlier hash.
    """
    if block_tokens <= 0:
        raise ValueError("block_tokens must be positive")
    ids = np.asarray(tokens, dtype=np.int64)
    prev = bytes.fromhex(parent) if parent else b""
    out = []
    for start in range(0, ids.size - block_tokens + 1, block_tokens):
        h = hashlib.blake2b(digest_size=16)
        h.update(salt)
        h.update(prev)
        h.update(ids[start:start + block_tokens].astype("<i8").tobytes())
        prev = h.digest()
        out.append(prev.hex())
    return out


def chunk_key(model, block_hash, layer, namespace="szkv"):
    for part, what in ((model, "model"), (namespace, "namespace")):
        if not part or "/" in part:
            raise ValueError(f"{what} must be a non-empty string without '/'")
    return f"{namespace}/{model}/{block_hash}/L{int(layer)}"
