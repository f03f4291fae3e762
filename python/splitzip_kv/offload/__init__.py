# SPDX-License-Identifier: Apache-2.0
"""Host-memory KV offload over Mooncake Store with splitzip-compressed chunks.

See docs/OFFLOAD.md. Mooncake is imported only when a store is opened, so
``splitzip_kv.offload.chunk`` and ``splitzip_kv.offload.keys`` work without it.
"""

from .chunk import ChunkError, chunk_bound, decode_into, encode, encode_into, parse
from .keys import block_hashes, chunk_key
from .store import (ChunkStatus, KVOffloadStore, OffloadConfig, PagedKVLayout,
                    calibrate_layer_tables, connect, mooncake_error, tables_key)

__all__ = [
    "ChunkError", "ChunkStatus", "KVOffloadStore", "OffloadConfig", "PagedKVLayout",
    "block_hashes", "calibrate_layer_tables", "chunk_bound", "chunk_key", "connect", "decode_into", "encode",
    "encode_into", "mooncake_error", "parse", "tables_key",
]
