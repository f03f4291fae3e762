#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fp8_e4m3 capacity ratio with calibrated table sets (FORMAT.md 4.9), held out.

Through the CLI as users run it. For every layer file of the smollm2 e4m3 KV
([seq=2][head][pos][dim]): a set is calibrated on one sequence
(`splitzip calibrate --mode capacity --table-count T`) and the other sequence
is compressed with it (`compress --tables`), both ways; every frame is
decoded with the set and compared byte for byte. Beside it: per-block tables
(`--mode capacity`) and zstd -1 (CLI, --no-check) on the same bytes.

  python bench/e4m3/tables_ratio.py [--splitzip build/bin/splitzip] [--kv DIR]
      [--tables 1,8,32] [--pages 0,32768,65536] [--out bench/results/fp8_tables.md]
"""
import argparse
import glob
import os
import subprocess
import tempfile


def run(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--splitzip", default="build/bin/splitzip")
    ap.add_argument("--kv", default=os.path.join(os.path.dirname(__file__), "../../../shared/data/kv/smollm2"))
    ap.add_argument("--tables", default="1,8,32")
    ap.add_argument("--pages", default="0,32768,65536")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    sz = a.splitzip
    files = sorted(glob.glob(os.path.join(a.kv, "layer*_*.e4m3")))
    if not files:
        raise SystemExit(f"no layer*_*.e4m3 under {a.kv}")
    tmp = tempfile.mkdtemp(prefix="sz_e4m3_tables_")
    p = lambda n: os.path.join(tmp, n)
    rows = []
    for page in [int(x) for x in a.pages.split(",")]:
        for T in [int(x) for x in a.tables.split(",")]:
            tot = {"raw": 0, "own": 0, "set": 0, "zstd": 0}
            no_l0v = {"raw": 0, "own": 0, "set": 0, "zstd": 0}
            exact = True
            for f in files:
                b = open(f, "rb").read()
                h = len(b) // 2
                halves = [b[:h], b[h:]]
                for i in range(2):
                    open(p("cal.bin"), "wb").write(halves[i])
                    run(sz, "calibrate", "-q", "-f", "--dtype", "fp8_e4m3", "--mode", "capacity",
                        "--table-count", str(T), "-o", p("set.szct"), p("cal.bin"))
                    test = halves[1 - i]
                    pieces = [test[j:j + page] for j in range(0, len(test), page)] if page else [test]
                    for piece in pieces:
                        open(p("x.bin"), "wb").write(piece)
                        run(sz, "compress", "-q", "-f", "--dtype", "fp8_e4m3", "--mode", "capacity",
                            "-o", p("own.sz"), p("x.bin"))
                        run(sz, "compress", "-q", "-f", "--dtype", "fp8_e4m3", "--tables", p("set.szct"),
                            "-o", p("set.sz"), p("x.bin"))
                        z = subprocess.run(["zstd", "-1", "-c", "--no-check", p("x.bin")], check=True,
                                           capture_output=True).stdout
                        run(sz, "decompress", "-q", "-f", "--tables", p("set.szct"), "-o", p("y.bin"), p("set.sz"))
                        run(sz, "decompress", "-q", "-f", "-o", p("z.bin"), p("own.sz"))
                        exact &= open(p("y.bin"), "rb").read() == piece and open(p("z.bin"), "rb").read() == piece
                        sizes = {"raw": len(piece), "own": os.path.getsize(p("own.sz")),
                                 "set": os.path.getsize(p("set.sz")), "zstd": len(z)}
                        for k, v in sizes.items():
                            tot[k] += v
                            if "layer00_v" not in f:
                                no_l0v[k] += v
            r = lambda d, k: d["raw"] / d[k]
            rows.append((page, T, r(tot, "own"), r(tot, "set"), r(tot, "zstd"), r(no_l0v, "own"), r(no_l0v, "set"),
                         r(no_l0v, "zstd"), exact))
            print(*(f"{x:.4f}" if isinstance(x, float) else x for x in rows[-1]), flush=True)
    lines = ["| frames | T | per-block tables | set | zstd -1 | w/o L0 V: per-block | set | zstd -1 | exact |",
             "|---|--:|--:|--:|--:|--:|--:|--:|---|"]
    for page, T, *v, exact in rows:
        name = f"{page // 1024} KiB pages" if page else "one per sequence"
        lines.append(f"| {name} | {T} | " + " | ".join(f"{x:.4f}" for x in v) + f" | {'yes' if exact else 'NO'} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write("# fp8_e4m3 capacity ratio with calibrated table sets\n\n"
                     "`python bench/e4m3/tables_ratio.py --out bench/results/fp8_tables.md` on "
                     "`../shared/data/kv/smollm2/*.e4m3` (60 layer files, 11.25 MiB): each file's set is "
                     "calibrated on one sequence and codes the other (both ways), through the CLI. "
                     "Ratio = raw bytes / frame bytes (every header byte counted; the set file itself is "
                     "not counted: it is shared by every page of its layer and K/V). zstd -1: the zstd "
                     "CLI, `--no-check`, on the same pieces. exact: every frame decoded byte for byte.\n\n"
                     + text)


if __name__ == "__main__":
    main()
