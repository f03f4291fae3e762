# SPDX-License-Identifier: Apache-2.0
"""The example at the top of docs/OFFLOAD.md, runnable: offload one request's
KV to Mooncake Store and fetch it back into other pages.
    SZOF_MASTER=127.0.0.1:50551 python examples/offload/quickstart.py"""
import os
import numpy as np
from splitzip_kv.offload import KVOffloadStore, OffloadConfig, PagedKVLayout, block_hashes

layout = PagedKVLayout(layers=4, block_tokens=16, kv_heads=8, head_dim=128, dtype="bf16")
kv = layout.allocate(num_blocks=64)                    # the engine's paged KV cache (host)
kv[...] = np.random.default_rng(0).normal(0, 1, kv.shape)  # stand-in for a prefill's KV
store = KVOffloadStore(OffloadConfig(master=os.environ.get("SZOF_MASTER", "127.0.0.1:50551")),
                       model="demo-model", layout=layout)

tokens = np.arange(100)                                # the request's prompt token ids
hashes = block_hashes(tokens, layout.block_tokens)     # chained prefix hashes (6 full blocks)
blocks = [3, 9, 4, 20, 21, 22]                         # where those blocks sit in kv
assert all(s.ok for s in store.put_blocks(kv, blocks, hashes))   # one status per (block, layer)

hit = store.lookup_prefix(hashes)                      # leading blocks in the store: 6
st = store.get_blocks(kv, [40, 41, 42, 43, 44, 45][:hit], hashes[:hit])  # decoded in place
refused = [s.key for s in st if not s.ok]              # missing or corrupt: recompute those
assert not refused and kv[:, :, 40].tobytes() == kv[:, :, 3].tobytes()
print(f"stored {store.raw_bytes_put} bytes of KV as {store.stored_bytes_put}; {hit} blocks hit")
store.remove_blocks(hashes)
store.close()
