# SPDX-License-Identifier: Apache-2.0
"""A compressing secondary tier for vLLM's TieringOffloadingSpec.

Enable it under the OffloadingConnector (docs/ENGINES.md)::

    --kv-transfer-config '{"kv_connector": "OffloadingConnector", "kv_role": "kv_both",
      "kv_connector_extra_config": {"spec_name": "TieringOffloadingSpec",
        "cpu_bytes_to_use": 8589934592,
        "secondary_tiers": [{"type": "SplitzipTier",
                             "module_path": "splitzip_kv.engines.vllm_tier",
                             "capacity_bytes": 34359738368, "mode": "capacity"}]}}'

The tier reads chunks from the primary (CPU) tier's rows and codes a job's
chunks in one batch call on its own thread. ``store`` says where the
compressed chunks live (splitzip_kv.engines._remote):

- ``"host"`` (default): this process's memory, evicting the least recently
  used when the compressed bytes would pass ``capacity_bytes``;
- ``"mooncake"``: a Mooncake Store pool (``mooncake``: {"master": ...}),
  one checksummed value per chunk, keyed by the block hash; shared by every
  engine on the pool, which does its own eviction;
- ``"both"``: the host cache in front of Mooncake, written from one encode.

A load decodes straight into the primary rows the manager allocated. A
value that does not decode to exactly its chunk (flipped, another key's,
lost with a store client) is a miss: the load job reports only the keys
that decoded (``successful_keys``) and the manager recomputes the rest.

Parameters (the tier's dict in ``secondary_tiers``):
  store           "host" (default), "mooncake" or "both"
  capacity_bytes  budget of compressed bytes in host memory (host, both)
  mooncake        OffloadConfig fields for the pool: master (required),
                  protocol, local_hostname, metadata_server, segment_bytes,
                  local_buffer_bytes, replicas, namespace (mooncake, both)
  model           key component in the pool (default: the model's name)
  mode            "fast" (default) or "capacity" (smaller frames, slower;
                  the default when tables are given)
  tables          capacity table set file(s) (docs/ENGINES.md "Table sets")
  dtype           KV dtype; default: the model's (OffloadingConfig.model.dtype)
  threads         codec threads per batch call (0: the backend's default)
  workers         background coding threads (default 1)
"""

import concurrent.futures as cf
import threading
import time
from typing import Any, ClassVar

import numpy as np
from vllm.v1.kv_offload.base import (
    LookupResult,
    Medium,
    ReqContext,
    RequestOffloadingContext,
)
from vllm.v1.kv_offload.tiering.base import JobResult, SecondaryTierManager, TransferJob

from . import _remote
from ._pages import CompressedPageCache, check_mode, splitzip_dtype


