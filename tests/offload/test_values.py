# SPDX-License-Identifier: Apache-2.0
"""KVOffloadStore.put_values / get_values (what the engine tiers use for
Mooncake Store) against the real deployment on loopback: round trip in both
modes, the frames handed back for a host cache, corruption refused and
dropped, concurrent callers, and a store client killed mid-run (misses,
never wrong data)."""

import collections
import threading
import time

import numpy as np
import pytest

import splitzip_kv as splitzip
from splitzip_kv.offload import KVOffloadStore, OffloadConfig
from splitzip_kv.offload.store import TAIL
from conftest import real_pages

MiB = 1 << 20


def rows_of_real_kv(block_tokens=32):
    """[pages, page bytes] uint8: each page is every layer's K then V of
    block_tokens tokens of the bundled real KV (the vLLM tier's row)."""
    layout, pages = real_pages(block_tokens=block_tokens)
    # [layers, 2, blocks, ...] -> [blocks, layers, 2, ...]
    return np.ascontiguousarray(pages.transpose(2, 0, 1, 3, 4, 5)).reshape(pages.shape[2], -1).view(np.uint8)


def open_values(cluster, **kw):
    kw.setdefault("group_bytes", 1 * MiB)
    return KVOffloadStore(OffloadConfig(master=cluster.master, **kw), "stories260k-values")


def counts(st):
    return collections.Counter(s.status for s in st)


@pytest.fixture(scope="module")
def rows():
    return rows_of_real_kv()


