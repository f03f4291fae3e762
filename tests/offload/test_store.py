# SPDX-License-Identifier: Apache-2.0
"""The offload layer against a real Mooncake Store deployment on loopback
(mooncake_master + 2 store-client processes, scripts/offload_cluster.sh)."""

import collections
import pathlib
import time

import numpy as np
import pytest

from splitzip_kv.offload import KVOffloadStore, OffloadConfig, block_hashes, chunk
from splitzip_kv.offload.store import TAIL
from conftest import real_pages

MiB = 1 << 20


def hashes_for(n, tag):
    return block_hashes(np.arange(n * 8), 8, salt=tag.encode())


def open_store(cluster, layout, **kw):
    kw.setdefault("group_bytes", 1 * MiB)
    return KVOffloadStore(OffloadConfig(master=cluster.master, **kw), "stories260k", layout)


def counts(statuses):
    return collections.Counter(s.status for s in statuses)


def assert_pages(out, pages, statuses, layers):
    """OK chunks hold exactly the original pages; other chunks are zeroed."""
    for i, s in enumerate(statuses):
        b, l = divmod(i, layers)
        got = out[l, :, b].view(np.uint16)
        if s.ok:
            assert got.tobytes() == pages[l, :, b].view(np.uint16).tobytes(), s.key
        else:
            assert not got.any(), f"{s.key} ({s.status}) left data in the page"


@pytest.fixture(scope="module")
def real():
    return real_pages(block_tokens=128)


def test_round_trip_compressed_and_raw(cluster, real):
    layout, pages = real
    nb = pages.shape[2]
    hs = hashes_for(nb, "rt")
    for codec in ("splitzip", "raw"):
        st = open_store(cluster, layout, codec=codec, namespace=codec)
        res = st.put_blocks(pages, range(nb), hs)
        assert counts(res) == {"OK": nb * 5}
        assert st.lookup_prefix(hs) == nb
        out = layout.allocate(nb)
        res = st.get_blocks(out, range(nb), hs)
        assert counts(res) == {"OK": nb * 5}
        assert out.view(np.uint16).tobytes() == pages.view(np.uint16).tobytes()
        ratio = st.stored_bytes_put / st.raw_bytes_put
        if codec == "splitzip":
            assert ratio < 0.765, ratio  # 16 KiB pages: 0.75 + frame headers
        else:
            assert ratio == 1.0
        st.remove_blocks(hs)
        st.close()


def stored_value(st, key):
    """The whole value of a chunk as the store holds it (head + tail object)."""
    head = st.client.get(key)
    tail = st.client.get(key + TAIL) if st.config.size_class_split else b""
    return bytes(head) + bytes(tail or b"")


def test_capacity_mode_round_trip_smaller_than_fast(cluster, real):
    """Each mode round-trips the real KV byte for byte; the values are coded in
    the store's mode (the frames say so) and capacity stores fewer bytes."""
    layout, pages = real
    nb = pages.shape[2]
    hs = hashes_for(nb, "modes")
    stored = {}
    for mode in ("fast", "capacity"):
        st = open_store(cluster, layout, codec_options={"mode": mode}, namespace="m-" + mode)
        assert st.config.mode == mode
        res = st.put_blocks(pages, range(nb), hs)
        assert counts(res) == {"OK": nb * 5}
        assert sum(s.stored_bytes for s in res) == st.stored_bytes_put
        for key in st.keys(hs)[::7]:
            assert set(chunk.frame_modes(key, stored_value(st, key))) == {mode}, key
        out = layout.allocate(nb)
        res = st.get_blocks(out, range(nb), hs)
        assert counts(res) == {"OK": nb * 5}
        assert out.view(np.uint16).tobytes() == pages.view(np.uint16).tobytes()
        stored[mode] = st.stored_bytes_put
        st.remove_blocks(hs)
        st.close()
    raw = pages.nbytes
    # 16 KiB chunks of the real KV: fast 0.765 of raw, capacity 0.700.
    assert stored["fast"] < 0.78 * raw, stored["fast"] / raw
    assert stored["capacity"] < 0.93 * stored["fast"], stored["capacity"] / stored["fast"]


def test_mixed_mode_store_reads_both(cluster, real):
    """Stores configured in either mode read what the other wrote: the mode
    is recorded per frame, so a reader needs no flag."""
    layout, pages = real
    nb = pages.shape[2]
    half = nb // 2
    hs = hashes_for(nb, "mixed")
    fast = open_store(cluster, layout, codec_options={"mode": "fast"}, namespace="mixed")
    cap = open_store(cluster, layout, codec_options={"mode": "capacity"}, namespace="mixed")
    assert counts(fast.put_blocks(pages, range(half), hs[:half])) == {"OK": half * 5}
    assert counts(cap.put_blocks(pages, range(half, nb), hs[half:])) == {"OK": (nb - half) * 5}
    assert chunk.frame_modes(fast.keys(hs[:1])[0], stored_value(fast, fast.keys(hs[:1])[0])) == \
        ["fast", "fast"]
    assert chunk.frame_modes(cap.keys(hs[-1:])[0], stored_value(cap, cap.keys(hs[-1:])[0])) == \
        ["capacity", "capacity"]
    for reader in (fast, cap):
        out = layout.allocate(nb)
        res = reader.get_blocks(out, range(nb), hs)
        assert counts(res) == {"OK": nb * 5}
        assert out.view(np.uint16).tobytes() == pages.view(np.uint16).tobytes()
    fast.remove_blocks(hs)
    fast.close()
    cap.close()


