# SPDX-License-Identifier: Apache-2.0
"""A compressing SGLang HiCache storage backend (L3), loaded by module path.

Enable it (docs/ENGINES.md)::

    python -m sglang.launch_server ... --enable-hierarchical-cache \\
        --hicache-storage-backend dynamic \\
        --hicache-storage-backend-extra-config '{"backend_name": "splitzip",
            "module_path": "splitzip_kv.engines.sglang_hicache",
            "class_name": "SplitzipHiCacheStorage", "interface_v1": 1,
            "capacity_bytes": 34359738368, "mode": "capacity"}'

Pages are kept in this process's host memory as splitzip frames (checksum
always on) within ``capacity_bytes`` of compressed bytes, least recently
used out first. Both of HiCache's paths are served:

- default (``interface_v1`` 0): ``batch_set(keys, values)`` with the flat
  pages the controller copied out of the host pool, ``batch_get(keys,
  target_locations)`` decoding into the controller's flat pages;
- ``interface_v1: 1``: ``batch_set_v1`` / ``batch_get_v1(keys,
  host_indices)`` code straight from and into the host pool's K and V
  pages (the pool's ``get_page_buffer_meta``), no intermediate page copy.

A value that does not decode into exactly its page is a miss (None / False):
the controller stops the prefix there and recomputes.

Extra-config keys: capacity_bytes (required), mode ("fast" default, or
"capacity"), threads (codec threads per batch call, 0: default).
"""

import ctypes

import numpy as np
import torch
from sglang.srt.mem_cache.hicache_storage import HiCacheStorage

from ._pages import CompressedPageCache, check_mode

_KNOWN = {"backend_name", "module_path", "class_name", "interface_v1", "capacity_bytes",
          "mode", "threads"}


def _bytes_of(t):
    """The uint8 numpy view of a contiguous CPU tensor (no copy)."""
    if t.device.type != "cpu":
        raise ValueError("splitzip HiCache storage reads host memory pages only")
    if not t.is_contiguous():
        t = t.contiguous()
    return t.view(-1).view(torch.uint8).numpy()


class SplitzipHiCacheStorage(HiCacheStorage):
    """HiCacheStorage holding compressed pages in host memory."""

    def __init__(self, storage_config, kwargs=None):
        extra = dict(getattr(storage_config, "extra_config", None) or {})
        unknown = sorted(set(extra) - _KNOWN)
        if unknown:
            raise ValueError(f"SplitzipHiCacheStorage: unknown extra-config keys {unknown}")
        if not extra.get("capacity_bytes"):
            raise ValueError("SplitzipHiCacheStorage needs capacity_bytes in "
                             "--hicache-storage-backend-extra-config")
        self.capacity_bytes = int(extra["capacity_bytes"])
        self.mode = check_mode(extra.get("mode", "fast"))
        self.threads = int(extra.get("threads", 0))
        self.storage_config = storage_config
        self.cache = None       # made when the host pool (and so the dtype) is known
        self.mem_pool_host = None
        self._base = None       # (address, uint8 view) of the pool's kv_buffer

    # -- set-up --------------------------------------------------------------

    def register_mem_pool_host(self, mem_pool_host):
        super().register_mem_pool_host(mem_pool_host)
        self._ensure_cache(mem_pool_host.dtype)
        buf = getattr(mem_pool_host, "kv_buffer", None)
        if isinstance(buf, torch.Tensor) and buf.device.type == "cpu" and buf.is_contiguous():
            self._base = (buf.data_ptr(), buf.view(-1).view(torch.uint8).numpy())

    def _ensure_cache(self, dtype):
        if self.cache is None:
            self.cache = CompressedPageCache(self.capacity_bytes, dtype, mode=self.mode,
                                             threads=self.threads)
        return self.cache

    # -- default interface ---------------------------------------------------

    def exists(self, key):
        return self.cache is not None and self.cache.touch(key)

    def batch_exists(self, keys, extra_info=None):
        if self.cache is None:
            return 0
        for i, k in enumerate(keys):
            if not self.cache.touch(k):
                return i
        return len(keys)

    def set(self, key, value=None, target_location=None, target_sizes=None):
        return self.batch_set([key], [value])

    def batch_set(self, keys, values=None, target_locations=None, target_sizes=None):
        if values is None or len(values) != len(keys):
            return False
        if not keys:
            return True
        cache = self._ensure_cache(values[0].dtype)
        try:
            return all(cache.put(keys, [_bytes_of(v) for v in values]))
        except Exception:
            return False

    def get(self, key, target_location=None, target_sizes=None):
        return self.batch_get([key], [target_location])[0]

    def batch_get(self, keys, target_locations=None, target_sizes=None):
        if self.cache is None or target_locations is None:
            return [None] * len(keys)
        try:
            outs = [_bytes_of(t) for t in target_locations]
        except Exception:
            return [None] * len(keys)
        ok = self.cache.get(keys, outs)
        return [t if f else None for t, f in zip(target_locations, ok)]

    # -- interface_v1: straight from and into the host pool -------------------

    def _page_parts(self, host_indices):
        """The host pool's memory of each page, as uint8 arrays, and the
        number of parts per page (K and V, or K and V of every layer)."""
        pool = self.mem_pool_host
        ptrs, sizes = pool.get_page_buffer_meta(host_indices)
        pages = len(host_indices) // pool.page_size
        if pages == 0 or len(ptrs) % pages:
            raise ValueError(f"{len(ptrs)} buffers for {pages} pages")
        parts = []
        if self._base is not None:
            addr, flat = self._base
            for p, n in zip(ptrs, sizes):
                o = p - addr
                if o < 0 or o + n > flat.size:
                    raise ValueError("page buffer outside the host pool")
                parts.append(flat[o:o + n])
        else:
            for p, n in zip(ptrs, sizes):
                parts.append(np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(p)))
        return parts, len(ptrs) // pages

    def _keyed_parts(self, keys, host_indices):
        """The host pool's page parts for these keys, or None when the pool
        gives none or a count that does not match the keys."""
        try:
            parts, per = self._page_parts(host_indices)
        except Exception:
            return None
        return (parts, per) if len(parts) == per * len(keys) else None

    def batch_set_v1(self, keys, host_indices, extra_info=None):
        got = self._keyed_parts(keys, host_indices) if self.cache is not None and keys else None
        if got is None:
            return [False] * len(keys)
        try:
            return self.cache.put(keys, *got)
        except Exception:
            return [False] * len(keys)

    def batch_get_v1(self, keys, host_indices, extra_info=None):
        got = self._keyed_parts(keys, host_indices) if self.cache is not None and keys else None
        if got is None:
            return [False] * len(keys)
        return self.cache.get(keys, *got)

    # -- housekeeping --------------------------------------------------------

    def clear(self):
        if self.cache is not None:
            self.cache.clear()

    def close(self):
        self.clear()

    def stats(self):
        c = self.cache
        if c is None:
            return {"pages": 0, "used_bytes": 0, "capacity_bytes": self.capacity_bytes}
        return {"pages": len(c), "used_bytes": c.used_bytes, "capacity_bytes": c.capacity_bytes,
                "mode": c.mode, "stored": c.stored, "evicted": c.evicted, "refused": c.refused,
                "corrupt": c.corrupt}
