# SPDX-License-Identifier: Apache-2.0
"""SplitzipHiCacheStorage loaded by SGLang's real storage factory and driven
through HiCacheController's page functions (scripts/engines_test.sh runs it
in a venv with the pinned SGLang; elsewhere it skips unless
SZ_ENGINES_REQUIRE=1)."""

import collections
import os
import random
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

if os.environ.get("SZ_ENGINES_REQUIRE") != "1":
    pytest.importorskip("sglang.srt.mem_cache.hicache_storage")

sys.path.insert(0, str(Path(__file__).parent))
import kvdata  # noqa: E402
from sglang_harness import Controller, host_pool, splitzip_extra  # noqa: E402

DATASETS = kvdata.available()
SHAPES = {"smollm2": (30, 3, 64), "stories260k": (5, 4, 8)}
MODES = ("fast", "capacity")
PATHS = {"default": (0, "page_first"), "v1": (1, "page_first"),
         "v1-layer_first": (1, "layer_first")}


@pytest.fixture(scope="module", params=DATASETS)
def base(request):
    ps = 16 if request.param == "smollm2" else 32   # tokens per page (20 KiB .. 360 KiB)
    return request.param, ps, kvdata.pages(request.param, ps)


def make(base, budget_pages, mode="fast", path="default", slots=16):
    name, ps, pages = base
    layers, heads, dim = SHAPES[name]
    v1, layout = PATHS[path]
    pool = host_pool(layout, layers, heads, dim, ps, slots)
    extra = splitzip_extra(budget_pages * pages.shape[1], mode, v1)
    return Controller("dynamic", extra, pool)


def keyname(i):
    return f"{i:032x}"


def backup_in_fours(ctl, pages, n):
    """Pages 0..n-1 (tagged by index) backed up four at a time from slots
    0-3; returns them and their keys."""
    data = [kvdata.tagged(pages, i) for i in range(n)]
    keys = [keyname(i) for i in range(n)]
    for i in range(0, n, 4):
        ctl.write_pages(range(4), data[i:i + 4])
        assert ctl.backup(keys[i:i + 4], range(4))
    return data, keys


