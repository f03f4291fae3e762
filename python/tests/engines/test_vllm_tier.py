# SPDX-License-Identifier: Apache-2.0
"""SplitzipTier inside vLLM's real TieringOffloadingManager (scripts/engines_test.sh
runs it in a venv with the pinned vLLM; elsewhere it skips unless
SZ_ENGINES_REQUIRE=1, which makes a missing vLLM a failure)."""

import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest

if os.environ.get("SZ_ENGINES_REQUIRE") != "1":
    pytest.importorskip("vllm.v1.kv_offload.tiering.base")

sys.path.insert(0, str(Path(__file__).parent))
import kvdata  # noqa: E402
from vllm_harness import Engine, key, splitzip_tier  # noqa: E402

DATASETS = kvdata.available()
MODES = ("fast", "capacity")


@pytest.fixture(scope="module", params=DATASETS)
def base(request):
    # 16-token chunks of every layer's K and V (vLLM's default block size);
    # the bundled set's 10 KiB would be padded to the region's 4 KiB
    # alignment, so it takes 32-token chunks (20 KiB).
    bt = 16 if request.param == "smollm2" else 32
    return request.param, kvdata.pages(request.param, bt)


def test_factory_loads_tier_by_module_path(base):
    _, pages = base
    cb = pages.shape[1]
    eng = Engine(cb, 4, [splitzip_tier(8 * cb)])
    try:
        (tier,) = eng.tiers
        assert type(tier).__name__ == "SplitzipTier"
        assert type(tier).__module__ == "splitzip_kv.engines.vllm_tier"
        assert tier.block_size_bytes == cb
        assert tier.cache.dtype == "bf16"
    finally:
        eng.close()


def test_unknown_parameter_and_missing_budget_are_refused(base):
    _, pages = base
    cb = pages.shape[1]
    for bad in ({"capacity_bytes": 8 * cb, "compression": "yes"}, {}):
        cfg = dict({"type": "SplitzipTier", "module_path": "splitzip_kv.engines.vllm_tier"}, **bad)
        with pytest.raises(ValueError):
            Engine(cb, 4, [cfg])


@pytest.mark.parametrize("mode", MODES)
def test_store_evict_lookup_load_bit_exact(base, mode):
    """store -> cascade -> primary eviction -> lookup -> promotion -> load,
    through the manager; every page comes back bit for bit, and the tier
    holds more chunks than its budget holds raw."""
    _, pages = base
    cb = pages.shape[1]
    raw_budget_chunks = 12
    eng = Engine(cb, 4, [splitzip_tier(raw_budget_chunks * cb, mode)])
    try:
        tier = eng.tiers[0]
        n = 40
        data = {key(i): kvdata.tagged(pages, i) for i in range(n)}
        for i in range(0, n, 4):
            ks = [key(j) for j in range(i, i + 4)]
            eng.store(ks, data)
            eng.settle()
        assert tier.cache.evicted > 0, "the budget never filled"
        held = [k for k in data if k in tier.cache]
        assert len(held) > raw_budget_chunks, (len(held), raw_budget_chunks)
        assert tier.cache.used_bytes <= raw_budget_chunks * cb
        # The primary tier holds 4 chunks: the oldest held ones come from the tier.
        target = held[:4]
        got = eng.load(target)
        assert list(got) == target
        for k in target:
            assert np.array_equal(got[k], data[k])
        # A key evicted everywhere is a miss, not data.
        gone = [k for k in data if k not in tier.cache][0]
        assert eng.load([gone]) == {}
    finally:
        eng.close()


