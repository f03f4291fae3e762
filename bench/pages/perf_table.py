#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tables of bench/results/perf_pages.md from a perf_before_after.sh log:
the best round of every figure (each round already the tool's best of 5).

  python bench/pages/perf_table.py LOG
"""
import collections
import re
import sys

best = collections.defaultdict(dict)
def upd(label, key, v):
    d = best[label]
    d[key] = max(d.get(key, 0), v)
for line in open(sys.argv[1]):
    if " | " not in line or line.startswith("###"): continue
    label, rest = line.split(" | ", 1)
    label = label.strip()
    if "python pages" in label:
        m = re.search(r"cs=(\d) 256MiB ([\d.]+)/([\d.]+) 32KiB ([\d.]+)/([\d.]+) \(([\d.]+)x/([\d.]+)x\) 64KiB ([\d.]+)/([\d.]+) \(([\d.]+)x/([\d.]+)x\)", rest)
        cs = m.group(1); l = f"{label} cs={cs}"
        for k, i in [("big_e",2),("big_d",3),("p32_e",4),("p32_d",5),("p32_xe",6),("p32_xd",7),("p64_e",8),("p64_d",9),("p64_xe",10),("p64_xd",11)]:
            upd(l, k, float(m.group(i)))
    elif rest.startswith("dtype="):
        kv = dict(x.split("=") for x in rest.split() if "=" in x)
        for k in ("enc","dec","zstd1_enc","zstd1_dec","enc_x","dec_x"): upd(label, k, float(kv[k]))
    elif "checksum on:" in rest:
        m = re.search(r"encode ([\d.]+) GB/s.*?([\d.]+)x checksum-off\) \| decode\+verify ([\d.]+) GB/s.*?([\d.]+)x checksum-off", rest)
        upd(label, "cs_e", float(m.group(1))); upd(label, "cs_xe", float(m.group(2))); upd(label, "cs_d", float(m.group(3))); upd(label, "cs_xd", float(m.group(4)))
    elif "encode one" in rest:
        m = re.search(r"memcpy ([\d.]+).*encode one ([\d.]+) GB/s, batch ([\d.]+) GB/s.*decode one ([\d.]+) GB/s, batch ([\d.]+) GB/s", rest)
        for k, i in [("mem",1),("e1",2),("eb",3),("d1",4),("db",5)]: upd(label, k, float(m.group(i)))
    elif "threads 1:" in rest:
        m = re.search(r"memcpy ([\d.]+) GB/s \| encode ([\d.]+) GB/s.*decode ([\d.]+) GB/s", rest)
        for k, i in [("mem",1),("e",2),("d",3)]: upd(label, k, float(m.group(i)))


def row(*cells):
    print("| " + " | ".join(str(c) for c in cells) + " |")


def r2(a, b):
    return f"{a / b:.2f}x" if b else "-"


rounds = [l for l in open(sys.argv[1]) if l.startswith("## round")]
print(f"Rounds: {len(rounds)} ({rounds[0][3:].strip()} ... {rounds[-1][3:].strip()})\n")
print("### Fast mode pages through the Python batch call (smollm2 bf16, one thread)\n")
row("build", "checksum", "256 MiB encode / decode", "32 KiB pages encode / decode", "x 256 MiB", "64 KiB pages encode / decode",
    "x 256 MiB")
row(*["---"] * 2, *["---:"] * 5)
for side in ("before", "after"):
    for cs in ("1", "0"):
        b = best[f"{side} python pages cs={cs}"]
        row(side, "on" if cs == "1" else "off", f"{b['big_e']:.2f} / {b['big_d']:.2f}", f"{b['p32_e']:.2f} / {b['p32_d']:.2f}",
            f"{r2(b['p32_e'], b['big_e'])} / {r2(b['p32_d'], b['big_d'])}", f"{b['p64_e']:.2f} / {b['p64_d']:.2f}",
            f"{r2(b['p64_e'], b['big_e'])} / {r2(b['p64_d'], b['big_d'])}")
print("\n### Fast mode pages through the C++ batch call (64 MiB of pages against one 64 MiB buffer, dynamic codebook)\n")
row("target", "build", "pages", "checksum", "one buffer encode / decode", "batch encode / decode", "batch x one")
row(*["---"] * 4, *["---:"] * 3)
for tg in ("AVX3", "AVX2"):
    for side in ("before", "after"):
        for kib in ("32", "64"):
            for cs in ("", " checksum"):
                b = best.get(f"{side} {tg} fast batch {kib}KiB{cs}")
                if not b:
                    continue
                row(tg, side, f"{kib} KiB", "on" if cs else "off", f"{b['e1']:.2f} / {b['d1']:.2f}",
                    f"{b['eb']:.2f} / {b['db']:.2f}", f"{r2(b['eb'], b['e1'])} / {r2(b['db'], b['d1'])}")
print("\n### Checksum on against off, one 64 MiB buffer (offline codebook for fast mode)\n")
row("mode", "target", "build", "encode off / on", "ratio", "decode off / on", "ratio")
row(*["---"] * 3, *["---:"] * 4)
for mode in ("fast", "capacity"):
    for tg in ("AVX3", "AVX2"):
        for side in ("before", "after"):
            b = best.get(f"{side} {tg} {mode} 64MiB")
            if not b:
                continue
            row(mode, tg, side, f"{b['e']:.2f} / {b['cs_e']:.2f}", r2(b['cs_e'], b['e']), f"{b['d']:.2f} / {b['cs_d']:.2f}",
                r2(b['cs_d'], b['d']))
print("\n### Checksum on against off, batch pages (from the C++ batch rows above)\n")
row("target", "build", "pages", "encode off / on", "ratio", "decode off / on", "ratio")
row(*["---"] * 3, *["---:"] * 4)
for tg in ("AVX3", "AVX2"):
    for side in ("before", "after"):
        for kib in ("32", "64"):
            a, b = best.get(f"{side} {tg} fast batch {kib}KiB"), best.get(f"{side} {tg} fast batch {kib}KiB checksum")
            if a and b:
                row(tg, side, f"{kib} KiB", f"{a['eb']:.2f} / {b['eb']:.2f}", r2(b['eb'], a['eb']),
                    f"{a['db']:.2f} / {b['db']:.2f}", r2(b['db'], a['db']))
print("\n### Fast E4M3 against zstd -1 in the same process (smollm2 e4m3, 60 files, one frame per file, one thread, wall time)\n")
row("target", "build", "checksum", "ratio", "encode GB/s", "decode GB/s", "zstd -1 encode / decode", "encode x zstd -1",
    "decode x zstd -1")
row(*["---"] * 3, *["---:"] * 6)
for tg in ("AVX3", "AVX2"):
    for side in ("before", "after"):
        for cs in ("", " no-checksum"):
            b = best.get(f"{side} {tg} e4m3{cs}")
            if b:
                row(tg, side, "off" if cs else "on", "1.117", f"{b['enc']:.2f}", f"{b['dec']:.2f}",
                    f"{b['zstd1_enc']:.2f} / {b['zstd1_dec']:.2f}", r2(b['enc'], b['zstd1_enc']),
                    r2(b['dec'], b['zstd1_dec']))