def test_partial_prefix_and_layer_subset(cluster, real):
    layout, pages = real
    hs = hashes_for(8, "partial")
    st = open_store(cluster, layout)
    assert counts(st.put_blocks(pages, range(4), hs[:4])) == {"OK": 20}
    assert st.lookup_prefix(hs) == 4
    out = layout.allocate(pages.shape[2])
    # Decode blocks 0..3 into other page slots (10..13): a paged cache puts
    # a hit wherever it has free pages.
    res = st.get_blocks(out, [10, 11, 12, 13], hs[:4], layers=[1, 3])
    assert counts(res) == {"OK": 8}
    for b, src in zip(range(10, 14), range(4)):
        for l in (1, 3):
            assert out[l, :, b].tobytes() == pages[l, :, src].tobytes()
    assert not out[0].view(np.uint16).any() and not out[2].view(np.uint16).any()
    res = st.get_blocks(out, [0, 1], hs[4:6])
    assert counts(res) == {"NOT_FOUND": 10}
    st.remove_blocks(hs)
    st.close()


def test_corruption_through_the_store_api_is_refused_by_key(cluster, real):
    layout, pages = real
    nb = 16
    hs = hashes_for(nb, "corrupt")
    st = open_store(cluster, layout)
    assert counts(st.put_blocks(pages, range(nb), hs)) == {"OK": nb * 5}
    keys = st.keys(hs)
    rng = np.random.default_rng(7)
    corrupted = set()
    for key in rng.choice(keys, 12, replace=False):
        val = bytearray(st.client.get(key))
        for pos in rng.integers(0, len(val), 1 + int(rng.integers(0, 3))):
            val[pos] ^= 1 << int(rng.integers(0, 8))
        assert st.client.upsert(key, bytes(val)) == 0
        corrupted.add(key)
    # A valid value copied under another key (a misdirected write or replica).
    assert st.client.upsert(keys[1], st.client.get(keys[0])) == 0
    corrupted.add(keys[1])
    out = layout.allocate(nb)
    res = st.get_blocks(out, range(nb), hs)
    bad = {s.key for s in res if s.status == "CORRUPT"}
    assert bad == corrupted
    assert all(s.ok for s in res if s.key not in corrupted)
    assert_pages(out, pages, res, 5)
    # Re-putting the refused chunks repairs them.
    st.remove_blocks(hs)
    assert counts(st.put_blocks(pages, range(nb), hs)) == {"OK": nb * 5}
    assert counts(st.get_blocks(out, range(nb), hs)) == {"OK": nb * 5}
    st.remove_blocks(hs)
    st.close()


def test_filling_past_capacity_never_crashes(cluster, real):
    layout, pages = real
    nb = pages.shape[2]
    st = open_store(cluster, layout, codec="raw", namespace="fill")
    # 2 x 48 MiB of segments; 20 rounds of the 5 MiB sample = 100 MiB raw.
    all_hs, all_res = [], []
    for r in range(20):
        hs = hashes_for(nb, f"fill{r}")
        res = st.put_blocks(pages, range(nb), hs)
        all_hs += hs
        all_res += res
    c = counts(all_res)
    assert set(c) <= {"OK", "STORE_ERROR"}
    assert c["OK"] >= 0.8 * 96 * MiB / (2 * layout.page_bytes)
    out = layout.allocate(nb)
    seen = collections.Counter()
    for r in range(20):
        res = st.get_blocks(out, range(nb), all_hs[r * nb:(r + 1) * nb])
        seen.update(counts(res))
        assert_pages(out, pages, res, 5)
    assert seen["OK"] > 0 and seen["NOT_FOUND"] > 0, seen  # some were evicted
    assert set(seen) <= {"OK", "NOT_FOUND"}
    st.client.remove_all(True)
    st.close()


