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


def store_in_pairs(eng, pages, n=8):
    """Chunks 0..n-1 (tagged by index) stored two at a time, each pair let
    through the cascade; returns them by key."""
    data = {key(i): kvdata.tagged(pages, i) for i in range(n)}
    for i in range(0, n, 2):
        eng.store([key(i), key(i + 1)], data)
        eng.settle()
    return data


def random_store(eng, rng, n, data, pages, universe):
    """Stores 1-4 consecutive keys out of ``universe`` (each page tagged by
    its key's index; ``data`` keeps what was stored) and lets the cascade run."""
    start = rng.randrange(universe - 4)
    ks = [key(i) for i in range(start, start + rng.randint(1, 4))]
    for i, k in zip(range(start, start + 4), ks):
        data.setdefault(k, kvdata.tagged(pages, i))
    eng.store(ks, data)
    eng.settle()
    n["ops"] += len(ks)


def random_load(eng, rng, n, data, universe):
    """Loads 1-4 consecutive stored keys; counts what was served and how
    much of it differs from what was stored."""
    start = rng.randrange(universe - 4)
    ks = [key(i) for i in range(start, start + rng.randint(1, 4)) if key(i) in data]
    if not ks:
        return
    got = eng.load(ks)
    n["ops"] += len(ks)
    for k, v in got.items():
        n["served"] += 1
        n["wrong"] += not np.array_equal(v, data[k])


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
        data = store_in_pairs(eng, pages)
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
    n = collections.Counter()
    # A key space a bit larger than what the tiers hold: hits and evictions both.
    universe = 48
    try:
        while n["ops"] < 10_000:
            r = rng.random()
            tier = eng.tiers[0]
            if r < 0.45:
                random_store(eng, rng, n, data, pages, universe)
            elif r < 0.95:
                random_load(eng, rng, n, data, universe)
            elif r < 0.995:
                held = [k for k in data if k in tier.cache]
                if held:
                    k = rng.choice(held)
                    f = bytearray(tier.cache.frames(k)[0])
                    f[rng.randrange(len(f))] ^= 1 << rng.randrange(8)
                    tier.cache.replace_frames(k, [bytes(f)])
                    n["flipped"] += 1
            else:
                # The engine dies with a cascade in flight and a new one starts
                # (real factory again) empty: what it held is now a miss.
                start = rng.randrange(universe - 4)
                ks = [key(i) for i in range(start, start + 4)]
                for i, k in zip(range(start, start + 4), ks):
                    data.setdefault(k, kvdata.tagged(pages, i))
                eng.store(ks, data)
                n["corrupt"] += eng.tiers[0].cache.corrupt
                eng.close()
                eng = Engine(cb, 6, [splitzip_tier(budget_chunks * cb, mode)])
                n["restarts"] += 1
        n["corrupt"] += eng.tiers[0].cache.corrupt
        print(f"\n{name} {mode}: {n['ops']} ops, {n['served']} pages served, {n['flipped']} values "
              f"flipped, {n['restarts']} engine restarts, corrupt refused {n['corrupt']}, wrong {n['wrong']}")
        assert n["ops"] >= 10_000
        assert n["served"] > 2_000
        assert n["flipped"] > 0
        assert n["wrong"] == 0
    finally:
        eng.close()


# -- Mooncake Store behind the tier (store="mooncake" and "both") -------------

pytest.register_assert_rewrite("mooncake_cluster")
from mooncake_cluster import (ServerKill, check_pool_run, close_emptying_pool,  # noqa: E402
                              cluster_fixture, flip_in_pool, tally_pool_loads)

mooncake = cluster_fixture(50761)
STORES = ("mooncake", "both")


def pool_tier(cluster, store, mode="fast", capacity_bytes=0, **kw):
    opts = {"master": cluster.master, "namespace": f"vt{random.getrandbits(48):012x}"}
    return splitzip_tier(capacity_bytes, mode, store=store, mooncake=opts, **kw)


def close_engine(eng):
    close_emptying_pool(eng.tiers[0].remote, eng.close)


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
        close_engine(eng)


@pytest.mark.parametrize("store", STORES)
def test_pool_flipped_value_is_a_miss_and_dropped(base, mooncake, store):
    _, pages = base
    cb = pages.shape[1]
    eng = Engine(cb, 2, [pool_tier(mooncake, store, "capacity", 64 * cb if store == "both" else 0)])
    try:
        tier = eng.tiers[0]
        data = store_in_pairs(eng, pages)
        victim = key(0)
        if tier.cache is not None:
            tier.cache.remove(victim)             # only the pool has it
        assert flip_in_pool(tier.remote, victim.hex())
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
        close_engine(eng)


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
    kill = ServerKill(mooncake, 1)
    try:
        while n["ops"] < 10_000:
            r = rng.random()
            tier = eng.tiers[0]
            kill.step(n)
            if r < 0.45:
                random_store(eng, rng, n, data, pages, universe)
            elif r < 0.95:
                random_load(eng, rng, n, data, universe)
            elif r < 0.995:
                k = rng.choice(list(data))
                if tier.cache is not None:
                    tier.cache.remove(k)
                n["flipped"] += flip_in_pool(tier.remote, k.hex(), rng)
            elif n["ops"] > 2_500 * (n["restarts"] + 1):
                # A few restarts (a pool client takes ~1 s to set up).
                tally_pool_loads(n, tier)
                eng.close()
                eng = Engine(cb, 6, [tier_cfg])   # same pool, same namespace
                n["restarts"] += 1
        tally_pool_loads(n, eng.tiers[0])
        print(f"\n{name} {store}: {dict(n)}")
        check_pool_run(n)
    finally:
        close_engine(eng)
        kill.restore(n)


