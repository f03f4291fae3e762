# SPDX-License-Identifier: Apache-2.0
"""A compressing SGLang HiCache storage backend (L3), loaded by module path.

Enable it (docs/ENGINES.md)::

    python -m sglang.launch_server ... --enable-hierarchical-cache \\
        --hicache-storage-backend dynamic \\
        --hicache-storage-backend-extra-config '{"backend_name": "splitzip",
            "module_path": "splitzip_kv.engines.sglang_hicache",
            "class_name": "SplitzipHiCacheStorage", "interface_v1": 1,
            "capacity_bytes": 34359738368, "mode": "capacity"}'

``store`` says where the compressed pages live (splitzip_kv.engines._remote):
``"host"`` (default: this process's memory, within ``capacity_bytes`` of
frames, least recently used out first), ``"mooncake"`` (a Mooncake Store
pool: one checksummed value per page, keyed by the page hash, shared by
every engine on the pool) or ``"both"`` (the host cache in front of the
pool, written from one encode). Both of HiCache's paths are served:

- default (``interface_v1`` 0): ``batch_set(keys, values)`` with the flat
  pages the controller copied out of the host pool, ``batch_get(keys,
  target_locations)`` decoding into the controller's flat pages;
- ``interface_v1: 1``: ``batch_set_v1`` / ``batch_get_v1(keys,
  host_indices)`` code straight from and into the host pool's K and V
  pages (the pool's ``get_page_buffer_meta``), no intermediate page copy.

A value that does not decode into exactly its page (flipped, another key's,
lost with a killed store client) is a miss (None / False): the controller
stops the prefix there and recomputes.

Extra-config keys: store ("host" default, "mooncake", "both"),
capacity_bytes (host budget; host and both), mooncake (OffloadConfig
fields of the pool: master required; mooncake and both), model (key
component in the pool; default the model name and TP rank), mode ("fast"
default, or "capacity"; "capacity" when tables are given), threads (codec
threads per batch call, 0: default), tables (capacity table sets: a set
file's path or a list of them; docs/ENGINES.md "Table sets").
"""

import ctypes
import threading

import numpy as np
import torch
from sglang.srt.mem_cache.hicache_storage import HiCacheStorage

from . import _remote
from ._pages import CompressedPageCache, check_mode, splitzip_dtype

_KNOWN = {"backend_name", "module_path", "class_name", "interface_v1", "capacity_bytes",
          "mode", "threads", "store", "mooncake", "model", "tables"}


def _bytes_of(t):
    """The uint8 numpy view of a contiguous CPU tensor (no copy)."""
    if t.device.type != "cpu":
        raise ValueError("splitzip HiCache storage reads host memory pages only")
    if not t.is_contiguous():
        t = t.contiguous()
    return t.view(-1).view(torch.uint8).numpy()


