# SPDX-License-Identifier: Apache-2.0
"""Blocks held per GiB of tier budget and Python cost per page, through each
engine's own objects (run by scripts/engines_test.sh --bench, one engine per
venv; bench/engines/report.py makes bench/results/engines.md).

vllm:   the raw tier is vLLM's CPU primary tier given the budget as
        cpu_bytes_to_use (its LRU fills until it evicts); splitzip is
        SplitzipTier with the same budget as capacity_bytes, filled through
        the TieringOffloadingManager's cascade.
sglang: the raw tier is SGLang's own HiCacheFile backend with the budget as
        max_size (its LRU evictor); splitzip is SplitzipHiCacheStorage with
        the same budget, both filled through HiCacheController's page
        functions (interface_v1 for splitzip, the default for HiCacheFile).

Python per page: (engine call - the extension's batch call on the same pages)
/ pages, best of --reps runs, the two alternating within each run: what the
tier (and the engine's own call path) adds around the native
compress_batch / decompress_batch.
"""

import argparse
import collections
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "python/tests/engines"))
import kvdata  # noqa: E402

import splitzip_kv as splitzip  # noqa: E402
from splitzip_kv import _core  # noqa: E402

MODES = ("fast", "capacity")


def best(fn, reps):
    # CPU seconds of the whole process (all its threads): the tier's worker
    # thread counts, other programs on the shared machine do not.
    t = []
    for _ in range(reps):
        t0 = time.process_time()
        fn()
        t.append(time.process_time() - t0)
    return min(t)


# -- vLLM ---------------------------------------------------------------------

def probe_pages():
    """4 KiB pages of real KV (stories260K), for the per-page Python cost:
    with the codec at ~1-3 us a page, what the tier adds stands out."""
    return kvdata.pages("stories260k", 32).reshape(-1, 4096)


class _Skip(Exception):
    pass


def bench_vllm(name, reps, timing=False, raw_only=False):
    from vllm.v1.kv_offload.tiering.base import TransferJob
    from vllm_harness import Engine, key, splitzip_tier
    bt = 16 if name == "smollm2" else 32
    pages = probe_pages() if timing else kvdata.pages(name, bt)
    cb = pages.shape[1]
    budget_chunks = 128
    n = 64  # pages per timed job
    budget = budget_chunks * cb
    rows = []
    # Raw: the primary tier with the budget, filled until it evicts.
    eng = Engine(cb, budget_chunks, []) if not timing else None
    try:
        if timing:
            raise _Skip
        data = {key(i): kvdata.tagged(pages, i) for i in range(3 * budget_chunks)}
        ks = list(data)
        for i in range(0, len(ks), 4):
            eng.store(ks[i:i + 4], data)
        got = eng.load(ks[-budget_chunks:])
        raw_held = sum(1 for k in ks if k in got)
        exact = all(np.array_equal(got[k], data[k]) for k in got)
        rows.append({"engine": "vllm", "data": name, "tier": "vLLM CPU tier (raw)", "mode": "raw",
                     "budget_bytes": budget, "page_bytes": cb, "tokens_per_page": bt,
                     "held": raw_held, "exact": exact, "num_chunks": eng.spec.num_chunks})
    except _Skip:
        pass
    finally:
        if eng is not None:
            eng.close()
    for mode in () if raw_only else MODES:
        # The probe codes on one thread, in the tier and in the baseline alike.
        eng = Engine(cb, n + 4, [splitzip_tier(budget, mode, **({"threads": 1} if timing else {}))])
        try:
            tier = eng.tiers[0]
            data = {key(i): kvdata.tagged(pages, i) for i in range(3 * budget_chunks)}
            ks = list(data)
            row = {"engine": "vllm", "data": "4 KiB probe" if timing else name,
                   "tier": "SplitzipTier", "mode": mode, "budget_bytes": budget,
                   "page_bytes": cb, "tokens_per_page": bt}
            if not timing:
                for i in range(0, len(ks), 4):
                    eng.store(ks[i:i + 4], data)
                    eng.settle()
                held = [k for k in ks if k in tier.cache]
                used = tier.cache.used_bytes
                got = {}
                for i in range(0, len(held), 4):
                    got.update(eng.load(held[i:i + 4]))
                exact = len(got) == len(held) and all(np.array_equal(got[k], data[k])
                                                      for k in got)
                row.update({"held": len(held), "exact": exact, "used_bytes": used})
            else:
                row.update(time_vllm_tier(eng, tier, data, ks, n, reps, TransferJob, key))
            rows.append(row)
        finally:
            eng.close()
    return rows


