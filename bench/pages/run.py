#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Pages at buffer speed (issue 29, item 5): page size against GB/s, one thread.

Real KV, cut into pages of 4 KiB to 4 MiB taken in order:
  smollm2      ../shared/data/kv/smollm2/layer*.bf16 (SmolLM2-135M-Instruct, 30
               layers x K and V, [2 seq, 3 heads, 512 pos, 64 dim], 22.5 MiB)
  stories260k  data/kv/stories260k/layer*.bf16 (the bundled KV, 5 MiB)
Every codec codes the same pages, each page an independent frame, one thread,
each at its best in Python:
  memcpy             every page copied in one native call (the baseline)
  splitzip fast / capacity
                     compress_batch(pages) with the pages as the rows of one
                     array, one frame (bytes) per page, checksum on (the
                     default); decompress_batch(frames, rows) into one array
  splitzip capacity + tables
                     the same calls with tables= capacity table sets
                     (calibrate(mode="capacity"), the default table count, 1:
                     docs/DESIGN.md 7a), held out: every
                     layer file (one layer, K or V) holds two halves of whole
                     sequences (smollm2: sequence 0 | 1; stories260k:
                     sequences 0-7 | 8-15). Each file gets two sets, one
                     calibrated on each half, and a page is coded with its
                     file's set of the other half (encode: one batch call
                     over every page, tables= a set per page, as an offload
                     store puts a block's layers; decode: one batch call
                     over every page, given every set, as a serving stack
                     fetches a block's layers). Pages longer than a half
                     (256 KiB and up on smollm2, 512 KiB and up on
                     stories260k) use two sets pooled over all files' halves
                     instead, and reach past their half, so part of such a
                     page was in its set's calibration data: those rows are
                     not held out.
  zstd -1            python-zstandard's batch calls: multi_compress_to_buffer /
                     multi_decompress_to_buffer (one C loop over the pages)
  Blosc2 shuffle + zstd -1
                     one SChunk of chunksize = the page (one C loop; each chunk
                     is independent) and get_slice of the whole
  OpenZL BF16Deconstruct + Huffman
                     no batch call: one compress and one decompress call per
                     page, the compressor and contexts built once
Also, in the same run, the splitzip modes on one 256 MiB buffer (the real KV
repeated) through compress_into / decompress_into: the figure the page
targets compare against.
Figures: GB of raw bytes per CPU-second of this process (the codecs run on
the calling thread; CPU time is less disturbed by other work on a shared
machine than wall time), the best of REPS runs, the codecs alternating
within each run. "exact": every page of every decode compared bit for bit.

  python bench/pages/run.py [--reps 5] [--data smollm2 stories260k]