class SplitzipHiCacheStorage(_remote.RemoteCounters, HiCacheStorage):
    """HiCacheStorage holding compressed pages in host memory."""

    def __init__(self, storage_config, kwargs=None):
        extra = dict(getattr(storage_config, "extra_config", None) or {})
        unknown = sorted(set(extra) - _KNOWN)
        if unknown:
            raise ValueError(f"SplitzipHiCacheStorage: unknown extra-config keys {unknown}")
        self.store = _remote.check_store(extra.get("store", "host"))
        cap = int(extra.get("capacity_bytes", 0) or 0)
        if self.store != "mooncake" and not cap:
            raise ValueError("SplitzipHiCacheStorage needs capacity_bytes (the host budget) in "
                             "--hicache-storage-backend-extra-config")
        if self.store == "mooncake" and cap:
            raise ValueError("SplitzipHiCacheStorage: capacity_bytes is the host budget; with "
                             "store 'mooncake' the pool's segments are the budget")
        if self.store == "host" and "mooncake" in extra:
            raise ValueError("SplitzipHiCacheStorage: mooncake options need store 'mooncake' or 'both'")
        self.capacity_bytes = cap
        self.tables, mode = _remote.tier_tables(extra.get("tables"), extra.get("mode"))
        self.mode = check_mode(mode)
        self.threads = int(extra.get("threads", 0))
        self.storage_config = storage_config
        self.cache = None       # made when the host pool (and so the dtype) is known
        self.dtype = None
        self.mem_pool_host = None
        self._base = None       # (address, uint8 view) of the pool's KV buffer
        self.remote = None
        if self.store != "host":
            model = extra.get("model")
            if model is None:
                model = f"{getattr(storage_config, 'model_name', None) or 'model'}-tp" \
                        f"{getattr(storage_config, 'tp_rank', 0)}"
            self.remote = _remote.open_store(extra.get("mooncake"), model, self.mode, self.threads,
                                             self.tables)
        # Mooncake counters (reports; the backup and prefetch threads both count).
        self._lock = threading.Lock()
        self._init_remote_counters()

    # -- set-up --------------------------------------------------------------

    def register_mem_pool_host(self, mem_pool_host):
        super().register_mem_pool_host(mem_pool_host)
        self._ensure_cache(mem_pool_host.dtype)
        buf = getattr(mem_pool_host, "kv_buffer", None)
        if not isinstance(buf, torch.Tensor):
            buf = getattr(mem_pool_host, "k_buffer", None)   # MLA pools
        if isinstance(buf, torch.Tensor) and buf.device.type == "cpu" and buf.is_contiguous():
            self._base = (buf.data_ptr(), buf.view(-1).view(torch.uint8).numpy())

    def _ensure_cache(self, dtype):
        if self.dtype is None:
            self.dtype = splitzip_dtype(dtype)
        if self.cache is None and self.store != "mooncake":
            self.cache = CompressedPageCache(self.capacity_bytes, dtype, mode=self.mode,
                                             threads=self.threads, tables=self.tables)
        return self.cache

    def _ready(self):
        return self.dtype is not None

    def _held(self, keys):
        """Which keys the host cache holds (all False without one)."""
        if self.cache is None:
            return [False] * len(keys)
        missing = set(self.cache.missing(keys))
        return [k not in missing for k in keys]

    def _put(self, keys, src, offsets, per, part_elems):
        """Pages of ``keys`` (``per`` parts each at ``offsets`` of ``src``)
        into the store(s): the host cache from the frames coded for the pool
        in "both". Returns stored flags."""
        held = self._held(keys)
        idx = [i for i, h in enumerate(held) if not h]
        ok = [True] * len(keys)
        if not idx:
            return ok
        sub = [keys[i] for i in idx]
        offs = np.asarray(offsets, np.int64).reshape(-1, per)[idx].reshape(-1)
        res, frames = self.remote.put_values(sub, src, offs, per, part_elems, dtype=self.dtype,
                                             frames=self.cache is not None)
        self._count_puts(res)
        if self.cache is None:
            for i, r in zip(idx, res):
                ok[i] = r.ok
            return ok
        coded = [j for j, f in enumerate(frames) if f is not None]
        flags, _ = self.cache.insert([sub[j] for j in coded], [x for j in coded for x in frames[j]], per)
        for i in idx:
            ok[i] = False
        for j, f in zip(coded, flags):
            ok[idx[j]] = f
        return ok

    def _get(self, keys, dst, offsets, per, part_elems, host_outs=None):
        """Host copies first (into ``host_outs``), then the pool for the rest
        (into ``dst`` at ``offsets``). Returns (loaded flags, the indices
        loaded from the pool)."""
        ok = self.cache.get(keys, host_outs, per) if self.cache is not None else [False] * len(keys)
        miss = [i for i, f in enumerate(ok) if not f]
        pooled = []
        if miss:
            offs = np.asarray(offsets, np.int64).reshape(-1, per)[miss].reshape(-1)
            res = self.remote.get_values([keys[i] for i in miss], dst, offs, per, part_elems,
                                         dtype=self.dtype)
            self._count_loads(res)
            for i, r in zip(miss, res):
                ok[i] = r.ok
                if r.ok:
                    pooled.append(i)
        return ok, pooled

    # -- default interface ---------------------------------------------------

    def exists(self, key):
        return self.batch_exists([key]) == 1

    def batch_exists(self, keys, extra_info=None):
        if not self._ready():
            return 0
        n = 0
        if self.cache is not None:
            while n < len(keys) and self.cache.touch(keys[n]):
                n += 1
        if n < len(keys) and self.remote is not None:
            try:
                for e in self.remote.exist_values(list(keys[n:])):
                    if not e:
                        break
                    n += 1
            except Exception:  # an unreachable pool ends the prefix
                pass
        return n

    def set(self, key, value=None, target_location=None, target_sizes=None):
        return self.batch_set([key], [value])

    def batch_set(self, keys, values=None, target_locations=None, target_sizes=None):
        if values is None or len(values) != len(keys):
            return False
        if not keys:
            return True
        self._ensure_cache(values[0].dtype)
        try:
            parts = [_bytes_of(v) for v in values]
            if self.remote is None:
                return all(self.cache.put(keys, parts))
            # The pool's batch call takes one source: the flat pages side by side.
            pb = parts[0].nbytes
            if any(p.nbytes != pb for p in parts):
                return False
            src = np.concatenate(parts)
            offs = np.arange(len(parts), dtype=np.int64) * pb
            return all(self._put(keys, src, offs, 1, pb // CompressedPageCache.itemsize(self.dtype)))
        except Exception:
            return False

    def get(self, key, target_location=None, target_sizes=None):
        return self.batch_get([key], [target_location])[0]

    def batch_get(self, keys, target_locations=None, target_sizes=None):
        if not self._ready() or target_locations is None or not keys:
            return [None] * len(keys)
        try:
            outs = [_bytes_of(t) for t in target_locations]
            if self.remote is None:
                ok = self.cache.get(keys, outs)
            else:
                pb = outs[0].nbytes
                if any(o.nbytes != pb for o in outs):
                    return [None] * len(keys)
                # Pool values decode into one buffer, then into the targets.
                tmp = np.empty(len(keys) * pb, np.uint8)
                offs = np.arange(len(keys), dtype=np.int64) * pb
                ok, pooled = self._get(keys, tmp, offs, 1,
                                       pb // CompressedPageCache.itemsize(self.dtype), outs)
                for i in pooled:
                    outs[i][...] = tmp[i * pb:(i + 1) * pb]
        except Exception:
            return [None] * len(keys)
        return [t if f else None for t, f in zip(target_locations, ok)]

    # -- interface_v1: straight from and into the host pool -------------------

    def _page_meta(self, keys, host_indices):
        """(parts, offsets in the pool's buffer or None, parts per page) of
        the pages for these keys, or None when the pool gives none or a
        count that does not match the keys."""
        pool = self.mem_pool_host
        try:
            ptrs, sizes = pool.get_page_buffer_meta(host_indices)
            pages = len(host_indices) // pool.page_size
            if pages == 0 or len(ptrs) % pages or len(ptrs) != len(keys) * (len(ptrs) // pages):
                return None
            per = len(ptrs) // pages
            if self._base is not None:
                addr, flat = self._base
                offs = np.asarray(ptrs, np.int64) - addr
                sz = np.asarray(sizes, np.int64)
                if (offs < 0).any() or (offs + sz > flat.size).any():
                    return None
                parts = None
                if self.cache is not None:
                    parts = [flat[o:o + n] for o, n in zip(offs.tolist(), sz.tolist())]
                return parts, offs, sz, per
            if self.remote is not None:
                return None   # the pool's batch call needs the host pool as one buffer
            parts = [np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(p))
                     for p, n in zip(ptrs, sizes)]
            return parts, None, None, per
        except Exception:
            return None

    def _batch_v1(self, keys, host_indices, put):
        """batch_set_v1 (``put``) and batch_get_v1: the host cache on the
        pages' parts, or the pool on their offsets in the host pool's buffer
        (one part size); any failure is False for every key."""
        if not self._ready() or not keys:
            return [False] * len(keys)
        meta = self._page_meta(keys, host_indices)
        if meta is None:
            return [False] * len(keys)
        parts, offs, sz, per = meta
        try:
            if self.remote is None:
                return (self.cache.put if put else self.cache.get)(keys, parts, per)
            if (sz != sz[0]).any():
                return [False] * len(keys)
            elems = int(sz[0]) // CompressedPageCache.itemsize(self.dtype)
            if put:
                return self._put(keys, self._base[1], offs, per, elems)
            return self._get(keys, self._base[1], offs, per, elems, parts)[0]
        except Exception:
            return [False] * len(keys)

    def batch_set_v1(self, keys, host_indices, extra_info=None):
        return self._batch_v1(keys, host_indices, put=True)

    def batch_get_v1(self, keys, host_indices, extra_info=None):
        return self._batch_v1(keys, host_indices, put=False)

    # -- housekeeping --------------------------------------------------------

    def clear(self):
        if self.cache is not None:
            self.cache.clear()

    def close(self):
        self.clear()
        if self.remote is not None:
            self.remote.close()
            self.remote = None

    def stats(self):
        out = {"store": self.store, "mode": self.mode, "capacity_bytes": self.capacity_bytes}
        c = self.cache
        if c is not None:
            out.update({"pages": len(c), "used_bytes": c.used_bytes, "stored": c.stored,
                        "evicted": c.evicted, "refused": c.refused, "corrupt": c.corrupt})
        out.update(self._remote_stats())
        return out