@pytest.mark.parametrize("n_parts", [1, 2])
@pytest.mark.parametrize("mode", ["fast", "capacity"])
def test_values_round_trip_and_frames(cluster, rows, mode, n_parts):
    st = open_values(cluster, codec_options={"mode": mode}, namespace=f"v{n_parts}{mode}")
    n, rb = rows.shape
    elems = rb // 2 // n_parts
    keys = [f"page{i:04d}" for i in range(n)]
    offs = np.arange(n * n_parts, dtype=np.uint64) * np.uint64(rb // n_parts)
    res, frames = st.put_values(keys, rows, offs, n_parts, elems, dtype="bf16", frames=True)
    assert counts(res) == {"OK": n}
    assert st.exist_values(keys) == [True] * n
    # The frames are compress_batch's frames of the same parts.
    want = splitzip.compress_batch(list(rows.reshape(n * n_parts, -1)), dtype="bf16", checksum=True,
                                   mode=mode)
    assert [f for fs in frames for f in fs] == want
    assert st.stored_bytes_put < 0.8 * rows.nbytes
    out = np.zeros_like(rows)
    # Decoded into other places than they came from (every other page).
    order = np.arange(n)[::-1]
    got = st.get_values([keys[i] for i in order], out, offs, n_parts, elems, dtype="bf16")
    assert counts(got) == {"OK": n}
    assert out.tobytes() == rows[order].tobytes()
    st.remove_values(keys)
    assert st.exist_values(keys) == [False] * n
    miss = st.get_values(keys[:3], out, offs[:3 * n_parts], n_parts, elems, dtype="bf16")
    assert counts(miss) == {"NOT_FOUND": 3}
    assert not out[:3].any()
    st.close()


def test_corrupt_value_is_refused_dropped_and_repaired(cluster, rows):
    st = open_values(cluster, namespace="vcorrupt")
    n, rb = rows.shape
    keys = [f"p{i}" for i in range(n)]
    offs = np.arange(n, dtype=np.uint64) * np.uint64(rb)
    assert counts(st.put_values(keys, rows, offs, 1, rb // 2, dtype="bf16")[0]) == {"OK": n}
    vk = st.value_keys(keys)
    rng = np.random.default_rng(3)
    bad = set()
    for i in rng.choice(n, 6, replace=False).tolist():
        val = bytearray(st.client.get(vk[i]))
        val[int(rng.integers(0, len(val)))] ^= 1 << int(rng.integers(0, 8))
        assert st.client.upsert(vk[i], bytes(val)) == 0
        bad.add(i)
    # A whole valid value under another key.
    assert st.client.upsert(vk[1], st.client.get(vk[0])) == 0
    assert st.client.upsert(vk[1] + TAIL, st.client.get(vk[0] + TAIL)) == 0
    bad.add(1)
    out = np.zeros_like(rows)
    res = st.get_values(keys, out, offs, 1, rb // 2, dtype="bf16")
    assert {i for i, s in enumerate(res) if s.status == "CORRUPT"} == bad
    for i, s in enumerate(res):
        if s.ok:
            assert out[i].tobytes() == rows[i].tobytes()
        else:
            assert not out[i].any()
    # Refused values were removed, so a put replaces them.
    assert [st.exist_values([keys[i]])[0] for i in sorted(bad)] == [False] * len(bad)
    assert counts(st.put_values(keys, rows, offs, 1, rb // 2, dtype="bf16")[0]) == {"OK": n}
    out[...] = 0
    assert counts(st.get_values(keys, out, offs, 1, rb // 2, dtype="bf16")) == {"OK": n}
    assert out.tobytes() == rows.tobytes()
    st.remove_values(keys)
    st.close()


def test_bad_value_arguments(cluster, rows):
    st = open_values(cluster, namespace="vbad")
    n, rb = rows.shape
    offs = np.arange(n, dtype=np.uint64) * np.uint64(rb)
    with pytest.raises(ValueError, match="part offsets"):
        st.put_values(["a", "b"], rows, offs, 1, rb // 2, dtype="bf16")
    with pytest.raises(ValueError, match="dtype"):
        st.put_values(["a"], rows, offs[:1], 1, rb // 2, dtype="bfloat16")
    with pytest.raises(ValueError, match="share"):
        st.get_values(["a", "b"], rows.copy(), [0, 0], 1, rb // 2, dtype="bf16")
    with pytest.raises(ValueError, match="PagedKVLayout"):
        st.put_blocks(rows, [0], ["00"])
    with pytest.raises(ValueError, match="model"):
        KVOffloadStore(OffloadConfig(master=cluster.master), "a/b")
    st.close()


def test_concurrent_callers(cluster, rows):
    """Two threads put and get through one store at once (an engine's
    backup and prefetch threads): each call takes its own staging."""
    st = open_values(cluster, namespace="vthreads")
    n, rb = rows.shape
    errors, wrong = [], [0]

    def run(tag):
        try:
            out = np.zeros_like(rows)
            offs = np.arange(n, dtype=np.uint64) * np.uint64(rb)
            for r in range(6):
                keys = [f"{tag}-{r}-{i}" for i in range(n)]
                assert counts(st.put_values(keys, rows, offs, 1, rb // 2, dtype="bf16")[0]) == {"OK": n}
                got = st.get_values(keys, out, offs, 1, rb // 2, dtype="bf16")
                wrong[0] += sum(1 for i, s in enumerate(got)
                                if s.ok and out[i].tobytes() != rows[i].tobytes())
                assert counts(got) == {"OK": n}
                st.remove_values(keys)
        except Exception as e:  # surfaced below
            errors.append(e)

    ts = [threading.Thread(target=run, args=(t,)) for t in ("a", "b")]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    assert wrong[0] == 0
    st.close()


def test_store_client_killed_gives_misses_never_data(cluster, rows):
    """A store client is SIGKILLed while values are read: each value is then
    OK with its exact bytes, or a miss with zeroed parts."""
    st = open_values(cluster, namespace="vkill")
    n, rb = rows.shape
    keys = [f"k{i}" for i in range(n)]
    offs = np.arange(n, dtype=np.uint64) * np.uint64(rb)
    assert counts(st.put_values(keys, rows, offs, 1, rb // 2, dtype="bf16")[0]) == {"OK": n}
    cluster("kill-server", "1")
    try:
        seen = collections.Counter()
        out = np.zeros_like(rows)
        for _ in range(6):
            out[...] = 0xEE
            res = st.get_values(keys, out, offs, 1, rb // 2, dtype="bf16", drop_corrupt=False)
            seen.update(counts(res))
            for i, s in enumerate(res):
                if s.ok:
                    assert out[i].tobytes() == rows[i].tobytes()
                else:
                    assert not out[i].any(), s
            time.sleep(0.5)
        assert "CORRUPT" not in seen and seen["OK"] > 0
        assert seen["NOT_FOUND"] + seen["STORE_ERROR"] > 0, seen
    finally:
        cluster("start-server", "1")
    st.remove_values(keys)
    st.close()