Writes bench/results/pages.md, pages.json and pages.png.
"""
import argparse
import glob
import json
import os
import platform
import time

import numpy as np

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # idle OpenMP workers must not spin into the CPU times

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def shared_kv(name):
    """../shared/data/kv/<name> beside the checkout (a worktree one level deeper: ../../shared)."""
    for up in ("..", os.path.join("..", "..")):
        d = os.path.join(ROOT, up, "shared", "data", "kv", name)
        if os.path.isdir(d):
            return d
    return os.path.join(ROOT, "..", "shared", "data", "kv", name)
SIZES_KIB = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
DATA = {
    "smollm2": shared_kv("smollm2"),
    "stories260k": os.path.join(ROOT, "data", "kv", "stories260k"),
}
CODECS = ["memcpy", "splitzip fast", "splitzip capacity", "splitzip capacity + tables", "zstd -1 (batch)",
          "Blosc2 shuffle+zstd-1 (SChunk)", "OpenZL bf16+Huffman (per page)"]


def load(name):
    files = sorted(glob.glob(os.path.join(DATA[name], "layer*.bf16")))
    if not files:
        raise SystemExit(f"no KV at {DATA[name]}")
    parts = [np.fromfile(f, "<u2") for f in files]
    if len({p.size for p in parts}) != 1:
        raise SystemExit(f"{name}: layer files of different sizes")
    return np.concatenate(parts), parts[0].size


def cpu(f):
    t = time.process_time()
    r = f()
    return time.process_time() - t, r


class Splitzip:
    def __init__(self, mode):
        import ml_dtypes
        import splitzip_kv
        self.sz, self.mode, self.bf16 = splitzip_kv, mode, ml_dtypes.bfloat16

    def setup(self, pages):
        self.src = pages.view(self.bf16)
        self.out = np.zeros_like(self.src)  # touched: no page faults inside the timing

    def encode(self):
        return self.sz.compress_batch(self.src, mode=self.mode, threads=1)

    def decode(self, frames):
        self.sz.decompress_batch(frames, self.out, threads=1)
        return self.out.view(np.uint16)

    @staticmethod
    def size(frames):
        return sum(len(f) for f in frames)


class SplitzipTables(Splitzip):
    """Capacity mode with held-out table sets (the docstring): one set per
    layer file (layer and K/V) and half, a page coded with its file's set
    calibrated on the other half; pages longer than a half-file use the
    sets pooled over all files (their half)."""

    def __init__(self, file_elems):
        super().__init__("capacity")
        self.file_elems = file_elems

    def calibrate(self, raw):
        half = self.file_elems // 2
        files = raw.reshape(-1, self.file_elems)
        # sets[f][h]: file f's set calibrated on its half h (one sample: as one frame's elements).
        self.sets = [[self.sz.calibrate(f[h * half:(h + 1) * half].view(self.bf16), mode="capacity")
                      for h in (0, 1)] for f in files]
        self.pooled = [self.sz.calibrate([f[h * half:(h + 1) * half].view(self.bf16) for f in files],
                                         mode="capacity") for h in (0, 1)]

    def setup(self, pages):
        n = pages.shape[1]
        half = self.file_elems // 2
        self.page_sets = []
        for i in range(pages.shape[0]):
            f, off = divmod(i * n, self.file_elems)
            h = int(off >= half)
            # the set of the other half: of the page's file, or pooled when the page is longer than a half
            self.page_sets.append(self.sets[f][1 - h] if n <= half else self.pooled[1 - h])
        self.src = pages.view(self.bf16)
        self.out = np.zeros_like(self.src)  # touched: no page faults inside the timing
        self.all_sets = [t for pair in self.sets for t in pair] + list(self.pooled)

    def encode(self):
        return self.sz.compress_batch(self.src, tables=self.page_sets, threads=1)

    def decode(self, frames):
        self.sz.decompress_batch(frames, self.out, tables=self.all_sets, threads=1)
        return self.out.view(np.uint16)


class Memcpy:
    def setup(self, pages):
        from splitzip_kv import _core
        self.core = _core
        n, b = pages.shape[0], pages.shape[1] * 2
        self.buf = np.zeros(2 * n * b, np.uint8)
        self.buf[:n * b] = pages.reshape(-1).view(np.uint8)
        at = np.arange(n, dtype=np.uint64) * np.uint64(b)
        self.src, self.dst = at, at + np.uint64(n * b)
        self.len = np.full(n, b, np.uint64)
        self.shape = pages.shape

    def encode(self):
        self.core.copy_spans(self.buf, self.dst, self.src, self.len)
        return None

    def decode(self, _):
        self.core.copy_spans(self.buf, self.src, self.dst, self.len)
        return self.buf[:self.buf.size // 2].view(np.uint16).reshape(self.shape)

    @staticmethod
    def size(_):
        return None


class Zstd:
    def __init__(self):
        import zstandard
        self.c = zstandard.ZstdCompressor(level=1)
        self.d = zstandard.ZstdDecompressor()
        self.version = zstandard.__version__

    def setup(self, pages):
        self.pages = [p.tobytes() for p in pages]
        self.shape = pages.shape

    def encode(self):
        return self.c.multi_compress_to_buffer(self.pages, threads=0)

    def decode(self, blob):
        r = self.d.multi_decompress_to_buffer(blob, threads=0)
        return np.frombuffer(b"".join(r[i].tobytes() for i in range(len(r))), np.uint16).reshape(self.shape)

    def decode_timed(self, blob):
        return self.d.multi_decompress_to_buffer(blob, threads=0)

    @staticmethod
    def size(blob):
        return sum(len(blob[i]) for i in range(len(blob)))


class Blosc2:
    def __init__(self):
        import blosc2
        self.b = blosc2
        blosc2.set_nthreads(1)
        self.version = blosc2.__version__

    def setup(self, pages):
        self.raw = pages.tobytes()
        self.page = pages.shape[1] * 2
        self.shape = pages.shape

    def encode(self):
        b = self.b
        cp = b.CParams(codec=b.Codec.ZSTD, clevel=1, filters=[b.Filter.SHUFFLE], typesize=2, nthreads=1)
        return b.SChunk(chunksize=self.page, data=self.raw, cparams=cp, dparams=b.DParams(nthreads=1))

    def decode(self, s):
        return np.frombuffer(s.get_slice(0, len(self.raw) // 2), np.uint16).reshape(self.shape)

    @staticmethod
    def size(s):
        return s.cbytes


class OpenZL:
    def __init__(self):
        import openzl.ext as zl
        self.zl = zl
        c = zl.Compressor()
        g = zl.nodes.BFloat16Deconstruct()(c, sign_frac=zl.graphs.Store()(c), exponent=zl.graphs.Huffman()(c))
        c.select_starting_graph(g)
        self.comp = c
        self.cctx = zl.CCtx()  # reused; the compressor is referenced again per call (OpenZL asks for it)
        self.dctx = zl.DCtx()

    def setup(self, pages):
        self.pages = list(pages)
        self.shape = pages.shape

    def encode(self):
        zl, cctx, c = self.zl, self.cctx, self.comp
        out = []
        for p in self.pages:
            cctx.ref_compressor(c)
            cctx.set_parameter(zl.CParam.FormatVersion, zl.MAX_FORMAT_VERSION)
            out.append(cctx.compress([zl.Input(zl.Type.Numeric, p)]))
        return out

    def decode(self, blobs):
        d = self.dctx
        return [d.decompress(b)[0].content.as_bytes() for b in blobs]

    def check(self, decoded):
        return np.frombuffer(b"".join(decoded), np.uint16).reshape(self.shape)

    @staticmethod
    def size(blobs):
        return sum(len(b) for b in blobs)


def codecs(raw, file_elems):
    tables = SplitzipTables(file_elems)
    tables.calibrate(raw)
    return {"memcpy": Memcpy(), "splitzip fast": Splitzip("fast"), "splitzip capacity": Splitzip("capacity"),
            "splitzip capacity + tables": tables,
            "zstd -1 (batch)": Zstd(), "Blosc2 shuffle+zstd-1 (SChunk)": Blosc2(),
            "OpenZL bf16+Huffman (per page)": OpenZL()}


def sweep(raw, reps, cs):
    rows = []
    for kib in SIZES_KIB:
        n = kib * 512
        count = raw.size // n
        if count == 0:
            continue
        pages = raw[:count * n].reshape(count, n)
        best = {c: [1e9, 1e9] for c in cs}
        size, exact = {}, {}
        for c in cs.values():
            c.setup(pages)
        for rep in range(reps):
            for name, c in cs.items():
                te, blob = cpu(c.encode)
                if isinstance(c, Zstd):
                    td, _ = cpu(lambda: c.decode_timed(blob))
                    back = c.decode(blob) if rep == 0 else None
                elif isinstance(c, OpenZL):
                    td, dec = cpu(lambda: c.decode(blob))
                    back = c.check(dec) if rep == 0 else None
                else:
                    td, back = cpu(lambda: c.decode(blob))
                best[name][0] = min(best[name][0], te)
                best[name][1] = min(best[name][1], td)
                if rep == 0:
                    size[name] = c.size(blob)
                    exact[name] = back is not None and np.array_equal(back, pages)
                del blob
        mc = best["memcpy"]
        for name in cs:
            e, d = best[name]
            rows.append({"page_kib": kib, "pages": count, "codec": name,
                         "ratio": pages.nbytes / size[name] if size[name] else 1.0,
                         "encode_gbps": pages.nbytes / e / 1e9, "decode_gbps": pages.nbytes / d / 1e9,
                         "encode_x_memcpy": mc[0] / e, "decode_x_memcpy": mc[1] / d,
                         "exact": bool(exact[name])})
        print(f"  {kib} KiB: " + ", ".join(f"{r['codec'].split(' (')[0]} {r['encode_gbps']:.2f}/{r['decode_gbps']:.2f}"
                                           for r in rows[-len(cs):]), flush=True)
    return rows


def big_buffer(raw, reps):
    """The splitzip modes on one 256 MiB buffer (compress_into / decompress_into)."""
    import ml_dtypes
    import splitzip_kv as sz
    n = 256 << 19
    a = np.resize(raw, n).view(ml_dtypes.bfloat16)
    out = np.zeros(sz.compress_bound("bf16", n), np.uint8)  # touched: no page faults inside the timing
    back = np.zeros_like(a)
    res = {}
    best = {m: [1e9, 1e9] for m in ("fast", "capacity")}
    for _ in range(reps):
        for m in best:
            te, r = cpu(lambda: sz.compress_into(a, out, mode=m, threads=1))
            td, _ = cpu(lambda: sz.decompress(out[:r.size], out=back, threads=1))
            best[m] = [min(best[m][0], te), min(best[m][1], td)]
            assert np.array_equal(back.view(np.uint16), a.view(np.uint16))
    for m, (e, d) in best.items():
        res[m] = {"encode_gbps": a.nbytes / e / 1e9, "decode_gbps": a.nbytes / d / 1e9}
    return res


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sets = list(results)
    fig, axes = plt.subplots(len(sets), 2, figsize=(12, 4.2 * len(sets)), squeeze=False)
    for row, name in enumerate(sets):
        rows = results[name]["rows"]
        for col, key in enumerate(("encode_gbps", "decode_gbps")):
            ax = axes[row][col]
            for codec in CODECS:
                pts = [(r["page_kib"], r[key]) for r in rows if r["codec"] == codec]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=codec)
            for m, style in (("fast", "--"), ("capacity", ":")):
                ax.axhline(results[name]["big"][m][key], linestyle=style, color="grey",
                           label=f"splitzip {m}, one 256 MiB buffer")
            ax.set_xscale("log", base=2)
            ax.set_xticks(SIZES_KIB, [f"{k}K" if k < 1024 else f"{k // 1024}M" for k in SIZES_KIB])
            ax.set_xlabel("page size")
            ax.set_ylabel("GB per CPU-second (raw bytes)")
            ax.set_title(f"{name}: {'encode' if col == 0 else 'decode'}, one thread")
            ax.grid(alpha=0.3)
    axes[0][1].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def markdown(results, meta):
    out = ["# Pages at buffer speed: page size against GB/s (bench/pages/run.py)", "",
           f"{meta['when']}, {meta['host']}; {meta['versions']}; best of {meta['reps']} runs, the codecs "
           "alternating within each run; one thread; GB of raw bytes per CPU-second; "
           "'x memcpy': the codec's speed over memcpy of the same pages in the same run. "
           "Every page an independent frame; splitzip with its default checksum, the peers without one. "
           "How each codec is called: the docstring of bench/pages/run.py. "
           "![pages](pages.png)", ""]
    for name, r in results.items():
        big = r["big"]
        out += [f"## {name} ({r['mib']:.1f} MiB of real bf16 KV)", "",
                f"splitzip on one 256 MiB buffer (this KV repeated; compress_into / decompress_into), same run: "
                f"fast {big['fast']['encode_gbps']:.2f} / {big['fast']['decode_gbps']:.2f}, capacity "
                f"{big['capacity']['encode_gbps']:.2f} / {big['capacity']['decode_gbps']:.2f} GB/s (encode / decode).", "",
                "| page | codec | ratio | encode GB/s | decode GB/s | encode x memcpy | decode x memcpy | round trip |",
                "|---:|---|---:|---:|---:|---:|---:|---|"]
        for row in r["rows"]:
            k = row["page_kib"]
            out.append(f"| {k if k < 1024 else k // 1024} {'KiB' if k < 1024 else 'MiB'} | {row['codec']} | "
                       f"{row['ratio']:.4f} | {row['encode_gbps']:.2f} | {row['decode_gbps']:.2f} | "
                       f"{row['encode_x_memcpy']:.3f} | {row['decode_x_memcpy']:.3f} | "
                       f"{'exact' if row['exact'] else 'DIFFERS'} |")
        out += ["", "Targets (issue 29) on these pages, as measured here:", "",
                "| target | page | measured | met |", "|---|---:|---|---|"]
        for m, codec, want in (("fast", "splitzip fast", 0.85), ("capacity", "splitzip capacity", 0.85),
                               ("capacity", "splitzip capacity + tables", 0.85)):
            for k in (32, 64):
                row = next(x for x in r["rows"] if x["page_kib"] == k and x["codec"] == codec)
                fe = row["encode_gbps"] / big[m]["encode_gbps"]
                fd = row["decode_gbps"] / big[m]["decode_gbps"]
                note = {"splitzip fast": "fast pages",
                        "splitzip capacity": "capacity pages without tables (for reference: the target is with a set)",
                        "splitzip capacity + tables": "capacity pages with a held-out table set"}[codec]
                ref = "its 256 MiB figure" if m == "fast" else "the capacity 256 MiB figure"
                out.append(f"| {note} >= {want}x {ref} | {k} KiB | encode {fe:.2f}x, decode {fd:.2f}x | "
                           f"{'yes' if fe >= want and fd >= want else 'no'} |")
        out.append("")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--data", nargs="+", default=["smollm2", "stories260k"], choices=list(DATA))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    import blosc2
    import openzl.ext as zl
    import splitzip_kv
    import zstandard
    results = {}
    for name in args.data:
        raw, file_elems = load(name)
        print(f"{name}: {raw.nbytes / 2**20:.1f} MiB", flush=True)
        cs = codecs(raw, file_elems)
        results[name] = {"mib": raw.nbytes / 2**20, "rows": sweep(raw, args.reps, cs),
                         "big": big_buffer(raw, args.reps)}
    meta = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "host": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}",
            "versions": f"splitzip {splitzip_kv.__version__}, zstandard {zstandard.__version__}, "
                        f"blosc2 {blosc2.__version__}, OpenZL {zl.LIBRARY_VERSION_MAJOR}.{zl.LIBRARY_VERSION_MINOR}."
                        f"{zl.LIBRARY_VERSION_PATCH}",
            "reps": args.reps}
    try:
        with open("/proc/cpuinfo") as f:
            model = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
            flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags"))
        meta["host"] = f"{model} ({'AVX-512' if 'avx512bw' in flags else 'AVX2'}), {os.cpu_count()} CPUs, " \
                       f"load {os.getloadavg()[0]:.1f} at the end"
    except (OSError, StopIteration):
        pass
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "pages.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    with open(os.path.join(args.out, "pages.md"), "w") as f:
        f.write(markdown(results, meta))
    plot(results, os.path.join(args.out, "pages.png"))
    print("wrote", os.path.join(args.out, "pages.md"))


if __name__ == "__main__":
    main()