def held_out_modes(pages, workdir):
    """(mode label, tier kwargs, pages stored) for the table-set rows: the
    pages of the second half (smollm2's second sequence, the bundled KV's
    sequences 8-15) in capacity mode with per-block tables and with one set
    calibrated on the first half (a file, as a deployment names it)."""
    path = Path(workdir) / "model.szct"
    _, held = kvdata.held_out_tables(pages, path)
    return [("capacity, held-out pages", {"mode": "capacity"}, held),
            ("capacity + set, held-out pages", {"mode": None, "tables": str(path)}, held)]


def bench_vllm_sets(name, workdir):
    """Blocks held with a calibrated set against the raw tier and against
    per-block capacity tables, on held-out pages."""
    from vllm_harness import Engine, key, splitzip_tier
    bt = 16 if name == "smollm2" else 32
    pages = kvdata.pages(name, bt)
    cb = pages.shape[1]
    budget_chunks = 128
    budget = budget_chunks * cb
    rows = []
    for label, kw, held_pages in held_out_modes(pages, workdir):
        mode = kw.pop("mode")
        eng = Engine(cb, 8, [splitzip_tier(budget, mode, **kw)])
        try:
            tier = eng.tiers[0]
            data = {key(i): kvdata.tagged(held_pages, i) for i in range(3 * budget_chunks)}
            ks = list(data)
            for i in range(0, len(ks), 4):
                eng.store(ks[i:i + 4], data)
                eng.settle()
            held = [k for k in ks if k in tier.cache]
            got = {}
            for i in range(0, len(held), 4):
                got.update(eng.load(held[i:i + 4]))
            exact = len(got) == len(held) and all(np.array_equal(got[k], data[k]) for k in got)
            rows.append({"engine": "vllm", "data": name, "tier": "SplitzipTier", "mode": label,
                         "budget_bytes": budget, "page_bytes": cb, "tokens_per_page": bt,
                         "held": len(held), "exact": exact, "used_bytes": tier.cache.used_bytes})
        finally:
            eng.close()
    return rows


