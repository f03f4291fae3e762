# SPDX-License-Identifier: Apache-2.0
"""Markdown tables of docs/OFFLOAD.md from bench_offload.py's JSON lines (the
latest record of each measurement wins).

    python examples/offload/report.py build-offload/offload_results.jsonl
"""

import json
import sys


def stage(r, field, a, b):
    d = r.get(field)
    return f"{d[a]:.2f} / {d[b]:.2f}" if d else "-"


def main(path):
    recs = [json.loads(l) for l in open(path) if l.strip()]
    cap = {r["codec"]: r for r in recs if r["bench"] == "capacity"}
    ratio = [r for r in recs if r["bench"] == "capacity_ratio"]
    tp = {}
    for r in recs:
        if r["bench"] == "throughput":
            tp[(r["rate"], r.get("mode", "fast"))] = r
    faults = [r for r in recs if r["bench"] == "faults"]

    if cap:
        print("### Capacity\n")
        print("| stored as | pool | chunks resident at first refusal | tokens (all 5 layers) | stored bytes / raw | stopped by |")
        print("|---|---:|---:|---:|---:|---|")
        for name in ("raw", "splitzip", "splitzip_nosplit"):
            if name in cap:
                r = cap[name]
                print(f"| {name} | {r['budget_bytes'] >> 20} MiB | {r['resident_chunks']} | {r['tokens']} "
                      f"| {r['stored_over_raw']:.4f} | {r['stop']} |")
        if ratio:
            r = ratio[-1]
            print(f"\nTokens stored, compressed / raw: **{r['tokens_compressed_over_raw']:.4f}x** "
                  f"(values stored whole, without the size-class split: "
                  f"{r['tokens_compressed_nosplit_over_raw']:.4f}x)\n")
    if tp:
        print("### Throughput (1 GiB, wall time including encode / decode, best of "
              f"{next(iter(tp.values()))['repeats']})\n")
        print("| link | raw put s | splitzip put s | put speedup | raw get s | splitzip get s | get speedup "
              "| B put / get MB/s | G_enc / G_dec MB/s | model put s (bound) | model get s (bound) "
              "| put: encode / store busy s | get: store / decode busy s |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        order = ["loopback", "off", "10gbit", "5gbit", "2gbit", "1gbit"]
        for rate, mode in sorted(tp, key=lambda x: (order.index(x[0]) if x[0] in order else 99,
                                                    x[1] != "fast")):
            r = tp[(rate, mode)]
            name = {"loopback": "loopback (unshaped)", "off": "veth, unshaped"}.get(rate, f"veth, {rate}")
            if mode != "fast":
                name += f", **{mode} mode**"
            print(f"| {name} | {r['raw_put_s']:.3f} | {r['sz_put_s']:.3f} | **{r['put_speedup']:.2f}x** "
                  f"| {r['raw_get_s']:.3f} | {r['sz_get_s']:.3f} | **{r['get_speedup']:.2f}x** "
                  f"| {r['B_put_MBps']} / {r['B_get_MBps']} | {r['G_enc_MBps']} / {r['G_dec_MBps']} "
                  f"| {r['model_put_s']:.3f} ({r['model_put_bound']}) "
                  f"| {r['model_get_s']:.3f} ({r['model_get_bound']}) "
                  f"| {stage(r, 'sz_put_stages_s', 'encode', 'put')} "
                  f"| {stage(r, 'sz_get_stages_s', 'fetch', 'decode')} |")
        print()
    for f in faults[-1:]:
        print("### Faults and integrity\n")
        print(f"Chunk operations: {f['chunk_ops']}\n")
        print("| counter | value |\n|---|---:|")
        for k, v in sorted(f["ledger"].items()):
            print(f"| {k} | {v} |")
        print()
        for name, ph in f["phases"].items():
            print(f"- **{name}**: {json.dumps(ph)}")
        print()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build-offload/offload_results.jsonl")