def test_bad_input(cluster, real):
    layout, pages = real
    st = open_store(cluster, layout)
    with pytest.raises(ValueError, match="shape"):
        st.put_blocks(pages[:2], [0], ["00" * 16])
    with pytest.raises(ValueError, match="out of range"):
        st.put_blocks(pages, [pages.shape[2]], ["00" * 16])
    with pytest.raises(ValueError, match="differ"):
        st.get_blocks(pages, [0, 1], ["00" * 16])
    with pytest.raises(ValueError, match="repeats"):
        st.get_blocks(pages, [3, 3], ["00" * 16, "11" * 16])
    with pytest.raises(ValueError, match="dtype|hold"):
        st.put_blocks(pages.view(np.float16), [0], ["00" * 16])
    st.close()
    for bad in ({"mode": "turbo"}, {"mode": "Capacity"}, {"mode": None}, {"mode": 1}):
        with pytest.raises(ValueError, match="'fast' or 'capacity'"):
            OffloadConfig(codec_options=bad).validate()
        with pytest.raises(ValueError, match="'fast' or 'capacity'"):  # before connecting
            KVOffloadStore(OffloadConfig(master=cluster.master, codec_options=bad), "m", layout)
    with pytest.raises(ValueError, match="unknown codec options"):
        OffloadConfig(codec_options={"mode": "capacity", "level": 3}).validate()
    with pytest.raises(ValueError, match="codec='raw'"):
        OffloadConfig(codec="raw", codec_options={"mode": "capacity"}).validate()
    for good in ({}, {"mode": "fast"}, {"mode": "capacity"}):
        OffloadConfig(codec_options=good).validate()
    with pytest.raises(ValueError):
        OffloadConfig(codec="zstd").validate()


def wait_until(pred, timeout=20):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if pred():
            return True
        time.sleep(0.3)
    return False


def test_store_client_killed_then_master_restarted(cluster, real):
    """Runs last in this module: it kills a store client and the master."""
    layout, pages = real
    nb = pages.shape[2]
    hs = hashes_for(nb, "fault")
    st = open_store(cluster, layout)
    assert counts(st.put_blocks(pages, range(nb), hs)) == {"OK": nb * 5}
    cluster("kill-server", "0")
    out = layout.allocate(nb)
    # Until the master notices (client TTL 2 s) gets fail in transfer; after,
    # the chunks on the dead client are gone. Never wrong data.
    seen = collections.Counter()
    for _ in range(6):
        res = st.get_blocks(out, range(nb), hs)
        seen.update(counts(res))
        assert_pages(out, pages, res, 5)
        time.sleep(0.5)
    assert seen["OK"] > 0 and (seen["NOT_FOUND"] + seen["STORE_ERROR"]) > 0, seen
    assert "CORRUPT" not in seen
    # Re-put recovers everything onto the surviving client.
    assert wait_until(lambda: counts(st.put_blocks(pages, range(nb), hs)) == {"OK": nb * 5})
    res = st.get_blocks(out, range(nb), hs)
    assert counts(res) == {"OK": nb * 5}
    assert out.tobytes() == pages.tobytes()
    cluster("start-server", "0")
    # Master restart: its metadata is gone, so every chunk is NOT_FOUND (or
    # fails while reconnecting); store clients re-register and puts work again.
    cluster("restart-master")
    res = st.get_blocks(out, range(nb), hs)
    assert set(counts(res)) <= {"NOT_FOUND", "STORE_ERROR"}
    assert_pages(out, pages, res, 5)
    assert wait_until(lambda: counts(st.put_blocks(pages, range(nb), hs)) == {"OK": nb * 5})
    res = st.get_blocks(out, range(nb), hs)
    assert counts(res) == {"OK": nb * 5} and out.tobytes() == pages.tobytes()
    st.close()


def test_size_class_split(cluster, real):
    from splitzip_kv.offload.store import TAIL, size_class_floor
    assert [size_class_floor(n) for n in (7, 16, 49152, 49153, 49427, 53247, 65536)] == \
        [7, 16, 49152, 49152, 49152, 49152, 65536]
    layout, pages = real
    hs = hashes_for(4, "split")
    st = open_store(cluster, layout)
    assert counts(st.put_blocks(pages, range(4), hs)) == {"OK": 20}
    keys = st.keys(hs)
    for k in keys:
        head, tail = st.client.get_size(k), st.client.get_size(k + TAIL)
        assert head == size_class_floor(head) and 0 < tail < head // 8, (head, tail)
    # A value whose tail object is gone is reported missing, not returned.
    assert st.client.remove(keys[3] + TAIL, True) == 0
    out = layout.allocate(4)
    res = st.get_blocks(out, range(4), hs)
    assert [s.status for s in res].count("NOT_FOUND") == 1 and res[3].status == "NOT_FOUND"
    assert_pages(out, pages, res, 5)
    st.remove_blocks(hs)
    assert st.client.batch_is_exist(keys + [k + TAIL for k in keys]) == [0] * 40
    st.close()


def test_quickstart_example_runs(cluster):
    import subprocess
    import sys
    import os
    r = subprocess.run([sys.executable, str(pathlib.Path(__file__).parents[2] / "examples" /
                                            "offload" / "quickstart.py")],
                       env=dict(os.environ, SZOF_MASTER=cluster.master), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "6 blocks hit" in r.stdout
