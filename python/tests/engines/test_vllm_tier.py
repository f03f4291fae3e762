# SPDX-License-Identifier: Apache-2.0
"""SplitzipTier inside vLLM's real TieringOffloadingManager (scripts/engines_test.sh
runs it in a venv with the pinned vLLM; elsewhere it skips unless
SZ_ENGINES_REQUIRE=1, which makes a missing vLLM a failure)."""

import collections
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


# -- Mooncake Store behind the tier (store="mooncake" and "both") -------------

from mooncake_cluster import cluster_fixture  # noqa: E402

mooncake = cluster_fixture(50761)
STORES = ("mooncake", "both")


def pool_tier(cluster, store, mode="fast", capacity_bytes=0, **kw):
    opts = {"master": cluster.master, "namespace": f"vt{random.getrandbits(48):012x}"}
    return splitzip_tier(capacity_bytes, mode, store=store, mooncake=opts, **kw)


def flip_in_pool(tier, k, rng=None):
    """Flips one bit of the value of ``k`` in the pool (head object)."""
    rng = rng or random.Random(0)
    vk = tier.remote.value_keys([k.hex()])[0]
    val = bytearray(tier.remote.client.get(vk))
    if not val:
        return False
    val[rng.randrange(len(val))] ^= 1 << rng.randrange(8)
    return tier.remote.client.upsert(vk, bytes(val)) == 0


def close_emptying_pool(eng):
    """Closes the engine after removing everything from the pool (what a
    test leaves would fill the pool and get the next test's values evicted)."""
    try:
        eng.tiers[0].remote.client.remove_all(True)
    finally:
        eng.close()


def test_pool_options_are_checked(base, mooncake):
    _, pages = base
    cb = pages.shape[1]
    bad = [dict(splitzip_tier(0, store="mooncake")),                       # no master
           pool_tier(mooncake, "mooncake", capacity_bytes=8 * cb),          # host budget
           pool_tier(mooncake, "both"),                                     # no host budget
           dict(pool_tier(mooncake, "mooncake"), store="disk"),
           dict(splitzip_tier(8 * cb), mooncake={"master": mooncake.master}),
           dict(pool_tier(mooncake, "mooncake"), mooncake={"master": mooncake.master, "codec": "raw"})]
    for cfg in bad:
        with pytest.raises(ValueError):
            Engine(cb, 4, [cfg])


@pytest.mark.parametrize("store", STORES)
@pytest.mark.parametrize("mode", MODES)
def test_pool_store_evict_lookup_load_bit_exact(base, mooncake, store, mode):
    """store -> cascade into the pool -> primary eviction -> lookup (the
    pool) -> promotion -> load, bit for bit. With "both", the host cache
    holds a budget's worth and the pool the rest."""
    _, pages = base
    cb = pages.shape[1]
    host = 12 * cb if store == "both" else 0
    eng = Engine(cb, 4, [pool_tier(mooncake, store, mode, host)])
    try:
        tier = eng.tiers[0]
        n = 32
        data = {key(i): kvdata.tagged(pages, i) for i in range(n)}
        for i in range(0, n, 4):
            eng.store([key(j) for j in range(i, i + 4)], data)
            eng.settle()
        assert tier.remote_stored == n and tier.remote_failed == 0
        assert tier.remote.stored_bytes_put < 0.8 * n * cb
        if store == "both":
            assert tier.cache.evicted > 0 and len(tier.cache) < n
        # The oldest chunks: gone from the primary (and from the host cache).
        for i in range(0, 12, 4):
            ks = [key(j) for j in range(i, i + 4)]
            got = eng.load(ks)
            assert list(got) == ks
            for k in ks:
                assert np.array_equal(got[k], data[k])
        assert tier.remote_loaded >= 12
        assert eng.load([key(10_000)]) == {}      # never stored: a miss
    finally:
        close_emptying_pool(eng)