# -- capacity table sets (docs/ENGINES.md "Table sets") -------------------------

def frame_set(frame):
    import splitzip_kv as splitzip
    return splitzip.frame_info(frame)["tables_id"]


def test_tables_host_tier_bit_exact(base, tmp_path):
    """A set file named by the tier's "tables": capacity frames that name
    the set, stored -> evicted -> loaded bit for bit, held-out pages."""
    _, pages = base
    ts, held = kvdata.held_out_tables(pages, tmp_path / "model.szct")
    cb = pages.shape[1]
    eng = Engine(cb, 4, [splitzip_tier(12 * cb, None, tables=str(tmp_path / "model.szct"))])
    try:
        tier = eng.tiers[0]
        assert tier.mode == "capacity" and tier.cache._write_set == ts
        n = 40
        data = {key(i): kvdata.tagged(held, i) for i in range(n)}
        for i in range(0, n, 4):
            eng.store([key(j) for j in range(i, i + 4)], data)
            eng.settle()
        held_keys = [k for k in data if k in tier.cache]
        assert tier.cache.evicted > 0 and len(held_keys) > 12
        assert {frame_set(f) for k in held_keys for f in tier.cache.frames(k)} == {ts.id}
        got = eng.load(held_keys[:4])
        assert list(got) == held_keys[:4]
        for k in got:
            assert np.array_equal(got[k], data[k])
    finally:
        eng.close()


def test_tables_config_is_checked(base, tmp_path):
    _, pages = base
    ts, _ = kvdata.held_out_tables(pages)
    cb = pages.shape[1]
    for cfg in (splitzip_tier(8 * cb, "fast", tables=[ts.to_bytes()]),     # sets need capacity
                splitzip_tier(8 * cb, None, tables=[3]),                    # not a set
                splitzip_tier(8 * cb, None, tables=str(tmp_path / "none.szct"))):
        with pytest.raises((ValueError, OSError)):
            Engine(cb, 4, [cfg])


def test_pool_tables_reader_without_sets(base, mooncake):
    """A writer tier with a set stores it once in the pool; a tier with no
    set of its own (another engine) fetches it by the id its frames name and
    loads bit for bit; with the set gone from the pool, or damaged there, a
    load is a miss, never data."""
    _, pages = base
    ts, held = kvdata.held_out_tables(pages)
    cb = pages.shape[1]
    ns = f"vt{random.getrandbits(48):012x}"
    opts = {"master": mooncake.master, "namespace": ns}
    w = Engine(cb, 2, [splitzip_tier(0, None, store="mooncake", mooncake=opts, model="m",
                                     tables=[ts.to_bytes()])])
    readers = []
    try:
        n = 8
        data = {key(i): kvdata.tagged(held, i) for i in range(n)}
        for i in range(0, n, 2):
            w.store([key(i), key(i + 1)], data)
            w.settle()
        assert w.tiers[0].remote_stored == n

        def reader():
            r = Engine(cb, 2, [splitzip_tier(0, "capacity", store="mooncake", mooncake=opts, model="m")])
            readers.append(r)
            assert r.tiers[0].remote.held_tables() == []
            return r
        r = reader()
        got = r.load([key(0), key(1)])
        assert list(got) == [key(0), key(1)]
        for k in got:
            assert np.array_equal(got[k], data[k])
        assert r.tiers[0].remote.tables_fetched == 1
        tk = f"{ns}/tables/{ts.id:016x}"
        client = w.tiers[0].remote.client
        client.remove(tk, True)
        assert reader().load([key(2)]) == {}               # set missing: a miss
        raw = bytearray(ts.to_bytes())
        raw[len(raw) // 2] ^= 0x10
        assert client.upsert(tk, bytes(raw)) == 0
        r3 = reader()
        assert r3.load([key(3)]) == {}                     # damaged set: refused, a miss
        assert r3.tiers[0].remote.tables_refused == 1
        assert w.tiers[0].remote.publish_tables() == {ts.id: 0}
        got = reader().load([key(4)])
        assert np.array_equal(got[key(4)], data[key(4)])
    finally:
        for r in readers:
            r.close()
        close_engine(w)