class RandomOps:
    """Random backups and prefetches of 1-4 consecutive keys out of
    ``universe`` (each page tagged by its key's index): backups write from
    slots 0.., prefetches read into slots ``slots``..; ``data`` is what was
    stored under each key, ``n`` the counts (ops, served, wrong)."""

    def __init__(self, pages, slots, universe, n):
        self.pages, self.slots, self.universe, self.n = pages, slots, universe, n
        self.data = {}

    def backup(self, ctl, rng):
        start = rng.randrange(self.universe - 4)
        ks = [keyname(i) for i in range(start, start + rng.randint(1, 4))]
        for i, k in zip(range(start, start + 4), ks):
            self.data.setdefault(k, kvdata.tagged(self.pages, i))
        ctl.write_pages(range(len(ks)), [self.data[k] for k in ks])
        ctl.backup(ks, range(len(ks)))
        self.n["ops"] += len(ks)

    def prefetch(self, ctl, rng):
        start = rng.randrange(self.universe - 4)
        ks = [keyname(i) for i in range(start, start + rng.randint(1, 4)) if keyname(i) in self.data]
        if not ks:
            return
        sl = list(range(self.slots, self.slots + len(ks)))
        hit = ctl.exists_prefix(ks)
        got = ctl.prefetch(ks[:hit], sl[:hit]) if hit else 0
        self.n["ops"] += len(ks)
        for s, k in zip(sl[:got], ks[:got]):
            self.n["served"] += 1
            self.n["wrong"] += not np.array_equal(ctl.read_page(s), self.data[k])

    def threads(self, ctl, rounds):
        """HiCache's backup and prefetch threads on one backend at once (the
        prefetch side uses its own half of the pool's pages), ``rounds`` ops
        each; returns what they raised."""
        errors = []

        def run(fn, seed):
            r = random.Random(seed)
            try:
                for _ in range(rounds):
                    fn(ctl, r)
            except Exception as e:   # surfaced by the caller
                errors.append(e)

        ts = [threading.Thread(target=run, args=(self.backup, 1)),
              threading.Thread(target=run, args=(self.prefetch, 2))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return errors


def test_factory_loads_backend(base):
    ctl = make(base, 8)
    assert type(ctl.backend).__name__ == "SplitzipHiCacheStorage"
    assert ctl.backend.cache.dtype == "bf16"


def test_bad_extra_config_is_refused(base):
    name, ps, pages = base
    layers, heads, dim = SHAPES[name]
    pool = host_pool("page_first", layers, heads, dim, ps, 4)
    for extra in (splitzip_extra(1 << 20, compression=1), splitzip_extra(0)):
        with pytest.raises(ValueError):
            Controller("dynamic", extra, pool)


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("mode", MODES)
def test_backup_evict_prefetch_bit_exact(base, mode, path):
    _, _, pages = base
    budget = 10
    ctl = make(base, budget, mode, path)
    n = 32
    data, keys = backup_in_fours(ctl, pages, n)
    c = ctl.backend.cache
    assert c.evicted > 0 and c.used_bytes <= budget * pages.shape[1]
    held = [i for i in range(n) if keys[i] in c]
    assert len(held) > budget, (len(held), budget)
    assert held == list(range(n - len(held), n))     # least recently used went first
    ctl.pool.kv_buffer.zero_()
    first = held[:8]
    assert ctl.exists_prefix([keys[i] for i in first]) == 8
    assert ctl.prefetch([keys[i] for i in first], range(8)) == 8
    for s, i in enumerate(first):
        assert np.array_equal(ctl.read_page(s), data[i])
    # An evicted key ends the prefix: a miss, not data.
    assert ctl.exists_prefix([keys[held[0]], keys[0]]) == 1
    assert ctl.prefetch([keys[0]], [0]) == 0


@pytest.mark.parametrize("path", list(PATHS))
def test_flipped_value_is_a_miss(base, path):
    _, _, pages = base
    ctl = make(base, 32, "capacity", path)
    data, keys = backup_in_fours(ctl, pages, 4)
    c = ctl.backend.cache
    fs = list(c.frames(keys[2]))
    f = bytearray(fs[-1])
    f[len(f) // 3] ^= 0x04
    fs[-1] = bytes(f)
    c.replace_frames(keys[2], fs)
    ctl.pool.kv_buffer.zero_()
    assert ctl.prefetch(keys, range(4)) == 2            # the prefix stops at the bad page
    assert keys[2] not in c and c.corrupt == 1
    for s in range(2):
        assert np.array_equal(ctl.read_page(s), data[s])


def test_page_larger_than_budget_is_refused(base):
    _, _, pages = base
    ctl = make(base, 0.25)
    ctl.write_pages([0], [kvdata.tagged(pages, 0)])
    assert not ctl.backup([keyname(0)], [0])
    assert ctl.backend.cache.refused == 1 and ctl.exists_prefix([keyname(0)]) == 0


@pytest.mark.parametrize("path", ["default", "v1"])
@pytest.mark.parametrize("mode", MODES)
def test_ten_thousand_ops_with_faults(base, mode, path):
    """>= 10,000 page sets/gets through the controller's page functions, with
    flipped values, a full budget and the backend killed and re-created by
    the factory mid-run; then HiCache's two storage threads (backup and
    prefetch) on one backend at once. Every fetched page is compared with
    what was stored under its key: 0 wrong values."""
    name, ps, pages = base
    budget, slots, universe = 24, 16, 48
    rng = random.Random(11)
    ctl = make(base, budget, mode, path, slots=2 * slots)
    n = {"ops": 0, "served": 0, "wrong": 0, "flipped": 0, "restarts": 0, "corrupt": 0}
    ops = RandomOps(pages, slots, universe, n)
    data = ops.data

    while n["ops"] < 10_000:
        r = rng.random()
        c = ctl.backend.cache
        if r < 0.45:
            ops.backup(ctl, rng)
        elif r < 0.95:
            ops.prefetch(ctl, rng)
        elif r < 0.995:
            held = [k for k in data if k in c]
            if held:
                k = rng.choice(held)
                fs = c.frames(k)
                j = rng.randrange(len(fs))
                f = bytearray(fs[j])
                f[rng.randrange(len(f))] ^= 1 << rng.randrange(8)
                c.replace_frames(k, fs[:j] + (bytes(f),) + fs[j + 1:])
                n["flipped"] += 1
        else:
            # The backend dies; the factory makes a new, empty one on the pool.
            n["corrupt"] += c.corrupt
            ctl.backend.close()
            ctl = make(base, budget, mode, path, slots=2 * slots)
            n["restarts"] += 1

    errors = ops.threads(ctl, 400)
    assert not errors, errors
    n["corrupt"] += ctl.backend.cache.corrupt
    print(f"\n{name} {mode} {path}: {n}")
    assert n["ops"] >= 10_000
    assert n["served"] > 2_000
    assert n["flipped"] > 0 and n["restarts"] > 0
    assert n["wrong"] == 0


# -- Mooncake Store behind the backend (store "mooncake" and "both") ----------

pytest.register_assert_rewrite("mooncake_cluster")
from mooncake_cluster import (ServerKill, check_pool_run, close_emptying_pool,  # noqa: E402
                              cluster_fixture, flip_in_pool, tally_pool_loads)

mooncake = cluster_fixture(50771)
STORES = ("mooncake", "both")


def make_pool(base, cluster, store, mode="fast", path="default", slots=16, budget_pages=0,
              namespace=None):
    name, ps, pages = base
    layers, heads, dim = SHAPES[name]
    v1, layout = PATHS[path]
    pool = host_pool(layout, layers, heads, dim, ps, slots)
    ns = namespace or f"sg{random.getrandbits(48):012x}"
    extra = splitzip_extra(budget_pages * pages.shape[1], mode, v1, store=store,
                           mooncake={"master": cluster.master, "namespace": ns})
    return Controller("dynamic", extra, pool)


def close_backend(ctl):
    close_emptying_pool(ctl.backend.remote, ctl.backend.close)


def test_pool_extra_config_is_checked(base, mooncake):
    name, ps, pages = base
    layers, heads, dim = SHAPES[name]
    pool = host_pool("page_first", layers, heads, dim, ps, 4)
    m = {"master": mooncake.master}
    for extra in (splitzip_extra(0, store="mooncake"),                       # no master
                  splitzip_extra(1 << 20, store="mooncake", mooncake=m),     # host budget
                  splitzip_extra(0, store="both", mooncake=m),               # no host budget
                  splitzip_extra(1 << 20, store="disk"),
                  splitzip_extra(1 << 20, mooncake=m),                       # host + options
                  splitzip_extra(0, store="mooncake", mooncake=dict(m, level=3))):
        with pytest.raises(ValueError):
            Controller("dynamic", extra, pool)


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("store", STORES)
@pytest.mark.parametrize("mode", MODES)
def test_pool_backup_prefetch_bit_exact(base, mooncake, mode, store, path):
    """Pages backed up through the controller land in the pool; with "both"
    the host cache keeps a budget's worth and the pool serves the rest.
    Every page prefetched comes back bit for bit."""
    _, _, pages = base
    ctl = make_pool(base, mooncake, store, mode, path, budget_pages=6 if store == "both" else 0)
    try:
        n = 24
        data, keys = backup_in_fours(ctl, pages, n)
        b = ctl.backend
        assert b.remote_stored == n and b.remote_failed == 0
        if store == "both":
            assert b.cache.evicted > 0 and len(b.cache) < n
        assert ctl.exists_prefix(keys) == n
        for i in range(0, n, 8):
            ctl.pool.kv_buffer.zero_()
            assert ctl.prefetch(keys[i:i + 8], range(8)) == 8
            for s in range(8):
                assert np.array_equal(ctl.read_page(s), data[i + s])
        assert b.remote_loaded >= (n if store == "mooncake" else n - len(b.cache))
        assert ctl.exists_prefix([keys[0], keyname(999)]) == 1
        assert ctl.prefetch([keyname(999)], [0]) == 0
    finally:
        close_backend(ctl)


@pytest.mark.parametrize("path", ["default", "v1"])
def test_pool_flipped_value_is_a_miss(base, mooncake, path):
    _, _, pages = base
    ctl = make_pool(base, mooncake, "mooncake", "capacity", path)
    try:
        data, keys = backup_in_fours(ctl, pages, 4)
        assert flip_in_pool(ctl.backend.remote, keys[2])
        ctl.pool.kv_buffer.zero_()
        assert ctl.prefetch(keys, range(4)) == 2            # the prefix stops at the bad page
        assert ctl.backend.remote_corrupt == 1
        assert ctl.exists_prefix(keys) == 2                  # dropped from the pool
        for s in range(2):
            assert np.array_equal(ctl.read_page(s), data[s])
    finally:
        close_backend(ctl)


@pytest.mark.parametrize("store", STORES)
def test_pool_ten_thousand_ops_with_faults(base, mooncake, store):
    """>= 10,000 page sets/gets through the controller's page functions
    (interface_v1) with the pages in Mooncake: values flipped in the pool, a
    store client SIGKILLed and started again, the backend re-created by the
    factory (the new one finds the pool's values), and with "both" a full
    host budget; then the backup and prefetch threads on one backend at
    once. Every fetched page is compared with what was stored."""
    name, ps, pages = base
    slots, universe = 16, 64
    rng = random.Random(31)
    ns = f"sg{rng.getrandbits(48):012x}"
    budget = 12 if store == "both" else 0

    def new():
        return make_pool(base, mooncake, store, "fast", "v1", 2 * slots, budget, ns)

    ctl = new()
    n = collections.Counter()
    ops = RandomOps(pages, slots, universe, n)
    data = ops.data
    kill = ServerKill(mooncake, 0)
    try:
        while n["ops"] < 10_000:
            kill.step(n)
            r = rng.random()
            b = ctl.backend
            if r < 0.45:
                ops.backup(ctl, rng)
            elif r < 0.95:
                ops.prefetch(ctl, rng)
            elif r < 0.995:
                k = rng.choice(list(data))
                if b.cache is not None:
                    b.cache.remove(k)
                n["flipped"] += flip_in_pool(b.remote, k, rng)
            elif n["ops"] > 2_500 * (n["restarts"] + 1):
                # A few restarts (a pool client takes ~1 s to set up).
                tally_pool_loads(n, b)
                b.close()
                ctl = new()
                n["restarts"] += 1
        errors = ops.threads(ctl, 300)
        assert not errors, errors
        tally_pool_loads(n, ctl.backend)
        print(f"\n{name} {store}: {dict(n)}")
        check_pool_run(n)
    finally:
        close_backend(ctl)
        kill.restore(n)


# -- capacity table sets (docs/ENGINES.md "Table sets") -------------------------

def test_tables_host_backend_bit_exact(base, tmp_path):
    """extra-config "tables" names a set file: capacity frames that name the
    set, backed up -> evicted -> prefetched bit for bit (held-out pages)."""
    import splitzip_kv as splitzip
    name, ps, pages = base
    ts, held = kvdata.held_out_tables(pages, tmp_path / "model.szct")
    layers, heads, dim = SHAPES[name]
    for v1, layout in ((0, "page_first"), (1, "page_first")):
        pool = host_pool(layout, layers, heads, dim, ps, 16)
        extra = splitzip_extra(8 * pages.shape[1], None, v1, tables=str(tmp_path / "model.szct"))
        ctl = Controller("dynamic", extra, pool)
        try:
            b = ctl.backend
            assert b.mode == "capacity"
            n = 16
            data, keys = backup_in_fours(ctl, held, n)
            c = b.cache
            assert c.evicted > 0 and len(c) > 8
            kept = [i for i in range(n) if keys[i] in c]
            assert {splitzip.frame_info(f)["tables_id"] for i in kept for f in c.frames(keys[i])} == {ts.id}
            ctl.pool.kv_buffer.zero_()
            assert ctl.prefetch([keys[i] for i in kept[:4]], range(4)) == 4
            for s, i in enumerate(kept[:4]):
                assert np.array_equal(ctl.read_page(s), data[i])
        finally:
            b.close()


def test_tables_extra_config_is_checked(base):
    name, ps, pages = base
    ts, _ = kvdata.held_out_tables(pages)
    layers, heads, dim = SHAPES[name]
    pool = host_pool("page_first", layers, heads, dim, ps, 4)
    for extra in (splitzip_extra(1 << 20, "fast", tables=[ts.to_bytes()]),
                  splitzip_extra(1 << 20, None, tables=[3])):
        with pytest.raises(ValueError):
            Controller("dynamic", extra, pool)


def test_pool_tables_reader_without_sets(base, mooncake):
    """A writer backend with a set stores it once in the pool; a backend with
    no set of its own fetches it by id and prefetches bit for bit; with the
    set gone or damaged in the pool a prefetch is a miss, never data."""
    name, ps, pages = base
    ts, held = kvdata.held_out_tables(pages)
    layers, heads, dim = SHAPES[name]
    ns = f"sg{random.getrandbits(48):012x}"
    m = {"master": mooncake.master, "namespace": ns}

    def make_one(**kw):
        pool = host_pool("page_first", layers, heads, dim, ps, 8)
        return Controller("dynamic", splitzip_extra(0, kw.pop("mode", "capacity"), 1, store="mooncake",
                                                    mooncake=m, model="m", **kw), pool)
    w = make_one(mode=None, tables=[ts.to_bytes()])
    others = []
    try:
        data, keys = backup_in_fours(w, held, 8)
        assert w.backend.remote_stored == 8

        def reader():
            r = make_one()
            others.append(r)
            assert r.backend.remote.held_tables() == []
            return r
        r = reader()
        r.pool.kv_buffer.zero_()
        assert r.prefetch(keys[:4], range(4)) == 4
        for s in range(4):
            assert np.array_equal(r.read_page(s), data[s])
        assert r.backend.remote.tables_fetched == 1
        tk = f"{ns}/tables/{ts.id:016x}"
        client = w.backend.remote.client
        client.remove(tk, True)
        r2 = reader()
        assert r2.prefetch(keys[4:5], [0]) == 0
        raw = bytearray(ts.to_bytes())
        raw[len(raw) // 2] ^= 0x10
        assert client.upsert(tk, bytes(raw)) == 0
        r3 = reader()
        assert r3.prefetch(keys[5:6], [0]) == 0
        assert r3.backend.remote.tables_refused == 1
        assert w.backend.remote.publish_tables() == {ts.id: 0}
        r4 = reader()
        r4.pool.kv_buffer.zero_()
        assert r4.prefetch(keys[6:8], range(2)) == 2
        for s in range(2):
            assert np.array_equal(r4.read_page(s), data[6 + s])
    finally:
        for r in others:
            r.backend.close()
        close_backend(w)