@pytest.mark.parametrize("store", STORES)
def test_pool_flipped_value_is_a_miss_and_dropped(base, mooncake, store):
    _, pages = base
    cb = pages.shape[1]
    eng = Engine(cb, 2, [pool_tier(mooncake, store, "capacity", 64 * cb if store == "both" else 0)])
    try:
        tier = eng.tiers[0]
        data = {key(i): kvdata.tagged(pages, i) for i in range(8)}
        for i in range(0, 8, 2):
            eng.store([key(i), key(i + 1)], data)
            eng.settle()
        victim = key(0)
        if tier.cache is not None:
            tier.cache.remove(victim)             # only the pool has it
        assert flip_in_pool(tier, victim)
        assert eng.load([victim]) == {}           # refused: recompute
        assert tier.remote_corrupt == 1
        assert tier.remote.exist_values([victim.hex()]) == [False]   # dropped
        got = eng.load([key(1)])
        assert np.array_equal(got[key(1)], data[key(1)])
        # Stored again, it is served again.
        eng.store([victim], data)
        eng.settle()
        assert np.array_equal(eng.load([victim])[victim], data[victim])
    finally:
        close_emptying_pool(eng)


@pytest.mark.parametrize("store", STORES)
def test_pool_ten_thousand_ops_with_faults(base, mooncake, store):
    """>= 10,000 store/load operations through the manager with the pages in
    Mooncake: values flipped in the pool, a store client SIGKILLed (its
    values vanish) and started again, the engine restarted (the new one
    finds the pool's values), and with "both" a full host budget. Every
    loaded page is compared with what was stored under its key."""
    name, pages = base
    cb = pages.shape[1]
    rng = random.Random(21)
    host = 24 * cb if store == "both" else 0
    tier_cfg = pool_tier(mooncake, store, "fast", host)
    eng = Engine(cb, 6, [tier_cfg])
    data = {}
    n = collections.Counter()
    universe = 64
    killed = False
    try:
        while n["ops"] < 10_000:
            r = rng.random()
            tier = eng.tiers[0]
            if not killed and n["ops"] > 3_000:
                mooncake("kill-server", "1")
                killed = True
                n["kills"] += 1
            elif killed and n["ops"] > 6_000 and n["kills"] == 1:
                mooncake("start-server", "1")
                n["kills"] += 1
            if r < 0.45:
                start = rng.randrange(universe - 4)
                ks = [key(i) for i in range(start, start + rng.randint(1, 4))]
                for i, k in zip(range(start, start + 4), ks):
                    data.setdefault(k, kvdata.tagged(pages, i))
                eng.store(ks, data)
                eng.settle()
                n["ops"] += len(ks)
            elif r < 0.95:
                start = rng.randrange(universe - 4)
                ks = [key(i) for i in range(start, start + rng.randint(1, 4)) if key(i) in data]
                if not ks:
                    continue
                got = eng.load(ks)
                n["ops"] += len(ks)
                for k, v in got.items():
                    n["served"] += 1
                    n["wrong"] += not np.array_equal(v, data[k])
            elif r < 0.995:
                k = rng.choice(list(data))
                if tier.cache is not None:
                    tier.cache.remove(k)
                n["flipped"] += flip_in_pool(tier, k, rng)
            elif n["ops"] > 2_500 * (n["restarts"] + 1):
                # A few restarts (a pool client takes ~1 s to set up).
                for f in ("remote_loaded", "remote_missed", "remote_corrupt"):
                    n[f] += getattr(tier, f)
                eng.close()
                eng = Engine(cb, 6, [tier_cfg])   # same pool, same namespace
                n["restarts"] += 1
        for f in ("remote_loaded", "remote_missed", "remote_corrupt"):
            n[f] += getattr(eng.tiers[0], f)
        print(f"\n{name} {store}: {dict(n)}")
        assert n["ops"] >= 10_000 and n["served"] > 2_000
        assert n["flipped"] > 0 and n["restarts"] > 0 and n["kills"] == 2
        assert n["remote_loaded"] > 500 and n["remote_corrupt"] > 0
        assert n["wrong"] == 0
    finally:
        close_emptying_pool(eng)
        if killed and n["kills"] == 1:
            mooncake("start-server", "1")
