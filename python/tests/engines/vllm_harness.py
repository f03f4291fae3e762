# SPDX-License-Identifier: Apache-2.0
"""Drives vLLM's real offloading objects the way its scheduler does.

Real: OffloadingSpecFactory -> TieringOffloadingSpec -> get_manager() (the
TieringOffloadingManager, its CPU primary tier in a SharedOffloadRegion,
LRU eviction, cascade and promotion jobs) and SecondaryTierFactory loading
the tier by module path. Faked: only the worker's GPU<->CPU copy, which
here writes (or reads) the page bytes straight into the primary tier's
rows, as the worker's copy kernel would.
"""

import uuid

import numpy as np
from vllm.v1.kv_offload.base import LookupResult, ReqContext, ScheduleEndContext
from vllm.v1.kv_offload.config import (
    OffloadingCacheConfig,
    OffloadingConfig,
    OffloadingGroupConfig,
    OffloadingModelConfig,
    OffloadingParallelConfig,
)
from vllm.v1.kv_offload.factory import OffloadingSpecFactory

TIER_MODULE = "splitzip_kv.engines.vllm_tier"


def offloading_config(chunk_bytes, cpu_bytes, secondary_tiers, *, tokens_per_block=16,
                      dtype="bfloat16"):
    extra = {"spec_name": "TieringOffloadingSpec", "cpu_bytes_to_use": int(cpu_bytes),
             "eviction_policy": "lru", "secondary_tiers": secondary_tiers}
    return OffloadingConfig(
        groups=(OffloadingGroupConfig(tokens_per_block=tokens_per_block,
                                      layer_names=("model.layers.0.self_attn",), group_id=0),),
        worker_kv_bytes_per_block=int(chunk_bytes),
        enable_kv_cache_events=False,
        extra_config=extra,
        engine_id=f"splitzip-test-{uuid.uuid4().hex[:12]}",
        model=OffloadingModelConfig(name="SmolLM2-135M", dtype=dtype),
        cache=OffloadingCacheConfig(tokens_per_hash=tokens_per_block, blocks_per_chunk=1),
        parallel=OffloadingParallelConfig(rank=0, world_size=1, tp_size=1, pp_size=1,
                                          pcp_size=1, dcp_size=1, data_parallel_index=0,
                                          data_parallel_size=1, data_parallel_rank_local=None,
                                          is_parallelism_agnostic=False))


def splitzip_tier(capacity_bytes, mode="fast", **kw):
    return dict({"type": "SplitzipTier", "module_path": TIER_MODULE,
                 "capacity_bytes": int(capacity_bytes), "mode": mode}, **kw)


def key(i):
    """An OffloadKey as vLLM makes them (block hash + group index)."""
    from vllm.v1.kv_offload.base import make_offload_key
    return make_offload_key(int(i).to_bytes(16, "big"), 0)


class Engine:
    """One TieringOffloadingManager with the tiers of ``secondary_tiers``."""

    def __init__(self, chunk_bytes, primary_chunks, secondary_tiers, **kw):
        self.spec = OffloadingSpecFactory.create_spec(
            offloading_config(chunk_bytes, primary_chunks * chunk_bytes, secondary_tiers, **kw))
        self.mgr = self.spec.get_manager()
        self.tiers = self.mgr.secondary_tiers
        self.rows = np.asarray(self.mgr.primary_tier.get_kv_memoryview()).view(np.uint8)
        self.chunk_bytes = chunk_bytes
        self._req = 0

    def close(self):
        self.rows = None
        try:
            self.mgr.shutdown()
        finally:  # the shared region's file in /dev/shm goes even if a tier's shutdown fails
            if self.spec._scheduler_mmap is not None:
                self.spec._scheduler_mmap.cleanup()

    def _ctx(self):
        self._req += 1
        ctx = ReqContext(req_id=f"req-{self._req}")
        with self.mgr.lock:
            self.mgr.on_new_request(ctx)
        return ctx

    def step(self):
        with self.mgr.lock:
            self.mgr.on_schedule_end(ScheduleEndContext((), ()))

    def settle(self):
        """Waits for every tier job and lets the manager take the results."""
        for t in self.tiers:
            t.drain_jobs()
        self.step()

    def store(self, keys, pages):
        """GPU -> primary (faked copy) -> cascade to the secondary tiers.
        Returns the keys the primary tier took."""
        ctx = self._ctx()
        with self.mgr.lock:
            out = self.mgr.prepare_store(keys, ctx)
        took = []
        if out is not None and out.keys_to_store:
            for k, cid in zip(out.keys_to_store, out.store_spec.chunk_ids):
                self.rows[int(cid)] = pages[k]
            took = list(out.keys_to_store)
            with self.mgr.lock:
                self.mgr.complete_store(took, ctx)
        with self.mgr.lock:
            self.mgr.on_request_finished(ctx)
        return took

    def load(self, keys, rounds=20):
        """The longest prefix of ``keys`` the manager serves, promoting from
        the secondary tiers as needed; returns {key: page bytes} read from the
        primary rows (the faked CPU -> GPU copy)."""
        ctx = self._ctx()
        got = {}
        try:
            for _ in range(rounds):
                # As the scheduler does: in order, up to the first non-hit (a
                # lookup past it could start a promotion that evicts a hit).
                hit, res = 0, LookupResult.MISS
                with self.mgr.lock:
                    while hit < len(keys):
                        res = self.mgr.lookup(keys[hit], ctx)
                        if res is not LookupResult.HIT:
                            break
                        hit += 1
                if hit == len(keys) or res is LookupResult.MISS:
                    break
                self.step()      # flushes the promotions lookup() queued
                self.settle()    # their loads finish; the manager completes them
            if hit:
                with self.mgr.lock:
                    spec = self.mgr.prepare_load(keys[:hit], ctx)
                for k, cid in zip(keys[:hit], spec.chunk_ids):
                    got[k] = self.rows[int(cid)].copy()
                with self.mgr.lock:
                    self.mgr.complete_load(keys[:hit], ctx)
        finally:
            with self.mgr.lock:
                self.mgr.on_request_finished(ctx)
        return got