class SplitzipTier(_remote.RemoteCounters, SecondaryTierManager):
    """Host-memory tier of splitzip frames, capacity in compressed bytes."""

    medium: ClassVar[Medium] = Medium.CPU

    def __init__(self, offloading_spec, primary_kv_view, tier_type, backpressure_detector=None,
                 *, capacity_bytes: int = 0, mode: Any = None, dtype: Any = None,
                 threads: int = 0, workers: int = 1, store: str = "host",
                 mooncake: Any = None, model: Any = None, tables: Any = None, **unknown):
        super().__init__(offloading_spec=offloading_spec, primary_kv_view=primary_kv_view,
                         tier_type=tier_type, backpressure_detector=backpressure_detector)
        if unknown:
            raise ValueError(f"SplitzipTier: unknown parameters {sorted(unknown)}")
        _remote.check_store(store)
        if store != "mooncake" and not capacity_bytes:
            raise ValueError("SplitzipTier needs capacity_bytes (the compressed-byte budget in host memory)")
        if store == "mooncake" and capacity_bytes:
            raise ValueError("SplitzipTier: capacity_bytes is the host budget; with store='mooncake' "
                             "the pool's segments are the budget")
        if store == "host" and mooncake is not None:
            raise ValueError("SplitzipTier: mooncake options need store='mooncake' or 'both'")
        self.tables, mode = _remote.tier_tables(tables, mode)
        check_mode(mode)
        if dtype is None:
            dtype = offloading_spec.config.model.dtype
        self.store = store
        self.mode = mode
        self.dtype = splitzip_dtype(dtype)
        # (num_chunks, row bytes), int8 in vLLM 0.34: the codec takes bytes.
        self._rows: Any = np.asarray(primary_kv_view).view(np.uint8).reshape(-1, self.block_size_bytes)
        self._elems = self.block_size_bytes // CompressedPageCache.itemsize(self.dtype)
        self.cache = CompressedPageCache(capacity_bytes, dtype, mode=mode, threads=threads,
                                         tables=self.tables) \
            if store != "mooncake" else None
        self.remote = None
        if store != "host":
            cfg = offloading_spec.config
            if model is None:
                model = f"{cfg.model.name}-r{cfg.parallel.rank}"
            self.remote = _remote.open_store(mooncake, model, mode, threads, self.tables)
        self._pool = cf.ThreadPoolExecutor(max(1, int(workers)), thread_name_prefix="splitzip-tier")
        self._lock = threading.Lock()
        self._finished: list = []
        self._inflight: dict = {}  # job id -> future
        self._storing: dict = {}   # key -> number of store jobs writing it
        self._closed = False
        self._init_remote_counters()

    # -- lookups -------------------------------------------------------------

    def lookup(self, key, req_context: ReqContext) -> LookupResult:
        if self.cache is not None and self.cache.touch(key):
            return LookupResult.HIT
        with self._lock:
            if key in self._storing:
                return LookupResult.RETRY
        if self.remote is not None:
            try:
                if self.remote.exist_values([key.hex()])[0]:
                    return LookupResult.HIT
            except Exception:  # an unreachable pool is a miss
                pass
        return LookupResult.MISS

    def on_new_request(self, req_context: ReqContext) -> RequestOffloadingContext:
        return RequestOffloadingContext()

    # -- jobs ----------------------------------------------------------------

    def _submit(self, job, fn):
        with self._lock:
            if self._closed:
                self._finished.append(JobResult(job_id=job.job_id, success=False))
                return
            self._inflight[job.job_id] = self._pool.submit(fn, job)

    def submit_store(self, job_metadata: TransferJob) -> None:
        keys = list(job_metadata.keys)
        if len(keys) != len(job_metadata.chunk_ids):
            raise ValueError(f"{len(keys)} keys but {len(job_metadata.chunk_ids)} chunk ids")
        with self._lock:
            for k in keys:
                self._storing[k] = self._storing.get(k, 0) + 1
        self._submit(job_metadata, self._store)

    def submit_load(self, job_metadata: TransferJob) -> None:
        if len(job_metadata.keys) != len(job_metadata.chunk_ids):
            raise ValueError(f"{len(job_metadata.keys)} keys but "
                             f"{len(job_metadata.chunk_ids)} chunk ids")
        self._submit(job_metadata, self._load)

    def _done(self, result, keys=()):
        with self._lock:
            for k in keys:
                n = self._storing.get(k, 0) - 1
                if n > 0:
                    self._storing[k] = n
                else:
                    self._storing.pop(k, None)
            self._inflight.pop(result.job_id, None)
            self._finished.append(result)

    def _store(self, job):
        keys = list(job.keys)
        t0 = time.perf_counter()
        ok, nbytes = False, 0
        try:
            ok, nbytes = self._store_keys(keys, job.chunk_ids)
        except Exception:  # the job fails; the manager keeps the primary copy
            ok = False
        self._done(JobResult(job_id=job.job_id, success=ok,
                             transfer_time=time.perf_counter() - t0, transfer_bytes=nbytes),
                   keys)

    def _store_keys(self, keys, chunk_ids):
        """Codes and keeps the chunks; returns (all kept, compressed bytes)."""
        cache, rows = self.cache, self._rows
        if cache is not None:
            missing = cache.missing(keys)
            if len(missing) < len(keys):
                held = set(keys).difference(missing)
                todo = [(k, int(c)) for k, c in zip(keys, chunk_ids) if k not in held]
            else:
                todo = list(zip(keys, np.asarray(chunk_ids).tolist()))
        else:
            todo = list(zip(keys, np.asarray(chunk_ids).tolist()))
        if not todo:
            return True, 0
        tk = [k for k, _ in todo]
        if self.remote is None:
            frames = cache.encode([rows[c] for _, c in todo])
            flags, _ = cache.insert(tk, frames)
            return all(flags), sum(len(f) for f, s in zip(frames, flags) if s)
        offs = np.fromiter((c for _, c in todo), np.int64, len(todo)) * self.block_size_bytes
        res, frames = self.remote.put_values([k.hex() for k in tk], rows, offs, 1, self._elems,
                                             dtype=self.dtype, frames=cache is not None)
        good = self._count_puts(res)
        nbytes = sum(r.stored_bytes for r in res if r.ok)
        if cache is None:
            return good == len(res), nbytes
        # Both: the host cache keeps the frames coded for the pool; the job
        # succeeds when the host holds every chunk (the pool copy is extra).
        coded = [i for i, f in enumerate(frames) if f is not None]
        flags, _ = cache.insert([tk[i] for i in coded], [frames[i][0] for i in coded])
        return len(coded) == len(tk) and all(flags), nbytes

    def _load(self, job):
        keys = list(job.keys)
        t0 = time.perf_counter()
        try:
            flags = self._load_keys(keys, job.chunk_ids)
        except Exception:
            flags = [False] * len(keys)
        good = [k for k, f in zip(keys, flags) if f]
        ok = len(good) == len(keys)
        self._done(JobResult(job_id=job.job_id, success=ok,
                             successful_keys=None if ok else good,
                             transfer_time=time.perf_counter() - t0,
                             transfer_bytes=len(good) * self.block_size_bytes))

    def _load_keys(self, keys, chunk_ids):
        rows = self._rows
        ids = np.asarray(chunk_ids).tolist()
        if self.cache is not None:
            flags = self.cache.get(keys, [rows[c] for c in ids])
            if self.remote is None or all(flags):
                return flags
        else:
            flags = [False] * len(keys)
        miss = [i for i, f in enumerate(flags) if not f]
        offs = np.asarray([ids[i] for i in miss], np.int64) * self.block_size_bytes
        res = self.remote.get_values([keys[i].hex() for i in miss], rows, offs, 1, self._elems,
                                     dtype=self.dtype)
        self._count_loads(res)
        for i, r in zip(miss, res):
            flags[i] = r.ok
        return flags

    def get_finished_jobs(self):
        with self._lock:
            out, self._finished = self._finished, []
        return out

    def has_pending_work(self) -> bool:
        with self._lock:
            return bool(self._inflight) or bool(self._finished)

    def drain_jobs(self) -> None:
        while True:
            with self._lock:
                futs = list(self._inflight.values())
            if not futs:
                return
            cf.wait(futs)

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
        self.drain_jobs()
        self._pool.shutdown(wait=True)
        # Drop the view so the primary tier can unmap its shared region.
        self._rows = None
        if self.remote is not None:
            self.remote.close()

    # -- reports -------------------------------------------------------------

    def get_num_chunks(self) -> int:
        return len(self.cache) if self.cache is not None else 0

    def config_info(self):
        return {}

    def stats(self) -> dict:
        out = {"store": self.store, "mode": self.mode, "chunk_bytes": self.block_size_bytes}
        c = self.cache
        if c is not None:
            out.update({"chunks": len(c), "used_bytes": c.used_bytes,
                        "capacity_bytes": c.capacity_bytes, "stored": c.stored,
                        "evicted": c.evicted, "refused": c.refused, "corrupt": c.corrupt})
        out.update(self._remote_stats())
        return out
