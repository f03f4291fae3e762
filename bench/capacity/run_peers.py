#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Capacity mode vs its peers, same run, same inputs (issue 18).

Inputs:
  realstat  256 MiB bf16: the sign and exponent of each element taken in order
            from the real stories260K KV caches (../shared/data/kv, all 10 files,
            repeated to length), the 7 mantissa bits uniformly random (seed 18).
  realstat_shuffled  the same 256 MiB with the elements of every aligned
            64 Ki-element block shuffled (seed 19): each capacity block keeps
            its exponent histogram, so the order-0 bound and this codec's
            bytes per block do not change, but the order in which sign and
            exponent patterns repeat is gone, so LZ matches gain nothing (the
            input issue 18 describes: "real statistics, random mantissa").
  data_kv   the bundled data/kv/stories260k/*.bf16, concatenated (5 MiB).
  data_kv_no_l0v  the same without layer00_v.bf16 (4.5 MiB). Layer-0 V is
            the token embedding times W_v, a function of the token id alone,
            so it repeats with the tokens and LZ coders find the repeats (it
            is 1 of the 10 files here, 1 in 2L of a model's KV with L layers,
            1/64 to 1/128 for 32- to 64-layer models).
  data_kv_fp16  the same values cast to fp16 (round to nearest; issue 18 asks
            for the ratio and speed of both modes on fp16 KV too).

Codecs: splitzip capacity (cpu/capacity_codec.cpp via bench/capacity/
capacity_bench, plus the scalar reference in both modes with --ref), OpenZL
0.3 (BFloat16Deconstruct; exponents -> Huffman or FSE; sign+fraction stored),
Blosc2 (byte shuffle + zstd clevel 1, byte shuffle + lz4), zstd -1 and -3,
ZipNN (byte API, bfloat16). Each figure: best of REPS alternating
compress/decompress runs, GB/s of uncompressed bytes; "exact" = the round trip
returns the input bit for bit.

  python bench/capacity/run_peers.py [--size-mib 256] [--reps 3] [--threads 1 2] [--also-target AVX2]
Writes bench/results/capacity.md, capacity.json and capacity.png.
"""
import argparse
import glob
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make_realstat(size_mib, path):
    files = sorted(glob.glob(os.path.join(ROOT, "..", "shared", "data", "kv", "stories260k", "layer*.bf16")))
    if not files:
        files = sorted(glob.glob(os.path.join(ROOT, "data", "kv", "stories260k", "layer*.bf16")))
    real = np.concatenate([np.fromfile(f, dtype=np.uint16) for f in files])
    n = size_mib * (1 << 20) // 2
    reps = -(-n // real.size)
    se = np.tile(real & np.uint16(0xFF80), reps)[:n]
    rng = np.random.default_rng(18)
    man = rng.integers(0, 128, size=n, dtype=np.uint16)
    (se | man).astype("<u2").tofile(path)
    return files


def make_realstat_shuffled(src, path, block_elems=1 << 16):
    a = np.fromfile(src, dtype="<u2")
    whole = a.size // block_elems * block_elems
    rng = np.random.default_rng(19)
    # Generator.permuted shuffles each row on its own.
    a[:whole] = rng.permuted(a[:whole].reshape(-1, block_elems), axis=1).reshape(-1)
    a.tofile(path)


def timed(fn, reps):
    best = float("inf")
    out = None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def bench_peer(name, comp, decomp, raw, reps, threads):
    # alternate: compress then decompress, best of reps each
    be = bd = float("inf")
    blob = None
    back = None
    for _ in range(reps):
        t0 = time.perf_counter()
        blob = comp(raw)
        be = min(be, time.perf_counter() - t0)
        t0 = time.perf_counter()
        back = decomp(blob)
        bd = min(bd, time.perf_counter() - t0)
    exact = bytes(back) == raw
    return {"codec": name, "threads": threads, "ratio": len(raw) / len(blob),
            "encode_gbps": len(raw) / be / 1e9, "decode_gbps": len(raw) / bd / 1e9, "exact": exact}


def peers(raw, threads, dtype="bf16"):
    import blosc2
    import openzl.ext as zl
    import zstandard

    rows = []

    def openzl_pair(kind):
        def comp(r):  # compresses its argument: bench/offload reuses these per chunk
            arr = np.frombuffer(r, dtype=np.uint16)
            c = zl.Compressor()
            exp_graph = zl.graphs.Huffman()(c) if kind == "huffman" else zl.graphs.Fse()(c)
            g = zl.nodes.BFloat16Deconstruct()(c, sign_frac=zl.graphs.Store()(c), exponent=exp_graph)
            c.select_starting_graph(g)
            cctx = zl.CCtx()
            cctx.ref_compressor(c)
            cctx.set_parameter(zl.CParam.FormatVersion, zl.MAX_FORMAT_VERSION)
            return cctx.compress([zl.Input(zl.Type.Numeric, arr)])

        def decomp(blob):
            return zl.DCtx().decompress(blob)[0].content.as_bytes()
        return comp, decomp

    if threads == 1 and dtype == "bf16":  # OpenZL has no threads; its graph here is bf16-only
        for kind in ("huffman", "fse"):
            c, d = openzl_pair(kind)
            rows.append(("openzl BF16Deconstruct+" + ("Huffman" if kind == "huffman" else "FSE"), c, d))

    blosc2.set_nthreads(threads)
    for codec, label in ((blosc2.Codec.ZSTD, "blosc2 shuffle+zstd-1"), (blosc2.Codec.LZ4, "blosc2 shuffle+lz4")):
        def c(r, codec=codec):
            return blosc2.compress2(r, typesize=2, clevel=1 if codec == blosc2.Codec.ZSTD else 5,
                                    filters=[blosc2.Filter.SHUFFLE], codec=codec, nthreads=threads)

        def d(b):
            return blosc2.decompress2(b, nthreads=threads)
        rows.append((label, c, d))

    for level in (1, 3):
        cc = zstandard.ZstdCompressor(level=level, threads=threads if threads > 1 else 0)
        dc = zstandard.ZstdDecompressor()
        rows.append((f"zstd -{level}", cc.compress, lambda b, dc=dc: dc.decompress(b, max_output_size=len(raw))))

    if dtype != "bf16":
        return rows
    try:
        import zipnn
        z = zipnn.ZipNN(input_format="byte", bytearray_dtype="bfloat16", threads=threads)
        rows.append(("zipnn 0.5.4 (byte, bfloat16)", z.compress, z.decompress))
    except Exception as e:  # recorded, not hidden
        print("zipnn unavailable:", e, file=sys.stderr)
    return rows


def splitzip_rows(exe, path, threads, reps, ref, dtype="bf16", target=None):
    cmd = [exe, path, dtype, str(threads), str(reps), "--memcpy", "--fast-cpu"] + (["--ref", "--variants"] if ref else [])
    if target:
        cmd = [exe, path, dtype, str(threads), str(reps), "--fast-cpu", "--target", target]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows, variants = [], None
    for line in out.splitlines():
        o = json.loads(line)
        if o.get("variants"):
            variants = o
        else:
            rows.append(o)
    return rows, variants


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--png-from", nargs=2, metavar=("JSON", "PNG"),
                    help="only redraw PNG from an earlier run's capacity.json")
    ap.add_argument("--size-mib", type=int, default=256)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--exe", default=os.path.join(ROOT, "build-cap-lib", "capacity_bench"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--tmp", default="/tmp")
    ap.add_argument("--also-target", default=None,
                    help="also time splitzip with its kernels forced to this Highway target (e.g. AVX2 on an "
                         "AVX-512 host), one thread, in the same run")
    args = ap.parse_args()
    if args.png_from:
        png_from_json(*args.png_from)
        return

    inputs = []
    rs = os.path.join(args.tmp, f"splitzip_realstat_{args.size_mib}m.bf16")
    if not os.path.exists(rs):
        make_realstat(args.size_mib, rs)
    inputs.append(("realstat", rs))
    rss = os.path.join(args.tmp, f"splitzip_realstat_shuffled_{args.size_mib}m.bf16")
    if not os.path.exists(rss):
        make_realstat_shuffled(rs, rss)
    inputs.append(("realstat_shuffled", rss))
    kv = os.path.join(args.tmp, "splitzip_data_kv.bf16")
    kv_files = sorted(glob.glob(os.path.join(ROOT, "data", "kv", "stories260k", "layer*.bf16")))
    kv_nol0v = os.path.join(args.tmp, "splitzip_data_kv_no_l0v.bf16")
    for path, files in ((kv, kv_files), (kv_nol0v, [p for p in kv_files if os.path.basename(p) != "layer00_v.bf16"])):
        with open(path, "wb") as f:
            for p in files:
                f.write(open(p, "rb").read())
    inputs.append(("data_kv", kv))
    inputs.append(("data_kv_no_l0v", kv_nol0v))
    # fp16 KV: the same real values cast (bf16 bits -> fp32 -> fp16).
    kv16 = os.path.join(args.tmp, "splitzip_data_kv.fp16")
    b = np.frombuffer(open(kv, "rb").read(), dtype=np.uint16)
    f32 = (b.astype(np.uint32) << 16).view(np.float32)
    with np.errstate(over="ignore"):
        f32.astype(np.float16).tofile(kv16)
    inputs.append(("data_kv_fp16", kv16))

    results = []
    for name, path in inputs:
        dtype = "fp16" if path.endswith(".fp16") else "bf16"
        raw = open(path, "rb").read()
        for t in args.threads:
            # the reference rows only once per input (1 thread, slow)
            sz, variants = splitzip_rows(args.exe, path, t, args.reps, ref=(t == 1), dtype=dtype)
            if args.also_target and t == 1:
                sz += splitzip_rows(args.exe, path, t, args.reps, False, dtype, args.also_target)[0]
            for r in sz:
                results.append(dict(r, input=name, bytes=len(raw)))
            if variants:
                results.append(dict(variants, input=name))
            for label, c, d in peers(raw, t, dtype):
                r = bench_peer(label, c, d, raw, args.reps, t)
                results.append(dict(r, input=name, bytes=len(raw)))
                print(json.dumps(results[-1]), flush=True)

    os.makedirs(args.out, exist_ok=True)
    meta = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
            "load": os.getloadavg(), "size_mib": args.size_mib,
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "(default)"), "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "reps": args.reps}
    with open(os.path.join(args.out, "capacity.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    write_md(results, meta, os.path.join(args.out, "capacity.md"))
    write_png(results, os.path.join(args.out, "capacity.png"))


def write_md(results, meta, path):
    lines = ["# Capacity mode vs peers (issue 18)", "",
             "Generated by `bench/capacity/run_peers.py` (same run for every row). Do not edit by hand.", "",
             f"- {meta['time']}, {meta['cpus']} CPUs, load average at the end {tuple(round(x, 2) for x in meta['load'])}; "
             f"best of {meta['reps']} alternating compress/decompress runs; GB/s of uncompressed bytes.",
             "- The machine is shared by several engineers: figures are noisy; re-run on a quiet machine for final numbers. "
             f"OMP_WAIT_POLICY={meta.get('omp_wait_policy', '(default)')} (with the default, spinning OpenMP threads on an "
             "oversubscribed machine collapse every 2-thread figure, the fast mode's too).",
             f"- `realstat`: {meta.get('size_mib', 256)} MiB bf16, sign+exponent of the real stories260K KV in order (tiled), random 7 mantissa bits. "
             "`realstat_shuffled`: the same bytes with every aligned 64 Ki-element block shuffled in place (same per-block "
             "histograms, so the same capacity-mode size; LZ matches gain nothing). "
             "`data_kv`: data/kv/stories260k/*.bf16 (5 MiB, real). `data_kv_no_l0v`: the same without layer00_v.bf16 "
             "(4.5 MiB): layer-0 V is a function of the token id alone, so it repeats with the tokens and LZ coders find "
             "the repeats; it is 1 of the 10 files here, 1/64 to 1/128 of the KV of a 32- to 64-layer model. "
             "`data_kv_fp16`: the same values cast to fp16 "
             "(OpenZL's BFloat16Deconstruct graph and ZipNN's bfloat16 mode do not apply to fp16 and are left out there). "
             "A bf16 value has 7 mantissa bits, so its fp16 cast has 3 zero low mantissa bits: byte-shuffling LZ coders "
             "(Blosc2, zstd) find those, the capacity mode stores the residual bits raw; fp16 KV from an fp16 model would "
             "not have them.",
             "- splitzip (cpu) = the library's cpu backend as shipped (bench/capacity/build_lib.sh): `splitzip-capacity (cpu)` "
             "is the public API with default options (the block checksum written and verified), `(cpu, no checksum)` the "
             "capacity codec (cpu/capacity_codec.cpp) without it; (reference) = the scalar oracle.",
             "- `/cpu-s` columns: GB per CPU-second of the process (all threads): with one thread, the codec's speed when it has a core; "
             "the wall-clock columns are what the loaded machine gave.", ""]
    for inp in sorted({r["input"] for r in results}):
        lines += [f"## {inp}", "", "| codec | threads | ratio | encode GB/s | decode GB/s | encode GB/cpu-s | decode GB/cpu-s | round trip |",
                  "|---|---:|---:|---:|---:|---:|---:|---|"]
        for r in results:
            if r["input"] != inp or r.get("variants"):
                continue
            ec = f"{r['encode_gbps_per_cpu_s']:.3f}" if "encode_gbps_per_cpu_s" in r else "-"
            dc = f"{r['decode_gbps_per_cpu_s']:.3f}" if "decode_gbps_per_cpu_s" in r else "-"
            lines.append(f"| {r['codec']} | {r['threads']} | {r['ratio']:.4f} | {r['encode_gbps']:.3f} | "
                         f"{r['decode_gbps']:.3f} | {ec} | {dc} | {'exact' if r['exact'] else 'NOT exact'} |")
        for r in results:
            if r["input"] == inp and r.get("variants"):
                lines += ["", "Coder alternatives on this input (exact sizes from the block histograms; docs/DESIGN.md section 2):", "",
                          "| variant | ratio |", "|---|---:|"]
                for k in ("ratio_h0_block_bound", "ratio_huffman_unlimited_no_overhead", "ratio_L12_S8", "ratio_L12_S16",
                          "ratio_L12_S32"):
                    lines.append(f"| {k} | {r[k]:.4f} |")
                lines.append(f"| bits/exponent: order-0 per block {r['bits_per_exp_h0_block']:.3f}, whole input "
                             f"{r['bits_per_exp_h0_whole']:.3f} | |")
        lines.append("")
    # A hand-written section at the end ("## Per-core ..."), if any, is kept.
    keep = ""
    if os.path.exists(path):
        old = open(path).read()
        i = old.find("\n## Per-core")
        if i >= 0:
            keep = old[i:]
    open(path, "w").write("\n".join(lines) + "\n" + keep)


def write_png(results, path):
    """Ratio against encode and decode GB/s (1 thread, real-statistics input):
    one marker per codec in a legend, this project's codecs filled and
    coloured, the peers hollow and grey-toned, memcpy a dashed line."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in results if not r.get("variants") and r["input"] == "realstat" and r["threads"] == 1]
    memcpy = max((r["decode_gbps"] for r in rows if r["codec"] == "memcpy"), default=None)
    rows = [r for r in rows if r["codec"] != "memcpy"]
    ours = [r for r in rows if r["codec"].startswith("splitzip")]
    peers = [r for r in rows if not r["codec"].startswith("splitzip")]
    own_markers = "os^Dv<>p"
    own_colors = ["#1f4e9c", "#2a7fd4", "#0b8a4a", "#5cb85c", "#7b3fa0", "#b07ad1", "#c0392b", "#e67e22"]
    peer_markers = "o^sDvP*hX"
    peer_colors = ["#555555", "#8c6d31", "#999999", "#b5651d", "#333333", "#a0a0a0", "#6b4226", "#777777", "#444444"]
    fig, axes = plt.subplots(1, 2, figsize=(14, 5.6), sharey=True)
    handles = []
    for ax, key, name in ((axes[0], "encode_gbps", "encode"), (axes[1], "decode_gbps", "decode")):
        handles = []
        for i, r in enumerate(ours):
            handles.append(ax.scatter(r[key], r["ratio"], s=70, marker=own_markers[i % len(own_markers)],
                                      color=own_colors[i % len(own_colors)], edgecolors="black", linewidths=0.6,
                                      zorder=3, label=r["codec"]))
        for i, r in enumerate(peers):
            label = r["codec"] + ("" if r["exact"] else " (round trip NOT exact)")
            handles.append(ax.scatter(r[key], r["ratio"], s=60, marker=peer_markers[i % len(peer_markers)],
                                      facecolors="none", edgecolors=peer_colors[i % len(peer_colors)], linewidths=1.4,
                                      zorder=2, label=label))
        if memcpy:
            handles.append(ax.axvline(memcpy, color="black", ls="--", lw=0.8, label="memcpy (same run)"))
        ax.set_xscale("log")
        ax.set_xlabel(name + " GB/s (1 thread, log scale; right is faster)")
        ax.set_title(name)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("compression ratio (up is smaller)")
    labels = [h.get_label() for h in handles]
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(0.735, 0.5), fontsize=8, frameon=True,
               title="filled: splitzip    hollow: peers", title_fontsize=8)
    fig.suptitle("real-statistics bf16, one thread: ratio against throughput", fontsize=11)
    fig.tight_layout(rect=(0, 0, 0.73, 1))
    fig.savefig(path, dpi=120)


def png_from_json(json_path, png_path):
    write_png(json.load(open(json_path))["results"], png_path)


if __name__ == "__main__":
    main()
