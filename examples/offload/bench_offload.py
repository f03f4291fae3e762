# SPDX-License-Identifier: Apache-2.0
"""Measurements of docs/OFFLOAD.md: capacity, throughput, faults, integrity.

Every figure is a ratio to a raw baseline from the same run (the same pages
stored with codec="raw": straight from and into the caller's memory).
Runs against a cluster started by scripts/offload_cluster.sh (the variables
of its cluster.env come in through the environment); scripts/offload_bench.sh
drives the whole set. Results: one JSON line per measurement on --out.

    bench_offload.py capacity   --servers 2 --segment-mib 32
    bench_offload.py throughput --rate 1gbit --gib 1 --repeats 3
    bench_offload.py faults     --ops 10000
"""

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import time

import ml_dtypes
import numpy as np

import splitzip_kv as splitzip
from splitzip_kv.offload import KVOffloadStore, OffloadConfig, PagedKVLayout, block_hashes, chunk

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "kv" / "stories260k"
BUNDLED = ROOT / "data" / "kv" / "stories260k"
MiB = 1 << 20


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def real_kv():
    """(K, V) of all layers of the real stories260K caches as uint16 bit
    patterns [layers, seqs, 512, 4, 8]: the shared set (64 sequences) when
    present, else the bundled slice (16)."""
    d = SHARED if (SHARED / "layer04_v.bf16").exists() else BUNDLED
    k = np.stack([np.fromfile(d / f"layer{l:02d}_k.bf16", "<u2") for l in range(5)])
    v = np.stack([np.fromfile(d / f"layer{l:02d}_v.bf16", "<u2") for l in range(5)])
    seqs = k.shape[1] // (512 * 32)
    return k.reshape(5, seqs, 512, 4, 8), v.reshape(5, seqs, 512, 4, 8), str(d)


def config(**kw):
    return OffloadConfig(master=os.environ["SZOF_MASTER"],
                         local_hostname=os.environ.get("SZOF_CLIENT_HOST", "127.0.0.1"), **kw)


def counts(res):
    return dict(collections.Counter(r.status for r in res))