def bench_vllm_pool(name, workdir):
    """SplitzipTier with store="mooncake" in a real pool (one store client
    whose segment is the budget, rounded up to whole MiB), filled with 3x
    the budget through the manager, against raw pages put straight into a
    pool of the same size (Mooncake's own eviction in both). *held*: values
    read back whole by the tier's get after the fill (Mooncake evicts to make
    room for a put even with its watermark eviction off, and may evict a
    value's tail object but keep its head: that value is a miss), each
    compared with what was stored."""
    import math
    from vllm_harness import Engine, key, splitzip_tier
    from mooncake_cluster import Cluster
    from splitzip_kv.offload import KVOffloadStore, OffloadConfig
    bt = 16 if name == "smollm2" else 32
    pages = kvdata.pages(name, bt)
    cb = pages.shape[1]
    # Mooncake refuses segments below a few MiB (8 MiB: BUFFER_TOO_SMALL).
    mib = max(16, math.ceil(128 * cb / (1 << 20)))
    budget = mib << 20
    n_keys = 3 * budget // cb
    data = {key(i): kvdata.tagged(pages, i) for i in range(n_keys)}
    ks = list(data)
    rows = []
    for mode in ("raw",) + MODES:
        c = Cluster(Path(workdir) / f"pool-{name}-{mode}", 50781)
        # No watermark eviction (what is left would depend on its cycle).
        c.env["SZOF_MASTER_FLAGS"] = "--eviction_high_watermark_ratio=1.0"
        c("up", "--servers", "1", "--segment-mib", str(mib))
        try:
            row = {"engine": "vllm", "data": name, "mode": mode, "budget_bytes": budget,
                   "page_bytes": cb, "tokens_per_page": bt, "pool": True}
            if mode == "raw":
                st = KVOffloadStore(OffloadConfig(master=c.master, codec="raw"), "bench")
                buf = np.stack([data[k] for k in ks])
                st.register(buf)
                for i in range(0, n_keys, 4):
                    st.client.batch_put_from([k.hex() for k in ks[i:i + 4]],
                                             [buf[j].ctypes.data for j in range(i, min(i + 4, n_keys))],
                                             [cb] * len(ks[i:i + 4]), st._rc)
                held = [i for i, e in enumerate(st.client.batch_is_exist([k.hex() for k in ks])) if e == 1]
                out = np.zeros(cb, np.uint8)
                st.register(out)
                exact = all(st.client.get_into(ks[i].hex(), out.ctypes.data, cb) == cb and
                            np.array_equal(out, buf[i]) for i in held)
                row.update({"tier": "Mooncake Store, raw pages", "held": len(held), "exact": exact})
                st.close()
            else:
                eng = Engine(cb, 4, [splitzip_tier(0, mode, store="mooncake",
                                                   mooncake={"master": c.master})])
                try:
                    tier = eng.tiers[0]
                    for i in range(0, n_keys, 4):
                        eng.store(ks[i:i + 4], data)
                        eng.settle()
                    held = [k for k, e in zip(ks, tier.remote.exist_values([k.hex() for k in ks])) if e]
                    # Read back with the tier's own get (a load through the manager
                    # promotes, and the primary's evictions cascade new puts that
                    # make Mooncake evict held values).
                    out = np.zeros((16, cb), np.uint8)
                    misses = collections.Counter()
                    wrong = 0
                    for i in range(0, len(held), 16):
                        grp = held[i:i + 16]
                        res = tier.remote.get_values([k.hex() for k in grp], out,
                                                     np.arange(len(grp)) * cb, 1, cb // 2,
                                                     dtype=tier.dtype, drop_corrupt=False)
                        for j, (k, r) in enumerate(zip(grp, res)):
                            if not r.ok:
                                misses[f"{r.status} {r.detail}"] += 1
                            elif not np.array_equal(out[j], data[k]):
                                wrong += 1
                    if misses:
                        print(f"pool {name} {mode}: wrong {wrong}, not read {dict(misses)}", flush=True)
                    # Held: values read back whole. Mooncake may evict a value's
                    # tail object and keep its head: such a value is a miss.
                    row.update({"tier": "SplitzipTier, store mooncake",
                                "held": len(held) - sum(misses.values()), "exact": wrong == 0,
                                "heads_present": len(held), "not_read": dict(misses)})
                finally:
                    eng.close()
            rows.append(row)
        finally:
            c("down")
    return rows


def time_vllm_tier(eng, tier, data, ks, n, reps, TransferJob, key):
    """Python per page: submit_store + drain_jobs + get_finished_jobs of an
    n-chunk job against compress_batch of the same rows; submit_load against
    decompress_batch into the same rows."""
    ids = np.arange(n, dtype=np.int64)
    for j, c in enumerate(ids):
        eng.rows[int(c)] = data[ks[j]]
    jid = [10_000_000]
    jkeys = [key(900_000 + j) for j in range(n)]

    def store_job():
        tier.cache.clear()
        jid[0] += 1
        tier.submit_store(TransferJob(jid[0], jkeys, ids, False, None))
        tier.drain_jobs()
        assert all(r.success for r in tier.get_finished_jobs())

    def codec_store():  # the extension's batch call itself
        tier.cache.clear()
        _core.compress_batch([tier._rows[int(c)] for c in ids], tier.cache.dtype, None, 10, True,
                             None, 1, tier.cache._mode_id, None)

    def load_job():
        jid[0] += 1
        tier.submit_load(TransferJob(jid[0], jkeys, ids, True, None))
        tier.drain_jobs()
        assert all(r.success for r in tier.get_finished_jobs())

    store_job()
    frames = [tier.cache.frames(k)[0] for k in jkeys]

    def codec_load():  # the extension's batch call itself (no argument checks)
        _core.decompress_batch(frames, [tier._rows[int(c)] for c in ids], None, 1, 0, True)

    ts = {"store": [], "cstore": [], "load": [], "cload": []}
    for _ in range(reps):
        ts["store"].append(best(store_job, 1))
        ts["cstore"].append(best(codec_store, 1))
        store_job()
        ts["load"].append(best(load_job, 1))
        ts["cload"].append(best(codec_load, 1))
    st = {k: min(v) for k, v in ts.items()}
    return {"py_store_us": (st["store"] - st["cstore"]) / n * 1e6,
            "py_load_us": (st["load"] - st["cload"]) / n * 1e6,
            "codec_store_us": st["cstore"] / n * 1e6, "codec_load_us": st["cload"] / n * 1e6}


