# SPDX-License-Identifier: Apache-2.0
"""SGLang's own objects around a HiCache storage backend.

Real: StorageBackendFactory ("dynamic" loads the class by module path,
"file" is SGLang's raw L3), HiCacheStorageConfig, the host pool's page
methods (MHATokenToKVPoolHost.get_data_page / set_from_flat_data_page /
get_dummy_flat_data_page / get_page_buffer_meta) and HiCacheController's
page functions (_generic_page_set/_generic_page_get, the default path;
_page_set_zero_copy/_page_get_zero_copy, interface_v1), which pick the
pages and call the backend as the controller's threads do.

Faked: the pool's constructor, which needs the device KV pool's pointer
tables; here the pool object gets its host kv_buffer in the real layout
directly. The device->host copy is writing pages with the pool's own
set_from_flat_data_page.
"""

import types

import torch
from sglang.srt.managers.cache_controller import HiCacheController
from sglang.srt.mem_cache.hicache_storage import HiCacheStorageConfig
from sglang.srt.mem_cache.pool_host.mha import MHATokenToKVPoolHost
from sglang.srt.mem_cache.storage import StorageBackendFactory

BACKEND_MODULE = "splitzip_kv.engines.sglang_hicache"

# torch's intra-op threads turn the pool's small strided page copies into
# ~10 ms each on a loaded 2-core machine (0.03 ms on one thread).
torch.set_num_threads(1)


def host_pool(layout, layers, heads, dim, page_size, pages, dtype=torch.bfloat16):
    pool = object.__new__(MHATokenToKVPoolHost)
    pool.layout, pool.page_size, pool.layer_num = layout, page_size, layers
    pool.head_num, pool.head_dim, pool.dtype = heads, dim, dtype
    pool.size, pool.page_num = pages * page_size, pages
    pool.device, pool.pin_memory = "cpu", False
    dims = {"layer_first": (2, layers, pool.size, heads, dim),
            "page_first": (2, pool.size, layers, heads, dim),
            "page_first_direct": (2, pages, layers, page_size, heads, dim)}[layout]
    pool.kv_buffer = torch.zeros(dims, dtype=dtype)
    return pool


def storage_config(extra, layout="page_first"):
    return HiCacheStorageConfig(tp_rank=0, tp_size=1, pp_rank=0, pp_size=1, attn_cp_rank=0,
                                attn_cp_size=1, is_mla_model=False, enable_storage_metrics=False,
                                is_page_first_layout=layout != "layer_first",
                                model_name="SmolLM2-135M", extra_config=extra)


def splitzip_extra(capacity_bytes, mode="fast", interface_v1=0, **kw):
    return dict({"backend_name": "splitzip", "module_path": BACKEND_MODULE,
                 "class_name": "SplitzipHiCacheStorage", "interface_v1": interface_v1,
                 "capacity_bytes": int(capacity_bytes), "mode": mode}, **kw)


class Controller:
    """The controller's storage side: a backend made by the real factory
    on ``pool``, driven through HiCacheController's page functions."""

    def __init__(self, backend_name, extra, pool):
        cfg = storage_config(extra, pool.layout)
        self.backend = StorageBackendFactory.create_backend(backend_name, cfg, pool)
        self.backend.register_mem_pool_host(pool)
        if hasattr(self.backend, "on_host_pools_registered"):
            self.backend.on_host_pools_registered()
        self.pool = pool
        self.page_size = pool.page_size
        self.storage_backend = self.backend
        self.storage_host_pool = pool
        self.mem_pool_host = pool
        v1 = backend_name == "dynamic" and bool(extra.get("interface_v1", 0))
        self._set = HiCacheController._page_set_zero_copy if v1 else \
            HiCacheController._generic_page_set
        self._get = HiCacheController._page_get_zero_copy if v1 else \
            HiCacheController._generic_page_get

    def indices(self, slots):
        """host_indices (token slots) of the pool pages ``slots``."""
        ps = self.page_size
        return torch.cat([torch.arange(s * ps, (s + 1) * ps, dtype=torch.int64) for s in slots])

    def write_pages(self, slots, pages):
        """The faked device->host copy: page bytes into the pool."""
        for s, p in zip(slots, pages):
            flat = torch.from_numpy(p).view(self.pool.dtype)
            self.pool.set_from_flat_data_page(s * self.page_size, flat)

    def read_page(self, slot):
        return self.pool.get_data_page(slot * self.page_size, flat=True).view(torch.uint8).numpy()

    def backup(self, keys, slots, host_indices=None):
        return self._set(self, keys, self.indices(slots) if host_indices is None else host_indices)

    def prefetch(self, keys, slots, host_indices=None):
        """Pages fetched into the pool, as a prefix count."""
        op = types.SimpleNamespace(request_id="prefetch", is_terminated=lambda: False)
        return self._get(self, op, keys, self.indices(slots) if host_indices is None else host_indices)

    def exists_prefix(self, keys):
        return self.backend.batch_exists(keys)