def emit(out, rec):
    rec["time"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    line = json.dumps(rec)
    print(line, flush=True)
    if out:
        with open(out, "a") as f:
            f.write(line + "\n")


# -- capacity -----------------------------------------------------------------

def stories_pages():
    """The real caches as a paged cache: one page = one sequence's 512 tokens of
    one layer (32 KiB), [5, 2, seqs, 512, 4, 8]."""
    k, v, src = real_kv()
    layout = PagedKVLayout(5, 512, 4, 8, "bf16")
    pages = layout.allocate(k.shape[1])
    pages[:, 0] = k.view(ml_dtypes.bfloat16)
    pages[:, 1] = v.view(ml_dtypes.bfloat16)
    return layout, pages, src


def fill(st, pages, tag, max_rounds=50, batch=8):
    """Puts the real pages round after round under fresh keys until the store
    refuses a put or evicts an earlier chunk. Returns (resident chunks at
    that point, chunks put OK, first failure)."""
    nb = pages.shape[2]
    stored = []
    for r in range(max_rounds):
        for b0 in range(0, nb, batch):
            ids = list(range(b0, min(nb, b0 + batch)))
            hs = block_hashes(np.arange(len(ids) * 4) + 10 ** 6 * r + b0, 4, salt=tag.encode())
            res = st.put_blocks(pages, ids, hs)
            ok = [x.key for x in res if x.ok]
            stored += ok
            exist = st.client.batch_is_exist(stored)
            resident = sum(1 for e in exist if e == 1)
            if len(ok) < len(res) or resident < len(stored):
                why = next((f"{x.status} {x.detail}" for x in res if not x.ok), "evicted")
                return resident, len(stored), why
    return len(stored), len(stored), "data exhausted"


def cmd_capacity(a):
    layout, pages, src = stories_pages()
    budget = int(os.environ.get("SZOF_SERVERS", "2")) * int(os.environ.get("SZOF_SEGMENT_MIB", "0")) * MiB
    per_chunk_raw = 2 * layout.page_bytes
    results = {}
    # splitzip_nosplit: the same values stored whole (size_class_split off),
    # to show what the store allocator's size classes cost.
    for variant in ("raw", "splitzip", "splitzip_nosplit"):
        codec = "raw" if variant == "raw" else "splitzip"
        best = None
        for rep in range(a.repeats):
            st = KVOffloadStore(config(codec=codec, namespace=f"cap{variant}{rep}",
                                       size_class_split=variant != "splitzip_nosplit"),
                                "stories260k", layout)
            st.client.remove_all(True)
            time.sleep(0.5)
            resident, put_ok, why = fill(st, pages, f"{codec}{rep}")
            ratio = st.stored_bytes_put / max(1, st.raw_bytes_put)
            st.client.remove_all(True)
            st.close()
            log(f"capacity {variant} rep {rep}: {resident} chunks resident ({put_ok} put) at '{why}'")
            if best is None or resident > best[0]:
                best = (resident, put_ok, why, ratio)
        results[variant] = best
        emit(a.out, {"bench": "capacity", "codec": variant, "budget_bytes": budget, "data": src,
                     "chunk_raw_bytes": per_chunk_raw, "resident_chunks": best[0],
                     "tokens": best[0] * layout.block_tokens // layout.layers,
                     "raw_bytes_resident": best[0] * per_chunk_raw,
                     "stored_over_raw": round(best[3], 5), "stop": best[2],
                     "repeats": a.repeats})
    emit(a.out, {"bench": "capacity_ratio", "budget_bytes": budget,
                 "tokens_compressed_over_raw": round(results["splitzip"][0] / results["raw"][0], 4),
                 "tokens_compressed_nosplit_over_raw":
                     round(results["splitzip_nosplit"][0] / results["raw"][0], 4)})


# -- throughput ---------------------------------------------------------------

def big_pages(gib):
    """``gib`` GiB of real KV values as pages of a larger model's layout (8 KV
    heads x 128 dims, 256-token blocks: 512 KiB pages, 1 MiB chunks per layer
    and block): the real caches' bytes, tiled in order."""
    k, v, src = real_kv()
    layout = PagedKVLayout(5, 256, 8, 128, "bf16")
    nb = int(gib * (1 << 30)) // (layout.layers * 2 * layout.page_bytes)
    pages = layout.allocate(nb)
    flat = pages.reshape(5, 2, -1).view(np.uint16)
    for l in range(5):
        for h, src_kv in enumerate((k, v)):
            s = src_kv[l].reshape(-1)
            reps = -(-flat.shape[2] // s.size)
            flat[l, h] = np.tile(s, reps)[:flat.shape[2]]
    return layout, pages, src


def timed(fn):
    t0 = time.perf_counter()
    r = fn()
    return time.perf_counter() - t0, r


def codec_rates(layout, pages, threads, mode="fast"):
    """Encode and decode alone (no store), in memory: G_enc, G_dec in bytes/s."""
    nb = pages.shape[2]
    bound = chunk.chunk_bound("bf16", 2, layout.page_elems)
    buf = np.empty(bound, np.uint8)
    out = np.empty((2,) + pages.shape[3:], pages.dtype)
    t_enc = t_dec = 0.0
    stored = 0
    for b in range(nb):
        for l in range(layout.layers):
            t0 = time.perf_counter()
            n = chunk.encode_into("k", [pages[l, 0, b], pages[l, 1, b]], buf, threads=threads,
                                  mode=mode)
            t1 = time.perf_counter()
            chunk.decode_into("k", buf[:n], [out[0], out[1]], threads=threads)
            t2 = time.perf_counter()
            t_enc += t1 - t0
            t_dec += t2 - t1
            stored += n
    return pages.nbytes / t_enc, pages.nbytes / t_dec, stored / pages.nbytes


def cmd_throughput(a):
    layout, pages, src = big_pages(a.gib)
    nb = pages.shape[2]
    hs = block_hashes(np.arange(nb * 16), 16, salt=b"tp")
    out = layout.allocate(nb)
    runs = collections.defaultdict(list)
    failed = collections.defaultdict(list)
    stages = collections.defaultdict(dict)
    # Raw baselines: the pages as one object per chunk (multi-buffer calls) or
    # as two (K, V), in batches of 64 MiB (one batch of 1 GiB outlasts the
    # 5 s lease at 1 Gbit/s and fails); the faster is the baseline.
    stores = {
        "raw": KVOffloadStore(config(codec="raw", namespace="tpraw", group_bytes=64 * MiB),
                              "big", layout),
        "raw_kv": KVOffloadStore(config(codec="raw", raw_layout="kv_keys", namespace="tprawkv",
                                        group_bytes=64 * MiB), "big", layout),
    }
    # One compressed store per coding mode ("splitzip" is the fast mode).
    sz = {m: "splitzip" if m == "fast" else f"splitzip_{m}" for m in a.modes}
    for m, name in sz.items():
        stores[name] = KVOffloadStore(config(codec="splitzip", namespace="tpsz" + m,
                                             codec_options={"mode": m},
                                             group_bytes=a.group_mib * MiB, threads=a.threads),
                                      "big", layout)
    for c in ("raw", "raw_kv"):
        stores[c].register(pages)
        stores[c].register(out)
    rep = 0
    while min(len(runs[c]) for c in stores) < a.repeats and rep < 2 * a.repeats:
        rep += 1
        for codec, st in stores.items():
            st.client.remove_all(True)
            out[...] = 0
            st.timings.clear()
            t_put, res = timed(lambda: st.put_blocks(pages, range(nb), hs))
            if counts(res) != {"OK": len(res)}:
                failed[codec].append(["put", dict(collections.Counter(
                    f"{r.status} {r.detail}" for r in res if not r.ok))])
                log(f"{a.rate} {codec} rep {rep}: put FAILED {failed[codec][-1]}")
                continue
            t_get, res = timed(lambda: st.get_blocks(out, range(nb), hs))
            if counts(res) != {"OK": len(res)}:
                failed[codec].append(["get", dict(collections.Counter(
                    f"{r.status} {r.detail}" for r in res if not r.ok))])
                log(f"{a.rate} {codec} rep {rep}: get FAILED {failed[codec][-1]}")
                continue
            exact = out.view(np.uint16).tobytes() == pages.view(np.uint16).tobytes()
            if not exact:
                raise SystemExit(f"{codec}: fetched KV differs from the original")
            runs[codec].append((t_put, t_get))
            if codec.startswith("splitzip"):
                stages[codec][len(runs[codec]) - 1] = dict(st.timings)
            log(f"{a.rate} {codec} rep {rep}: put {t_put:.3f}s get {t_get:.3f}s bit-exact")
            st.client.remove_all(True)
    if any(not runs[c] for c in stores):
        raise SystemExit(f"{a.rate}: no successful run of {[c for c in stores if not runs[c]]}: "
                         f"{dict(failed)}")
    best = {c: (min(p for p, _ in r), min(g for _, g in r)) for c, r in runs.items()}
    variants = {c: [round(x, 4) for x in best[c]] for c in ("raw", "raw_kv")}
    base = {"put": min(best["raw"][0], best["raw_kv"][0]), "get": min(best["raw"][1], best["raw_kv"][1])}
    best["raw"] = (base["put"], base["get"])
    B_put = pages.nbytes / best["raw"][0]
    B_get = pages.nbytes / best["raw"][1]
    for m, name in sz.items():
        rec = throughput_record(a, m, name, stores[name], runs, best, stages[name], failed,
                                layout, pages, src, variants, B_put, B_get)
        emit(a.out, rec)
    for st in stores.values():
        st.close()


def throughput_record(a, mode, name, store, runs, best, stages, failed, layout, pages, src,
                      variants, B_put, B_get):
    """The record of one coding mode against the raw baseline of the same run."""
    nb = pages.shape[2]
    ratio = store.stored_bytes_put / store.raw_bytes_put
    g_enc, g_dec, _ = codec_rates(layout, pages, a.threads, mode)
    rec = {"bench": "throughput", "rate": a.rate, "mode": mode, "bytes": pages.nbytes,
           "chunks": nb * 5,
           "chunk_raw_bytes": 2 * layout.page_bytes, "data": src, "repeats": a.repeats,
           "ratio": round(1 / ratio, 4),
           "raw_put_s": round(best["raw"][0], 4), "raw_get_s": round(best["raw"][1], 4),
           "raw_variants_put_get_s": variants,
           "sz_put_s": round(best[name][0], 4), "sz_get_s": round(best[name][1], 4),
           "put_speedup": round(best["raw"][0] / best[name][0], 3),
           "get_speedup": round(best["raw"][1] / best[name][1], 3),
           "G_enc_MBps": round(g_enc / 1e6), "G_dec_MBps": round(g_dec / 1e6),
           "B_put_MBps": round(B_put / 1e6), "B_get_MBps": round(B_get / 1e6),
           "all_runs": {c: [[round(x, 4) for x in r] for r in v] for c, v in runs.items()
                        if c in ("raw", "raw_kv", name)},
           "failed_runs": {c: v for c, v in failed.items() if c in ("raw", "raw_kv", name)}}
    # Busy time per stage inside the fastest compressed put and get: encode
    # (worker thread) || batch_put_from; batch_get_into || decode.
    ip = min(range(len(runs[name])), key=lambda i: runs[name][i][0])
    ig = min(range(len(runs[name])), key=lambda i: runs[name][i][1])
    rec["sz_put_stages_s"] = {k: round(stages[ip].get(k, 0.0), 4) for k in ("encode", "put")}
    rec["sz_get_stages_s"] = {k: round(stages[ig].get(k, 0.0), 4) for k in ("fetch", "decode")}
    # Pipeline model: the slower of codec and link (raw rate B, compressed bytes).
    for op, B, G in (("put", B_put, g_enc), ("get", B_get, g_dec)):
        link = pages.nbytes * ratio / B
        codec_t = pages.nbytes / G
        rec[f"model_{op}_s"] = round(max(link, codec_t), 4)
        rec[f"model_{op}_bound"] = "codec" if codec_t > link else "link"
    return rec


# -- faults and integrity -----------------------------------------------------

class Ledger:
    """Counts chunk operations and checks the two promises: nothing the store
    reported stored (and did not report evicted or lost to a fault) is lost,
    and nothing corrupt is returned as data."""

    def __init__(self, pages, layers):
        self.pages, self.layers = pages, layers
        self.c = collections.Counter()
        for k in ("WRONG_DATA_RETURNED", "CORRUPT_RETURNED_AS_DATA", "FAILED_CHUNK_LEFT_DATA",
                  "LOST_WHILE_REPORTED_STORED", "CORRUPT_WITHOUT_FLIP"):
            self.c[k] = 0

    def puts(self, res):
        self.c["put_ops"] += len(res)
        self.c.update(f"put_{r.status}" for r in res)

    def gets(self, res, out, blocks, expect_all=False, corrupted=()):
        self.c["get_ops"] += len(res)
        for i, r in enumerate(res):
            b, l = blocks[i // self.layers], i % self.layers
            got = out[l, :, i // self.layers].view(np.uint16)
            self.c[f"get_{r.status}"] += 1
            if r.ok:
                if got.tobytes() != self.pages[l, :, b].view(np.uint16).tobytes():
                    self.c["WRONG_DATA_RETURNED"] += 1
                if r.key in corrupted:
                    self.c["CORRUPT_RETURNED_AS_DATA"] += 1
            else:
                if got.any():
                    self.c["FAILED_CHUNK_LEFT_DATA"] += 1
                if expect_all:
                    self.c["LOST_WHILE_REPORTED_STORED"] += 1
                if r.key in corrupted and r.status == "CORRUPT":
                    self.c["corrupt_refused_by_key"] += 1
                elif r.status == "CORRUPT":
                    self.c["CORRUPT_WITHOUT_FLIP"] += 1


def cluster(*args):
    subprocess.run(["bash", str(ROOT / "scripts" / "offload_cluster.sh"), *args], check=True,
                   stdout=subprocess.DEVNULL)


def cmd_faults(a):
    layout, pages, src = stories_pages()
    nb = pages.shape[2]
    L = layout.layers
    led = Ledger(pages, L)
    st = KVOffloadStore(config(group_bytes=2 * MiB), "stories260k", layout)
    st.client.remove_all(True)
    out = layout.allocate(nb)
    blocks = list(range(nb))
    phases = {}

    def hs_for(tag):
        return block_hashes(np.arange(nb * 4), 4, salt=tag.encode())

    # 1. Steady state under capacity: each round puts a fresh set of keys and
    # gets it back, gets the previous round's set again (still stored: it
    # must all come back), then removes that one. Two rounds are resident at
    # most (~30 MiB of the 64 MiB pool), so nothing may be evicted: every chunk
    # reported stored must come back bit-exact.
    t0 = time.time()
    r = 0
    prev = None
    while led.c["put_ops"] + led.c["get_ops"] < a.ops:
        hs = hs_for(f"steady{r}")
        res = st.put_blocks(pages, blocks, hs)
        led.puts(res)
        ok_all = all(x.ok for x in res)
        led.gets(st.get_blocks(out, blocks, hs), out, blocks, expect_all=ok_all)
        if prev is not None:
            led.gets(st.get_blocks(out, blocks, prev[0]), out, blocks, expect_all=prev[1])
            st.remove_blocks(prev[0])
        prev = (hs, ok_all)
        r += 1
    phases["steady"] = {"rounds": r, "seconds": round(time.time() - t0, 1),
                        "put_ops": led.c["put_ops"], "get_ops": led.c["get_ops"],
                        "put_not_ok": led.c["put_ops"] - led.c["put_OK"],
                        "get_not_ok": led.c["get_ops"] - led.c["get_OK"]}
    st.client.remove_all(True)

    # 2. Corruption through the store's API: get a value, flip 1-3 bits, upsert.
    rng = np.random.default_rng(11)
    hs = hs_for("corrupt")
    led.puts(st.put_blocks(pages, blocks, hs))
    keys = st.keys(hs)
    corrupted = set()
    for key in rng.choice(keys, a.corrupt, replace=False):
        val = bytearray(st.client.get(key))
        for pos in rng.integers(0, len(val), int(rng.integers(1, 4))):
            val[pos] ^= 1 << int(rng.integers(0, 8))
        if st.client.upsert(key, bytes(val)) == 0:
            corrupted.add(key)
    res = st.get_blocks(out, blocks, hs)
    led.gets(res, out, blocks, corrupted=corrupted)
    refused = {x.key for x in res if x.status == "CORRUPT"}
    phases["corrupt"] = {"flipped": len(corrupted), "refused_by_key": len(refused & corrupted),
                         "refused_not_flipped": len(refused - corrupted)}
    st.client.remove_all(True)

    # 3. Kill a store client holding segments in the middle of a get.
    import threading
    hs = hs_for("kill")
    led.puts(st.put_blocks(pages, blocks, hs))
    killer = threading.Timer(0.02, cluster, ("kill-server", "0"))
    killer.start()
    seen = collections.Counter()
    for _ in range(6):
        res = st.get_blocks(out, blocks, hs)
        led.gets(res, out, blocks)
        seen.update(x.status for x in res)
        time.sleep(0.5)
    killer.join()
    t_rec = time.time()
    while True:
        res = st.put_blocks(pages, blocks, hs)
        led.puts(res)
        if all(x.ok for x in res) or time.time() - t_rec > 30:
            break
        time.sleep(0.5)
    res = st.get_blocks(out, blocks, hs)
    led.gets(res, out, blocks, expect_all=True)
    phases["kill_store_client"] = {"gets_after_kill": dict(seen),
                                   "reput_recovered": all(x.ok for x in res),
                                   "recovery_s": round(time.time() - t_rec, 2)}
    cluster("start-server", "0")

    # 4. Restart the master.
    cluster("restart-master")
    res = st.get_blocks(out, blocks, hs)
    led.gets(res, out, blocks)
    after = counts(res)
    t_rec = time.time()
    while True:
        res = st.put_blocks(pages, blocks, hs)
        led.puts(res)
        if all(x.ok for x in res) or time.time() - t_rec > 30:
            break
        time.sleep(0.5)
    res = st.get_blocks(out, blocks, hs)
    led.gets(res, out, blocks, expect_all=True)
    phases["restart_master"] = {"gets_after_restart": after,
                                "reput_recovered": all(x.ok for x in res),
                                "recovery_s": round(time.time() - t_rec, 2)}
    st.client.remove_all(True)

    # 5. Fill past capacity: 4x the pool.
    budget = int(os.environ["SZOF_SERVERS"]) * int(os.environ["SZOF_SEGMENT_MIB"]) * MiB
    rounds = int(4 * budget / (pages.nbytes * 0.75)) + 1
    all_hs = []
    put_c = collections.Counter()
    for r in range(rounds):
        hs = hs_for(f"fill{r}")
        res = st.put_blocks(pages, blocks, hs)
        led.puts(res)
        put_c.update(x.status for x in res)
        all_hs.append(hs)
    get_c = collections.Counter()
    for hs in all_hs:
        res = st.get_blocks(out, blocks, hs)
        led.gets(res, out, blocks)
        get_c.update(x.status for x in res)
    phases["overfill"] = {"pool_bytes": budget, "raw_bytes_offered": rounds * pages.nbytes,
                          "puts": dict(put_c), "gets": dict(get_c)}
    st.client.remove_all(True)
    st.close()
    emit(a.out, {"bench": "faults", "data": src, "chunk_raw_bytes": 2 * layout.page_bytes,
                 "phases": phases, "ledger": dict(led.c),
                 "chunk_ops": led.c["put_ops"] + led.c["get_ops"]})


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("capacity", "throughput", "faults"):
        s = sub.add_parser(name)
        s.add_argument("--out", default=None, help="append JSON lines here")
        s.add_argument("--repeats", type=int, default=3)
    sub.choices["throughput"].add_argument("--rate", default="loopback")
    sub.choices["throughput"].add_argument("--gib", type=float, default=1.0)
    sub.choices["throughput"].add_argument("--group-mib", type=int, default=32)
    sub.choices["throughput"].add_argument("--threads", type=int, default=1)
    sub.choices["throughput"].add_argument("--modes", nargs="+", default=["fast"],
                                           choices=list(chunk.MODES),
                                           help="coding modes of the compressed stores")
    sub.choices["faults"].add_argument("--ops", type=int, default=10000)
    sub.choices["faults"].add_argument("--corrupt", type=int, default=50)
    a = p.parse_args()
    log(f"splitzip {splitzip.__version__} backends {splitzip.backends()}")
    {"capacity": cmd_capacity, "throughput": cmd_throughput, "faults": cmd_faults}[a.cmd](a)


if __name__ == "__main__":
    main()
