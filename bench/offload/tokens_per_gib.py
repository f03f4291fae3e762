#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tokens per GiB of offload store for each codec, on the bundled real KV
(issue 18 item 5; the table of docs/OFFLOAD.md "Tokens per GiB of store").

Every codec codes the same chunk values, one value per (layer, token block)
= the block's K page and V page of that layer, as the offload layer stores
them:

  raw                 the two pages as they are (codec="raw"): the memcpy baseline
  splitzip fast       the offload value (chunk.py: 40-byte header + two
  splitzip capacity   checksummed frames) in that mode, 1 thread
  OpenZL, Blosc2      the peers' wrappers of bench/capacity/run_peers.py, on the
                      two pages' bytes as one buffer, 1 thread (no header, no
                      checksum: the bytes a store would need at least)

Layouts (both 5 layers, bf16, from data/kv/stories260k: 16 sequences x 512
positions x 4 KV heads x 8 dims per layer, K and V):
  stories260k  512-token pages: one chunk = 32 KiB K + 32 KiB V (80 chunks),
               the layout of docs/OFFLOAD.md's capacity figure
  8x128        8 KV heads x 128 dims, 256-token pages: one chunk = 512 KiB K +
               512 KiB V (5 chunks), the layout of the throughput figure
               (bench_offload.py big_pages: each page holds one layer's K or V
               of all 16 sequences)

Tokens per GiB = 2^30 / (stored bytes per token), where a token costs
layers x 2 x kv_heads x head_dim x 2 bytes raw. "pool" columns charge each
stored object what Mooncake's offset allocator takes for it (the size class
it rounds up to; store.size_class_floor), with the layer's size-class split
(head = largest class <= value, tail object = the rest) and with values
stored whole. With --store the model is checked against a real Mooncake
Store (2 store clients x 32 MiB on loopback): the splitzip and raw values of
the stories260k layout are put under fresh keys until the first refusal or
eviction, as bench_offload.py capacity does.

Speeds: one thread, GB/s of raw bytes, best of --reps runs, the codecs
alternating within each rep (wall clock and thread CPU time); "exact": every
decode of every rep returned the chunk bit for bit.

  build-python/venv/bin/python bench/offload/tokens_per_gib.py [--reps 7] [--store]
Writes bench/results/offload_tokens.json and .md (the tables, also printed).
  build-python/venv/bin/python bench/offload/tokens_per_gib.py --sets
