# SPDX-License-Identifier: Apache-2.0
"""A compressing secondary tier for vLLM's TieringOffloadingSpec.

Enable it under the OffloadingConnector (docs/ENGINES.md)::

    --kv-transfer-config '{"kv_connector": "OffloadingConnector", "kv_role": "kv_both",
      "kv_connector_extra_config": {"spec_name": "TieringOffloadingSpec",
        "cpu_bytes_to_use": 8589934592,
        "secondary_tiers": [{"type": "SplitzipTier",
                             "module_path": "splitzip_kv.engines.vllm_tier",
                             "capacity_bytes": 34359738368, "mode": "capacity"}]}}'

The tier reads chunks from the primary (CPU) tier's rows, codes a job's
chunks in one batch call on its own thread and holds the frames in host
memory, evicting the least recently used when the compressed bytes would
pass ``capacity_bytes``. A load decodes straight into the primary rows the
manager allocated. A value that does not decode to exactly its chunk is a
miss: the load job reports only the keys that decoded (``successful_keys``)
and the manager recomputes the rest.

Parameters (the tier's dict in ``secondary_tiers``):
  capacity_bytes  budget of compressed bytes (required)
  mode            "fast" (default) or "capacity" (smaller frames, slower)
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

from ._pages import CompressedPageCache, check_mode


class SplitzipTier(SecondaryTierManager):
    """Host-memory tier of splitzip frames, capacity in compressed bytes."""

    medium: ClassVar[Medium] = Medium.CPU

    def __init__(self, offloading_spec, primary_kv_view, tier_type, backpressure_detector=None,
                 *, capacity_bytes: int = 0, mode: str = "fast", dtype: Any = None,
                 threads: int = 0, workers: int = 1, **unknown):
        super().__init__(offloading_spec=offloading_spec, primary_kv_view=primary_kv_view,
                         tier_type=tier_type, backpressure_detector=backpressure_detector)
        if unknown:
            raise ValueError(f"SplitzipTier: unknown parameters {sorted(unknown)}")
        if not capacity_bytes:
            raise ValueError("SplitzipTier needs capacity_bytes (the compressed-byte budget)")
        check_mode(mode)
        if dtype is None:
            dtype = offloading_spec.config.model.dtype
        # (num_chunks, row bytes), int8 in vLLM 0.34: the codec takes bytes.
        self._rows: Any = np.asarray(primary_kv_view).view(np.uint8).reshape(-1, self.block_size_bytes)
        self.cache = CompressedPageCache(capacity_bytes, dtype, mode=mode, threads=threads)
        self._pool = cf.ThreadPoolExecutor(max(1, int(workers)), thread_name_prefix="splitzip-tier")
        self._lock = threading.Lock()
        self._finished: list = []
        self._inflight: dict = {}  # job id -> future
        self._storing: dict = {}   # key -> number of store jobs writing it
        self._closed = False

    # -- lookups -------------------------------------------------------------

    def lookup(self, key, req_context: ReqContext) -> LookupResult:
        if self.cache.touch(key):
            return LookupResult.HIT
        with self._lock:
            if key in self._storing:
                return LookupResult.RETRY
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
            rows = self._rows
            todo = [(k, int(c)) for k, c in zip(keys, job.chunk_ids) if k not in self.cache]
            if todo:
                frames = self.cache.encode([rows[c] for _, c in todo])
                flags, _ = self.cache.insert([k for k, _ in todo], frames)
                ok = all(flags)
                nbytes = sum(len(f) for f, s in zip(frames, flags) if s)
            else:
                ok = True
        except Exception:  # the job fails; the manager keeps the primary copy
            ok = False
        self._done(JobResult(job_id=job.job_id, success=ok,
                             transfer_time=time.perf_counter() - t0, transfer_bytes=nbytes),
                   keys)

    def _load(self, job):
        keys = list(job.keys)
        t0 = time.perf_counter()
        try:
            rows = self._rows
            flags = self.cache.get(keys, [rows[int(c)] for c in job.chunk_ids])
        except Exception:
            flags = [False] * len(keys)
        good = [k for k, f in zip(keys, flags) if f]
        ok = len(good) == len(keys)
        self._done(JobResult(job_id=job.job_id, success=ok,
                             successful_keys=None if ok else good,
                             transfer_time=time.perf_counter() - t0,
                             transfer_bytes=len(good) * self.block_size_bytes))

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

    # -- reports -------------------------------------------------------------

    def get_num_chunks(self) -> int:
        return len(self.cache)

    def config_info(self):
        return {}

    def stats(self) -> dict:
        c = self.cache
        return {"chunks": len(c), "used_bytes": c.used_bytes, "capacity_bytes": c.capacity_bytes,
                "chunk_bytes": self.block_size_bytes, "mode": c.mode, "stored": c.stored,
                "evicted": c.evicted, "refused": c.refused, "corrupt": c.corrupt}