@pytest.mark.parametrize("mode", MODES)
def test_flipped_value_is_a_miss(base, mode):
    _, pages = base
    cb = pages.shape[1]
    eng = Engine(cb, 2, [splitzip_tier(64 * cb, mode)])
    try:
        tier = eng.tiers[0]
        data = {key(i): kvdata.tagged(pages, i) for i in range(8)}
        for i in range(0, 8, 2):
            eng.store([key(i), key(i + 1)], data)
            eng.settle()
        victim = key(0)
        f = bytearray(tier.cache.frames(victim)[0])
        f[len(f) // 2] ^= 0x10
        tier.cache.replace_frames(victim, [bytes(f)])
        assert eng.load([victim]) == {}          # promotion fails: recompute
        assert victim not in tier.cache and tier.cache.corrupt == 1
        got = eng.load([key(1)])                 # neighbours unaffected
        assert np.array_equal(got[key(1)], data[key(1)])
    finally:
        eng.close()


def test_chunk_larger_than_budget_fails_the_store_job(base):
    _, pages = base
    cb = pages.shape[1]
    eng = Engine(cb, 2, [splitzip_tier(cb // 4)])
    try:
        data = {key(0): kvdata.tagged(pages, 0)}
        eng.store([key(0)], data)
        eng.settle()
        tier = eng.tiers[0]
        assert len(tier.cache) == 0 and tier.cache.refused == 1
        got = eng.load([key(0)])                 # still served by the primary tier
        assert np.array_equal(got[key(0)], data[key(0)])
    finally:
        eng.close()


@pytest.mark.parametrize("mode", MODES)
def test_ten_thousand_ops_with_faults(base, mode):
    """>= 10,000 store/load operations through the manager with flipped
    values, a full budget and the tier shut down and replaced mid-run
    (a killed tier process: a new one starts empty). Every loaded page is
    compared with what was stored under its key: 0 wrong values."""
    name, pages = base
    cb = pages.shape[1]
    rng = random.Random(7 if mode == "fast" else 8)
    budget_chunks = 24
    eng = Engine(cb, 6, [splitzip_tier(budget_chunks * cb, mode)])
    data = {}
    ops = wrong = served = flipped = restarts = corrupt = 0
    # A key space a bit larger than what the tiers hold: hits and evictions both.
    universe = 48
    try:
        target_ops = 10_000
        while ops < target_ops:
            r = rng.random()
            tier = eng.tiers[0]
            if r < 0.45:
                start = rng.randrange(universe - 4)
                ks = [key(i) for i in range(start, start + rng.randint(1, 4))]
                for i, k in zip(range(start, start + 4), ks):
                    data.setdefault(k, kvdata.tagged(pages, i))
                eng.store(ks, data)
                eng.settle()
                ops += len(ks)
            elif r < 0.95:
                start = rng.randrange(universe - 4)
                ks = [key(i) for i in range(start, start + rng.randint(1, 4)) if key(i) in data]
                if not ks:
                    continue
                got = eng.load(ks)
                ops += len(ks)
                for k, v in got.items():
                    served += 1
                    if not np.array_equal(v, data[k]):
                        wrong += 1
            elif r < 0.995:
                held = [k for k in data if k in tier.cache]
                if held:
                    k = rng.choice(held)
                    f = bytearray(tier.cache.frames(k)[0])
                    f[rng.randrange(len(f))] ^= 1 << rng.randrange(8)
                    tier.cache.replace_frames(k, [bytes(f)])
                    flipped += 1
            else:
                # The engine dies with a cascade in flight and a new one starts
                # (real factory again) empty: what it held is now a miss.
                start = rng.randrange(universe - 4)
                ks = [key(i) for i in range(start, start + 4)]
                for i, k in zip(range(start, start + 4), ks):
                    data.setdefault(k, kvdata.tagged(pages, i))
                eng.store(ks, data)
                corrupt += eng.tiers[0].cache.corrupt
                eng.close()
                eng = Engine(cb, 6, [splitzip_tier(budget_chunks * cb, mode)])
                restarts += 1
        print(f"\n{name} {mode}: {ops} ops, {served} pages served, {flipped} values flipped, "
              f"{restarts} engine restarts, corrupt refused {corrupt + eng.tiers[0].cache.corrupt}, wrong {wrong}")
        assert ops >= 10_000
        assert served > 2_000
        assert flipped > 0
        assert wrong == 0
    finally:
        eng.close()