# -- SGLang -------------------------------------------------------------------

def bench_sglang(name, reps, workdir, timing=False, sets_only=False):
    from sglang_harness import Controller, host_pool, splitzip_extra
    layers, heads, dim = {"smollm2": (30, 3, 64), "stories260k": (5, 4, 8)}[name]
    ps = 16 if name == "smollm2" else 32
    pages = kvdata.pages(name, ps)
    if timing:   # 4 KiB pages: one layer of 32 tokens x 4 heads x 8
        layers, pages = 1, probe_pages()
    pb = pages.shape[1]
    budget_pages = 128
    n = 64  # pages per timed job
    budget = budget_pages * pb
    n_keys = 3 * budget_pages
    data = [kvdata.tagged(pages, i) for i in range(n_keys)]
    keys = [f"{i:032x}" for i in range(n_keys)]
    rows = []

    def fill(ctl):
        for i in range(0, n_keys, 4):
            ctl.write_pages(range(4), data[i:i + 4])
            ctl.backup(keys[i:i + 4], range(4))

    def held_exact(ctl, held):
        ok = True
        for i in range(0, len(held), 8):
            grp = held[i:i + 8]
            ctl.pool.kv_buffer.zero_()
            got = ctl.prefetch([keys[j] for j in grp], range(len(grp)))
            ok &= got == len(grp)
            for s, j in enumerate(grp[:got]):
                ok &= bool(np.array_equal(ctl.read_page(s), data[j]))
        return ok

    # Raw: SGLang's HiCacheFile with the budget as its LRU byte cap.
    if timing:
        return [time_sglang(Controller, host_pool, splitzip_extra, (layers, heads, dim, ps),
                            budget, data, n, reps, v1, mode)
                for mode in MODES for v1 in (1, 0)]
    fdir = Path(workdir) / "hicache-file"
    fdir.mkdir(parents=True, exist_ok=True)
    os.environ["SGLANG_HICACHE_FILE_BACKEND_STORAGE_DIR"] = str(fdir)
    pool = host_pool("page_first", layers, heads, dim, ps, 16)
    ctl = Controller("file", {"max_size": budget}, pool)
    ctl.backend.clear()
    fill(ctl)
    held = [i for i in range(n_keys) if ctl.backend.exists(keys[i])]
    rows.append({"engine": "sglang", "data": name, "tier": "SGLang HiCacheFile (raw)",
                 "mode": "raw", "budget_bytes": budget, "page_bytes": pb, "tokens_per_page": ps,
                 "held": len(held), "exact": held_exact(ctl, held)})
    ctl.backend.clear()
    for mode in () if sets_only else MODES:
        for v1 in (1, 0):
            pool = host_pool("page_first", layers, heads, dim, ps, 2 * n)
            ctl = Controller("dynamic", splitzip_extra(budget, mode, v1), pool)
            fill(ctl)
            c = ctl.backend.cache
            held = [i for i in range(n_keys) if keys[i] in c]
            row = {"engine": "sglang", "data": name, "mode": mode,
                   "tier": "SplitzipHiCacheStorage" + (" (interface_v1)" if v1 else " (default)"),
                   "budget_bytes": budget, "page_bytes": pb, "tokens_per_page": ps,
                   "held": len(held), "exact": held_exact(ctl, held), "used_bytes": c.used_bytes}
            rows.append(row)
            ctl.backend.close()
    for label, kw, held_pages in held_out_modes(pages, workdir):
        hdata = [kvdata.tagged(held_pages, i) for i in range(n_keys)]
        data[:] = hdata  # fill() and held_exact() read `data`
        pool = host_pool("page_first", layers, heads, dim, ps, 2 * n)
        ctl = Controller("dynamic", splitzip_extra(budget, kw.pop("mode"), 1, **kw), pool)
        fill(ctl)
        c = ctl.backend.cache
        held = [i for i in range(n_keys) if keys[i] in c]
        rows.append({"engine": "sglang", "data": name, "mode": label,
                     "tier": "SplitzipHiCacheStorage (interface_v1)",
                     "budget_bytes": budget, "page_bytes": pb, "tokens_per_page": ps,
                     "held": len(held), "exact": held_exact(ctl, held), "used_bytes": c.used_bytes})
        ctl.backend.close()
    return rows


