# SPDX-License-Identifier: Apache-2.0
"""splitzip behind the serving engines' own offload extension points.

- ``splitzip_kv.engines.vllm_tier.SplitzipTier``: a secondary tier of vLLM's
  ``TieringOffloadingSpec`` (loaded by module path from
  ``kv_connector_extra_config``).
- ``splitzip_kv.engines.sglang_hicache.SplitzipHiCacheStorage``: an SGLang
  HiCache storage backend (``--hicache-storage-backend dynamic``).

Both keep pages compressed in host memory with the capacity counted in
compressed bytes (``CompressedPageCache``). See docs/ENGINES.md. The engine
modules import their engine; this package does not.
"""

from ._pages import CompressedPageCache, splitzip_dtype

__all__ = ["CompressedPageCache", "splitzip_dtype"]
