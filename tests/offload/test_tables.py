# SPDX-License-Identifier: Apache-2.0
"""Capacity table sets in the offload store (docs/OFFLOAD.md "Table sets"),
on the real Mooncake deployment: a writer with a set stores it once under
tables_key(id); a reader with no set of its own fetches it by the id its
frames name and reads exact data; a set missing from the pool, or stored
damaged, is a MISSING_TABLES miss (zeros), never data."""

import collections
import random
import threading

import numpy as np
import pytest

import splitzip_kv as splitzip
from splitzip_kv.offload import KVOffloadStore, OffloadConfig
from splitzip_kv.offload.store import calibrate_layer_tables, tables_key
from conftest import real_pages

MiB = 1 << 20


@pytest.fixture(scope="module")
def kv():
    """Bundled KV in 64-token blocks: blocks of sequences 0-7 calibrate a
    set per layer and K/V, those of sequences 8-15 are stored (held out);
    ``ts`` is layer 0's K set (the one the single-set tests use)."""
    layout, pages = real_pages(block_tokens=64)
    nb = pages.shape[2]
    sets = calibrate_layer_tables(pages, range(nb // 2))
    return layout, pages, sets[0], list(range(nb // 2, nb)), sets


def open_store(cluster, layout, ns, **kw):
    kw.setdefault("group_bytes", 1 * MiB)
    return KVOffloadStore(OffloadConfig(master=cluster.master, namespace=ns, **kw), "stories260k",
                          layout)


def hashes(blocks, tag):
    return [f"{tag}{b:04d}" for b in blocks]


def counts(st):
    return collections.Counter(s.status for s in st)


def test_reader_without_sets_reads_through_the_pool(cluster, kv):
    layout, pages, ts, held_out, _ = kv
    w = open_store(cluster, layout, "tabA", tables=ts)
    assert w.config.mode == "capacity" and w.held_tables() == [ts.id]
    assert w.client.is_exist(tables_key("tabA", ts.id)) == 1
    assert bytes(w.client.get(tables_key("tabA", ts.id))) == ts.to_bytes()
    hs = hashes(held_out, "a")
    assert counts(w.put_blocks(pages, held_out, hs)) == {"OK": len(held_out) * layout.layers}
    # Every frame names the set.
    key = w.keys(hs[:1])[0]
    val = np.frombuffer(w.client.get(key) + (w.client.get(key + "~t") or b""), np.uint8)
    from splitzip_kv.offload import chunk
    _, _, spans = chunk.parse(key, val)
    assert [splitzip.frame_info(val[o:o + s])["tables_id"] for o, s in spans] == [ts.id] * 2
    # A second writer with the same set: already there, left as it is.
    w2 = open_store(cluster, layout, "tabA", tables=[ts.to_bytes()])
    assert w2.publish_tables() == {ts.id: 0}
    w2.close()
    # A fresh reader: no sets of its own.
    r = open_store(cluster, layout, "tabA")
    assert r.held_tables() == []
    got = np.full_like(pages, 7)
    st = r.get_blocks(got, held_out, hs)
    assert counts(st) == {"OK": len(held_out) * layout.layers}
    assert r.tables_fetched == 1 and r.held_tables() == [ts.id]
    assert np.array_equal(got[:, :, held_out].view(np.uint16), pages[:, :, held_out].view(np.uint16))
    # Cached: a second read fetches nothing.
    got[...] = 0
    assert counts(r.get_blocks(got, held_out, hs))["OK"] == len(held_out) * layout.layers
    assert r.tables_fetched == 1
    assert np.array_equal(got[:, :, held_out].view(np.uint16), pages[:, :, held_out].view(np.uint16))
    for s in (w, r):
        s.close()


def test_sets_per_layer_and_kv(cluster, kv):
    """2 x layers sets (L0 K, L0 V, ...): each frame names its layer's K or V
    set; a reader with none reads exact data through the pool's copies, and
    the values are smaller than per-block capacity values."""
    layout, pages, _, held_out, sets = kv
    ids = [ts.id for ts in sets]
    assert len(set(ids)) == 2 * layout.layers
    w = open_store(cluster, layout, "tabL", tables=[ts.to_bytes() for ts in sets])
    assert all(w.client.is_exist(tables_key("tabL", i)) == 1 for i in ids)
    hs = hashes(held_out, "l")
    assert counts(w.put_blocks(pages, held_out, hs)) == {"OK": len(held_out) * layout.layers}
    from splitzip_kv.offload import chunk
    for l in range(layout.layers):
        key = w.keys(hs[:1])[l]
        val = np.frombuffer(w.client.get(key) + (w.client.get(key + "~t") or b""), np.uint8)
        _, _, spans = chunk.parse(key, val)
        assert [splitzip.frame_info(val[o:o + s])["tables_id"] for o, s in spans] == ids[2 * l:2 * l + 2]
    # A subset of layers, and the host decode of a value.
    w2 = open_store(cluster, layout, "tabL", tables=sets)
    st = w2.put_blocks(pages, held_out[:2], hashes(held_out[:2], "m"), layers=[3, 1])
    assert counts(st) == {"OK": 4}
    r = open_store(cluster, layout, "tabL")
    got = np.full_like(pages, 7)
    assert counts(r.get_blocks(got, held_out, hs)) == {"OK": len(held_out) * layout.layers}
    assert r.tables_fetched == 2 * layout.layers
    assert np.array_equal(got[:, :, held_out].view(np.uint16), pages[:, :, held_out].view(np.uint16))
    got[...] = 7
    st = r.get_blocks(got, held_out[:2], hashes(held_out[:2], "m"), layers=[3, 1])
    assert counts(st) == {"OK": 4}
    assert np.array_equal(got[[3, 1]][:, :, held_out[:2]].view(np.uint16),
                          pages[[3, 1]][:, :, held_out[:2]].view(np.uint16))
    p = open_store(cluster, layout, "tabL2", codec_options={"mode": "capacity"})
    p.put_blocks(pages, held_out, hs)
    assert w.stored_bytes_put < p.stored_bytes_put, (w.stored_bytes_put, p.stored_bytes_put)
    for s in (w, w2, r, p):
        s.close()


def test_layer_set_values_are_the_native_two_part_bytes(cluster, kv):
    """With the same set given for every layer and K/V, the values put_blocks
    assembles from one-part codings are byte for byte the native two-part
    chunk call's with that set."""
    from splitzip_kv import _core
    from splitzip_kv.offload import chunk
    layout, pages, ts, held_out, _ = kv
    w = open_store(cluster, layout, "tabN", tables=[ts] * (2 * layout.layers))
    assert w._layer_sets is not None
    hs = hashes(held_out[:3], "n")
    assert counts(w.put_blocks(pages, held_out[:3], hs)) == {"OK": 3 * layout.layers}
    keys, offs = w._work_coded(pages, held_out[:3], hs, None)
    bound = chunk.chunk_bound("bf16", 2, layout.page_elems)
    out = np.zeros(len(keys) * bound, np.uint8)
    sizes, errs = _core.encode_chunks(out, np.arange(len(keys), dtype=np.uint64) * np.uint64(bound), keys,
                                      pages.reshape(-1).view(np.uint8), offs, 2, layout.page_elems, "bf16",
                                      1, None, None, 0, 1, ts)
    assert errs == []
    for i, k in enumerate(keys):
        got = bytes(w.client.get(k)) + (bytes(w.client.get(k + "~t")) if w.client.is_exist(k + "~t") == 1 else b"")
        assert got == bytes(out[i * bound:i * bound + sizes[i]]), k
    w.close()


def test_missing_set_is_a_miss(cluster, kv):
    layout, pages, ts, held_out, _ = kv
    w = open_store(cluster, layout, "tabB", tables=ts)
    hs = hashes(held_out[:4], "b")
    assert counts(w.put_blocks(pages, held_out[:4], hs))["OK"] == 4 * layout.layers
    assert w.client.remove(tables_key("tabB", ts.id), True) == 0
    r = open_store(cluster, layout, "tabB")
    got = np.full_like(pages, 7)
    st = r.get_blocks(got, held_out[:4], hs)
    assert counts(st) == {"MISSING_TABLES": 4 * layout.layers}
    assert f"{ts.id:016x}" in st[0].detail and "not in the store" in st[0].detail
    assert not got[:, :, held_out[:4]].view(np.uint16).any()  # zeros, never data
    # The writer holds its set: it still reads; once published again, so does the reader.
    assert counts(w.get_blocks(np.zeros_like(pages), held_out[:4], hs)) == {"OK": 4 * layout.layers}
    assert w.publish_tables() == {ts.id: 0}
    assert counts(r.get_blocks(got, held_out[:4], hs)) == {"OK": 4 * layout.layers}
    assert np.array_equal(got[:, :, held_out[:4]].view(np.uint16), pages[:, :, held_out[:4]].view(np.uint16))
    w.close()
    r.close()


@pytest.mark.parametrize("where", ["body", "header"])
def test_corrupt_stored_set_is_refused(cluster, kv, where):
    layout, pages, ts, held_out, _ = kv
    ns = f"tabC{where}"
    w = open_store(cluster, layout, ns, tables=ts)
    hs = hashes(held_out[:3], "c")
    assert counts(w.put_blocks(pages, held_out[:3], hs))["OK"] == 3 * layout.layers
    key = tables_key(ns, ts.id)
    data = bytearray(w.client.get(key))
    data[len(data) // 2 if where == "body" else 9] ^= 0x10
    assert w.client.upsert(key, bytes(data)) == 0
    r = open_store(cluster, layout, ns)
    got = np.full_like(pages, 7)
    st = r.get_blocks(got, held_out[:3], hs)
    assert counts(st) == {"MISSING_TABLES": 3 * layout.layers}
    assert "refused" in st[0].detail
    assert r.tables_refused == 1 and r.held_tables() == []
    assert not got[:, :, held_out[:3]].view(np.uint16).any()
    assert r.client.is_exist(key) != 1  # dropped, so the writer can put it again
    assert w.publish_tables() == {ts.id: 0}
    assert counts(r.get_blocks(got, held_out[:3], hs)) == {"OK": 3 * layout.layers}
    w.close()
    r.close()


def test_set_under_another_id_is_refused(cluster, kv):
    layout, pages, ts, held_out, _ = kv
    other = splitzip.calibrate([np.ascontiguousarray(pages[:, :, held_out])], mode="capacity")
    assert other.id != ts.id
    w = open_store(cluster, layout, "tabD", tables=ts)
    hs = hashes(held_out[:2], "d")
    w.put_blocks(pages, held_out[:2], hs)
    assert w.client.upsert(tables_key("tabD", ts.id), other.to_bytes()) == 0
    r = open_store(cluster, layout, "tabD")
    st = r.get_blocks(np.zeros_like(pages), held_out[:2], hs)
    assert counts(st) == {"MISSING_TABLES": 2 * layout.layers}
    assert f"holds set {other.id:016x}" in st[0].detail
    w.close()
    r.close()


def test_config_checks(cluster, kv):
    layout, pages, ts, _, _ = kv
    with pytest.raises(ValueError, match="capacity"):
        OffloadConfig(tables=ts, codec_options={"mode": "fast"}).validate()
    with pytest.raises(ValueError, match="codec='splitzip'"):
        OffloadConfig(tables=ts, codec="raw").validate()
    with pytest.raises(ValueError, match="tables must be"):
        open_store(cluster, layout, "tabE", tables=[3])
    assert OffloadConfig(tables=ts).mode == "capacity"


def test_many_ops_with_sets(cluster, kv):
    """Random puts and gets from a writer with a set per layer and K/V and
    fresh readers (threads, a fetched-set cache smaller than the model's
    sets, the sets removed from the pool and put again): 0 wrong values."""
    layout, pages, _, held_out, sets = kv
    w = open_store(cluster, layout, "tabF", tables=sets)
    readers = [open_store(cluster, layout, "tabF", tables_cache=3) for _ in range(2)]
    rng = random.Random(29)
    stored = []
    tally = collections.Counter()
    wrong = []
    lock = threading.Lock()

    def check(st, got, blocks):
        L = layout.layers
        for i, b in enumerate(blocks):
            for l in range(L):
                s = st[i * L + l]
                with lock:
                    tally[s.status] += 1
                page = got[l, :, b].view(np.uint16)
                if s.ok:
                    if not np.array_equal(page, pages[l, :, b].view(np.uint16)):
                        wrong.append((b, l, "data differs"))
                elif page.any():
                    wrong.append((b, l, f"{s.status} left data"))

    def worker(r, seed, have):
        g = random.Random(seed)
        for _ in range(40):
            blocks = g.sample(have, 4)
            got = np.full_like(pages, 3)
            check(r.get_blocks(got, blocks, hashes(blocks, "f")), got, blocks)

    for rnd in range(6):
        blocks = rng.sample([b for b in held_out if b not in stored], 4)
        assert counts(w.put_blocks(pages, blocks, hashes(blocks, "f")))["OK"] == 4 * layout.layers
        stored += blocks
        if rnd == 3:  # the pool loses the sets for a while
            w.client.batch_remove([tables_key("tabF", ts.id) for ts in sets], True)
        if rnd == 4:
            assert w.publish_tables() == {ts.id: 0 for ts in sets}
            assert all(w.client.is_exist(tables_key("tabF", ts.id)) == 1 for ts in sets)
        before = tally.copy()
        ts_ = [threading.Thread(target=worker, args=(r, rnd * 10 + i, list(stored)))
               for i, r in enumerate(readers)]
        for t in ts_:
            t.start()
        for t in ts_:
            t.join()
        # Only the round without the sets in the pool misses (readers hold
        # at most 3 of the 10 sets).
        assert (tally - before)["MISSING_TABLES"] == 0 or rnd == 3, (rnd, tally - before)
    ops = sum(tally.values())
    assert ops >= 3000, ops
    assert wrong == []
    assert tally["MISSING_TABLES"] > 0 and tally["OK"] > ops // 2, tally
    assert readers[0].tables_fetched > 2 * len(sets)  # the cache let sets go and fetched them again
    assert set(tally) <= {"OK", "MISSING_TABLES"}, tally
    for s in [w] + readers:
        s.close()