def time_sglang(Controller, host_pool, splitzip_extra, shape, budget, data, n, reps, v1, mode):
    """Python per page through the controller's page functions (n pages)
    against the codec batch calls on the same K/V parts, one codec thread."""
    layers, heads, dim, ps = shape
    pool = host_pool("page_first", layers, heads, dim, ps, 2 * n)
    ctl = Controller("dynamic", splitzip_extra(budget, mode, v1, threads=1), pool)
    c = ctl.backend.cache
    ks = [f"b{j:031x}" for j in range(n)]
    ctl.write_pages(range(n), [data[j] for j in range(n)])
    parts, _, _, per = ctl.backend._page_meta(ks, ctl.indices(range(n)))
    frames = []

    # host_indices as the controller holds them (made outside the timing).
    at_a, at_b = ctl.indices(range(n)), ctl.indices(range(n, 2 * n))

    def backup():
        for k in ks:
            c.remove(k)
        assert ctl.backup(ks, None, at_a)

    def codec_backup():  # the extension's batch call itself (no argument checks)
        for k in ks:
            c.remove(k)
        frames[:] = _core.compress_batch(parts, c.dtype, None, 10, True, None, 1, c._mode_id, None)

    def prefetch():
        assert ctl.prefetch(ks, None, at_b) == n

    outs = [p.copy() for p in parts]

    def codec_prefetch():
        _core.decompress_batch(frames, outs, None, 1, 0, True)

    ts = {"store": [], "cstore": [], "load": [], "cload": []}
    for _ in range(reps):
        ts["store"].append(best(backup, 1))
        ts["cstore"].append(best(codec_backup, 1))
        backup()
        ts["load"].append(best(prefetch, 1))
        ts["cload"].append(best(codec_prefetch, 1))
    st = {k: min(v) for k, v in ts.items()}
    ctl.backend.close()
    return {"engine": "sglang", "data": "4 KiB probe", "mode": mode,
            "tier": "SplitzipHiCacheStorage" + (" (interface_v1)" if v1 else " (default)"),
            "budget_bytes": budget, "page_bytes": data[0].nbytes, "tokens_per_page": ps,
            "py_store_us": (st["store"] - st["cstore"]) / n * 1e6,
            "py_load_us": (st["load"] - st["cload"]) / n * 1e6,
            "codec_store_us": st["cstore"] / n * 1e6, "codec_load_us": st["cload"] / n * 1e6}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("engine", choices=["vllm", "sglang"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--sets-only", action="store_true",
                    help="only the raw tier and the held-out table-set rows")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="splitzip-bench-") as tmp:
        for name in kvdata.available():
            if a.engine == "vllm":
                rows += bench_vllm(name, a.reps, raw_only=a.sets_only)
                rows += bench_vllm_sets(name, tmp)
                if not a.sets_only:
                    rows += bench_vllm_pool(name, tmp)
            else:
                rows += bench_sglang(name, a.reps, tmp, sets_only=a.sets_only)
        if a.sets_only:
            pass
        elif a.engine == "vllm":
            rows += bench_vllm("stories260k", a.reps, timing=True)
        else:
            rows += bench_sglang("stories260k", a.reps, tmp, timing=True)
    if a.engine == "vllm":
        import vllm
        version = f"vllm {vllm.__version__}"
    else:
        import sglang
        version = f"sglang {sglang.__version__}"
    import torch
    meta = {"engine": a.engine, "version": version, "torch": torch.__version__,
            "splitzip": splitzip.__version__, "cpu": platform.processor() or platform.machine(),
            "loadavg": os.getloadavg()[0], "reps": a.reps,
            "date": time.strftime("%Y-%m-%d", time.gmtime())}
    Path(a.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