Writes bench/results/offload_tables.json and .md: held-out capacity table
sets through KVOffloadStore (smollm2 when ../shared/data/kv/smollm2 exists,
and the bundled KV).
"""
import argparse
import gc
import json
import os
import pathlib
import platform
import subprocess
import sys
import time

import ml_dtypes
import numpy as np

import splitzip_kv as splitzip
from splitzip_kv.offload import KVOffloadStore, OffloadConfig, PagedKVLayout, chunk
from splitzip_kv.offload.store import size_class_floor

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "kv" / "stories260k"
sys.path.insert(0, str(ROOT / "bench" / "capacity"))
sys.path.insert(0, str(ROOT / "examples" / "offload"))
import run_peers  # noqa: E402  the peers' codec wrappers (OpenZL, Blosc2)

GiB = 1 << 30
MiB = 1 << 20
PEERS = ("openzl BF16Deconstruct+Huffman", "openzl BF16Deconstruct+FSE",
         "blosc2 shuffle+zstd-1", "blosc2 shuffle+lz4")


def size_class_ceil(n):
    """The size class Mooncake's offset allocator gives an object of n bytes
    (8 classes per power of two; see store.size_class_floor)."""
    if n < 16:
        return n
    step = 1 << (n.bit_length() - 4)
    return -(-n // step) * step


def pool_bytes(n, split):
    """Allocator bytes of a value of n bytes: whole, or head + tail objects."""
    if not split:
        return size_class_ceil(n)
    head = size_class_floor(n)
    return head + (size_class_ceil(n - head) if n > head else 0)


def bundled_kv():
    """K, V of the 5 layers as uint16 [5, 16, 512, 4, 8]."""
    k = np.stack([np.fromfile(DATA / f"layer{l:02d}_k.bf16", "<u2") for l in range(5)])
    v = np.stack([np.fromfile(DATA / f"layer{l:02d}_v.bf16", "<u2") for l in range(5)])
    return k.reshape(5, 16, 512, 4, 8), v.reshape(5, 16, 512, 4, 8)


def layouts():
    k, v = bundled_kv()
    small = PagedKVLayout(5, 512, 4, 8, "bf16")
    sp = small.allocate(16)
    sp[:, 0] = k.view(ml_dtypes.bfloat16)
    sp[:, 1] = v.view(ml_dtypes.bfloat16)
    big = PagedKVLayout(5, 256, 8, 128, "bf16")
    bp = big.allocate(1)  # one page = one layer's K (or V) of all 16 sequences
    bp[:, 0] = k.reshape(5, 1, 256, 8, 128).view(ml_dtypes.bfloat16)
    bp[:, 1] = v.reshape(5, 1, 256, 8, 128).view(ml_dtypes.bfloat16)
    return {"stories260k": (small, sp), "8x128": (big, bp)}


class Chunks:
    """The (layer, block) chunks of a paged cache, with per-chunk buffers."""

    def __init__(self, layout, pages):
        self.layout = layout
        self.kv = [(pages[l, 0, b], pages[l, 1, b])
                   for b in range(pages.shape[2]) for l in range(layout.layers)]
        self.raw = [k.tobytes() + v.tobytes() for k, v in self.kv]
        self.nbytes = sum(len(r) for r in self.raw)
        self.tokens = pages.shape[2] * layout.block_tokens
        self.bound = chunk.chunk_bound(layout.dtype, 2, layout.page_elems)


def codec_memcpy(c):
    dst = [(np.empty_like(k), np.empty_like(v)) for k, v in c.kv]
    back = [(np.empty_like(k), np.empty_like(v)) for k, v in c.kv]

    def enc():
        for (k, v), (a, b) in zip(c.kv, dst):
            np.copyto(a, k)
            np.copyto(b, v)
        return [len(r) for r in c.raw]

    def dec():
        for (a, b), (x, y) in zip(dst, back):
            np.copyto(x, a)
            np.copyto(y, b)

    def exact():
        return all(x.tobytes() + y.tobytes() == r for (x, y), r in zip(back, c.raw))
    return enc, dec, exact


def codec_splitzip(c, mode):
    bufs = [np.empty(c.bound, np.uint8) for _ in c.kv]
    back = [(np.empty_like(k), np.empty_like(v)) for k, v in c.kv]
    sizes = [0] * len(c.kv)

    def enc():
        for i, ((k, v), buf) in enumerate(zip(c.kv, bufs)):
            sizes[i] = chunk.encode_into("szkv/bench/L", [k, v], buf, dtype="bf16",
                                         threads=1, mode=mode)
        return list(sizes)

    def dec():
        for buf, n, (x, y) in zip(bufs, sizes, back):
            chunk.decode_into("szkv/bench/L", buf[:n], [x, y], threads=1)

    def exact():
        return all(x.tobytes() + y.tobytes() == r for (x, y), r in zip(back, c.raw))

    def modes():  # how the frames were coded (a frame may fall back to stored)
        return sorted({m for buf, n in zip(bufs, sizes) for m in chunk.frame_modes("szkv/bench/L", buf[:n])})
    exact.modes = modes
    return enc, dec, exact


def codec_peer(c, comp, decomp):
    blobs = [None] * len(c.raw)
    back = [None] * len(c.raw)

    def enc():
        for i, r in enumerate(c.raw):
            blobs[i] = comp(r)
        return [len(b) for b in blobs]

    def dec():
        for i, b in enumerate(blobs):
            back[i] = decomp(b)

    def exact():
        return all(bytes(b) == r for b, r in zip(back, c.raw))
    return enc, dec, exact


def measure(c, reps):
    peers = {label: (comp, decomp) for label, comp, decomp in run_peers.peers(c.raw[0], 1)}
    missing = [p for p in PEERS if p not in peers]
    if missing:
        raise SystemExit(f"peer codecs missing: {missing}")
    codecs = {"raw (memcpy)": codec_memcpy(c),
              "splitzip fast": codec_splitzip(c, "fast"),
              "splitzip capacity": codec_splitzip(c, "capacity")}
    for p in PEERS:
        codecs[p] = codec_peer(c, *peers[p])
    best = {name: {"enc": float("inf"), "dec": float("inf"), "enc_cpu": float("inf"),
                   "dec_cpu": float("inf"), "exact": True, "sizes": None} for name in codecs}
    gc.disable()
    try:
        for _ in range(reps):
            for name, (enc, dec, exact) in codecs.items():  # alternating within a rep
                b = best[name]
                w0, c0 = time.perf_counter(), time.thread_time()
                sizes = enc()
                w1, c1 = time.perf_counter(), time.thread_time()
                dec()
                w2, c2 = time.perf_counter(), time.thread_time()
                b["enc"], b["dec"] = min(b["enc"], w1 - w0), min(b["dec"], w2 - w1)
                b["enc_cpu"], b["dec_cpu"] = min(b["enc_cpu"], c1 - c0), min(b["dec_cpu"], c2 - c1)
                b["exact"] = b["exact"] and exact()
                if b["sizes"] is not None and b["sizes"] != sizes:
                    b["exact"] = False  # not deterministic: count it as a failed round trip
                b["sizes"] = sizes
    finally:
        gc.enable()
    rows = []
    raw_per_token = c.nbytes / c.tokens
    for name, b in best.items():
        stored = sum(b["sizes"])
        split = name != "raw (memcpy)"
        rows.append({
            "codec": name, "stored_bytes": stored, "raw_bytes": c.nbytes,
            "ratio": c.nbytes / stored,
            "tokens_per_gib_values": GiB * c.tokens / stored,
            "tokens_per_gib_pool_split": GiB * c.tokens / sum(pool_bytes(n, split) for n in b["sizes"]),
            "tokens_per_gib_pool_whole": GiB * c.tokens / sum(pool_bytes(n, False) for n in b["sizes"]),
            "encode_gbps": c.nbytes / b["enc"] / 1e9, "decode_gbps": c.nbytes / b["dec"] / 1e9,
            "encode_gb_per_cpu_s": c.nbytes / max(b["enc_cpu"], 1e-9) / 1e9,
            "decode_gb_per_cpu_s": c.nbytes / max(b["dec_cpu"], 1e-9) / 1e9,
            "exact": b["exact"], "raw_bytes_per_token": raw_per_token,
            "frame_modes": codecs[name][2].modes() if hasattr(codecs[name][2], "modes") else None,
            "mean_value_bytes": stored / len(b["sizes"])})
    return rows


def cluster(env, *args):
    subprocess.run(["bash", str(ROOT / "scripts" / "offload_cluster.sh"), *args], env=env,
                   check=True, stdout=subprocess.DEVNULL)


def through_store(layout, pages, port):
    """Fills a real 2 x 32 MiB loopback store with each codec's values of the
    stories260k layout until the first refusal or eviction."""
    from bench_offload import fill
    run = ROOT / "build-offload" / "tokens-cluster"
    env = dict(os.environ, SZOF_RUN=str(run), SZOF_PY=sys.executable, SZOF_PORT=str(port))
    pool = 2 * 32 * MiB
    cluster(env, "up", "--servers", "2", "--segment-mib", "32")
    out = []
    try:
        for name, kw in (("raw", {"codec": "raw"}),
                         ("splitzip fast", {"codec_options": {"mode": "fast"}}),
                         ("splitzip capacity", {"codec_options": {"mode": "capacity"}}),
                         ("splitzip capacity, values whole",
                          {"codec_options": {"mode": "capacity"}, "size_class_split": False})):
            tag = name.replace(" ", "").replace(",", "")
            st = KVOffloadStore(OffloadConfig(master=f"127.0.0.1:{port}", namespace=tag, **kw),
                                "stories260k", layout)
            st.client.remove_all(True)
            time.sleep(0.5)
            resident, put_ok, why = fill(st, pages, tag)
            stored_over_raw = st.stored_bytes_put / max(1, st.raw_bytes_put)
            st.client.remove_all(True)
            st.close()
            tokens = resident * layout.block_tokens // layout.layers
            out.append({"codec": name, "pool_bytes": pool, "resident_chunks": resident,
                        "tokens": tokens, "tokens_per_gib_pool": tokens * GiB / pool,
                        "pool_bytes_per_chunk": pool / resident, "stored_over_raw": stored_over_raw,
                        "stop": why})
            print(json.dumps(out[-1]), file=sys.stderr, flush=True)
    finally:
        cluster(env, "down")
    return out


def fmt_int(x):
    return f"{int(round(x)):,}"


def write_md(res, path):
    m = res["meta"]
    lines = ["# Tokens per GiB of offload store (issue 18)", "",
             "Generated by `bench/offload/tokens_per_gib.py` (one run for every row). Do not edit by hand.", "",
             f"- {m['time']}, {m['machine']}, {m['cpus']} CPUs, load average at the end "
             f"{m['load']}; splitzip {m['splitzip']}; best of {m['reps']} runs, codecs alternating; "
             "1 thread; GB/s of raw bytes.", ""]
    for name, rows in res["layouts"].items():
        r0 = rows[0]
        lines += [f"## {name}: {fmt_int(r0['raw_bytes_per_token'])} raw bytes per token, "
                  f"{fmt_int(r0['raw_bytes'])} bytes in {res['chunks'][name]} chunks of "
                  f"{fmt_int(r0['raw_bytes'] / res['chunks'][name])} bytes", "",
                  "| codec | ratio | tokens per GiB of values | tokens per GiB of pool (split / whole) "
                  "| encode GB/s | decode GB/s | encode / decode GB per CPU-s | round trip |",
                  "|---|---:|---:|---:|---:|---:|---:|---|"]
        for r in rows:
            lines.append(
                f"| {r['codec']} | {r['ratio']:.4f} | {fmt_int(r['tokens_per_gib_values'])} | "
                f"{fmt_int(r['tokens_per_gib_pool_split'])} / {fmt_int(r['tokens_per_gib_pool_whole'])} | "
                f"{r['encode_gbps']:.3f} | {r['decode_gbps']:.3f} | "
                f"{r['encode_gb_per_cpu_s']:.3f} / {r['decode_gb_per_cpu_s']:.3f} | "
                f"{'exact' if r['exact'] else 'NOT exact'} |")
        lines.append("")
    if res.get("store"):
        lines += ["## Through a real Mooncake Store (stories260k layout, 2 x 32 MiB, loopback)", "",
                  "| stored as | chunks resident at the first refusal | tokens | tokens per GiB of pool "
                  "| pool bytes per chunk | stored / raw | stopped by |",
                  "|---|---:|---:|---:|---:|---:|---|"]
        for r in res["store"]:
            lines.append(f"| {r['codec']} | {r['resident_chunks']} | {fmt_int(r['tokens'])} | "
                         f"{fmt_int(r['tokens_per_gib_pool'])} | {fmt_int(r['pool_bytes_per_chunk'])} | "
                         f"{r['stored_over_raw']:.4f} | {r['stop'].split(' (')[0]} |")
        lines.append("")
    text = "\n".join(lines) + "\n"
    open(path, "w").write(text)
    return text


SMOL = [ROOT.parent / "shared/data/kv/smollm2", ROOT.parent.parent / "shared/data/kv/smollm2"]


def held_out_kv():
    """{name: (layout, pages, calibration blocks, stored blocks)}: smollm2
    (30 layers, [2 seq, 512, 3, 64]) as 2 blocks of 512 tokens, sequence 0
    calibrates and sequence 1 is stored; the bundled KV as 16 blocks of 512
    tokens, sequences 0-7 calibrate and 8-15 are stored."""
    out = {}
    d = next((x for x in SMOL if (x / "layer00_k.bf16").exists()), None)
    if d is not None:
        lay = PagedKVLayout(30, 512, 3, 64, "bf16")
        p = lay.allocate(2)
        for l in range(30):
            for j, kv in enumerate("kv"):
                p[l, j] = np.fromfile(d / f"layer{l:02d}_{kv}.bf16", "<u2").view(
                    ml_dtypes.bfloat16).reshape(2, 512, 3, 64)
        out["smollm2"] = (lay, p, [0], [1])
    lay, p = layouts()["stories260k"]
    out["stories260k"] = (lay, p, list(range(8)), list(range(8, 16)))
    return out


class DictClient:
    """The Mooncake calls the store makes, on a dict (sizes, not speed)."""

    def __init__(self):
        self.d = {}

    def register_buffer(self, ptr, n):
        return 0

    def batch_put_from(self, keys, ptrs, lens, rc):
        import ctypes
        for k, p, n in zip(keys, ptrs, lens):
            self.d[k] = ctypes.string_at(p, n)
        return [0] * len(keys)

    def batch_get_into(self, keys, ptrs, caps):
        import ctypes
        out = []
        for k, p, c in zip(keys, ptrs, caps):
            v = self.d.get(k)
            if v is None or len(v) > c:
                out.append(-704 if v is None else -600)
            else:
                ctypes.memmove(p, v, len(v))
                out.append(len(v))
        return out

    def batch_is_exist(self, keys):
        return [1 if k in self.d else 0 for k in keys]

    def batch_remove(self, keys, force):
        return [0 if self.d.pop(k, None) is not None else -704 for k in keys]

    def put(self, key, value, rc):
        self.d[key] = bytes(value)
        return 0

    def get(self, key):
        return self.d.get(key, b"")

    def remove(self, key, force):
        return 0 if self.d.pop(key, None) is not None else -704

    def close(self):
        pass


def held_out_sets():
    """Chunk values of held-out blocks through KVOffloadStore.put_blocks:
    per-block capacity tables against table sets calibrated on other
    blocks (per layer and K/V, T = 32 and T = 1; one set for the model);
    every value read back by a reader store with no sets of its own (it
    fetches them from the store by id), compared bit for bit."""
    from splitzip_kv.offload import calibrate_layer_tables
    res = {}
    for name, (lay, pages, cal, held) in held_out_kv().items():
        hs = [f"h{b}" for b in held]
        one = splitzip.calibrate([np.ascontiguousarray(pages[l, j, b]) for l in range(lay.layers)
                                  for j in range(2) for b in cal], mode="capacity", table_count=32)
        variants = [("raw", {"codec": "raw"}),
                    ("splitzip capacity (per-block tables)", {"codec_options": {"mode": "capacity"}}),
                    ("capacity + one set for the model (T = 32)", {"tables": one}),
                    ("capacity + sets per layer and K/V (T = 1)",
                     {"tables": calibrate_layer_tables(pages, cal, table_count=1)}),
                    ("capacity + sets per layer and K/V (T = 32)",
                     {"tables": calibrate_layer_tables(pages, cal, table_count=32)})]
        rows = []
        raw_bytes = len(held) * lay.layers * 2 * lay.page_bytes
        tokens = len(held) * lay.block_tokens
        for label, kw in variants:
            client = DictClient()
            st = KVOffloadStore(OffloadConfig(**kw), name, lay, client=client)
            if kw.get("codec") == "raw":
                sizes = [2 * lay.page_bytes] * (len(held) * lay.layers)
                exact = True
                n_sets = 0
            else:
                out = st.put_blocks(pages, held, hs)
                assert all(x.ok for x in out), out[:2]
                sizes = [x.stored_bytes for x in out]
                n_sets = len([k for k in client.d if "/tables/" in k])
                reader = KVOffloadStore(OffloadConfig(), name, lay, client=client)
                got = np.zeros_like(pages)
                back = reader.get_blocks(got, held, hs)
                exact = all(x.ok for x in back) and \
                    got[:, :, held].tobytes() == pages[:, :, held].tobytes() and \
                    reader.tables_fetched == n_sets
                reader.close()
            st.close()
            stored = sum(sizes)
            rows.append({"codec": label, "stored_bytes": stored, "raw_bytes": raw_bytes,
                         "ratio": raw_bytes / stored, "tokens_per_gib_values": GiB * tokens / stored,
                         "tokens_per_gib_pool_split": GiB * tokens / sum(pool_bytes(n, label != "raw")
                                                                          for n in sizes),
                         "sets_in_store": n_sets, "exact": exact})
            print(json.dumps(rows[-1]), flush=True)
        res[name] = {"layout": [lay.layers, lay.block_tokens, lay.kv_heads, lay.head_dim],
                     "calibrated_on": cal, "stored": held, "rows": rows}
    return res


def write_sets_md(res, meta, path):
    lines = ["# Tokens per GiB of offload store with capacity table sets (issue 29)", "",
             "Generated by `bench/offload/tokens_per_gib.py --sets` (held-out: the sets are calibrated "
             "on other sequences than the ones stored). Do not edit by hand.", "",
             f"- {meta['time']}, splitzip {meta['splitzip']}. Values: what KVOffloadStore.put_blocks "
             "stores per (layer, block) chunk (header + K and V frames, checksummed), sizes only (a "
             "dict stands in for Mooncake); the sets themselves are stored once per store, not "
             "counted per chunk. Round trip: a second store with no sets of its own reads every "
             "value, fetching the sets from the store by the ids the frames name.", ""]
    for name, r in res.items():
        L, bt, h, d = r["layout"]
        lines += [f"## {name}: {L} layers x {h} KV heads x {d}, {bt}-token blocks; calibrated on "
                  f"blocks {r['calibrated_on']}, stored blocks {r['stored']}", "",
                  "| stored as | ratio | x raw tokens per GiB of values | tokens per GiB of values | "
                  "tokens per GiB of pool (size-class split) | sets in the store | round trip |",
                  "|---|---:|---:|---:|---:|---:|---|"]
        raw = r["rows"][0]["tokens_per_gib_values"]
        for x in r["rows"]:
            lines.append(f"| {x['codec']} | {x['ratio']:.4f} | {x['tokens_per_gib_values'] / raw:.4f} | "
                         f"{fmt_int(x['tokens_per_gib_values'])} | {fmt_int(x['tokens_per_gib_pool_split'])} | "
                         f"{x['sets_in_store']} | {'exact' if x['exact'] else 'NOT exact'} |")
        lines.append("")
    text = "\n".join(lines) + "\n"
    open(path, "w").write(text)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--store", action="store_true", help="also fill a real loopback Mooncake Store")
    ap.add_argument("--port", type=int, default=50851, help="master port for --store")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--sets", action="store_true",
                    help="only the held-out table-set section (offload_tables.json / .md)")
    a = ap.parse_args()
    if a.sets:
        meta = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "splitzip": splitzip.__version__}
        res = held_out_sets()
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "offload_tables.json"), "w") as f:
            json.dump({"meta": meta, "kv": res}, f, indent=1)
        print(write_sets_md(res, meta, os.path.join(a.out, "offload_tables.md")))
        return
    res = {"layouts": {}, "chunks": {}}
    lays = layouts()
    for name, (layout, pages) in lays.items():
        c = Chunks(layout, pages)
        res["chunks"][name] = len(c.kv)
        res["layouts"][name] = measure(c, a.reps)
    if a.store:
        res["store"] = through_store(*lays["stories260k"], a.port)
    res["meta"] = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
                   "load": tuple(round(x, 1) for x in os.getloadavg()), "reps": a.reps,
                   "splitzip": splitzip.__version__, "backends": splitzip.backends()}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "offload_tokens.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(write_md(res, os.path.join(a.out, "offload_tokens.md")))


if __name__ == "__main__":
    main()
