#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Figures and tables from run_sweep.py results (JSON lines).

  build-transfer/venv/bin/python examples/transfer/make_report.py \\
      build-transfer/transfer_results.jsonl --figures docs/figures --tables out.md

Per configuration (rate, payload, mode, backend) the median over repeats is
used. The model (bench/pipeline_model.h predict, the paper's Appendix B) is fed the
stage rates measured in the same compressed run (G_enc = raw bytes / encode
busy time, G_dec likewise), its compression ratio, and the link rate B seen
by the raw run of the same configuration (payload / raw time); it predicts
the compressed time, set beside the measured one.
"""
import argparse
import collections
import json
import os
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import sztx  # noqa: E402

MIB = 1 << 20
RATE_ORDER = ["250mbit", "500mbit", "1gbit", "2gbit", "5gbit", "10gbit", "off"]


def rate_key(r):
    return RATE_ORDER.index(r) if r in RATE_ORDER else len(RATE_ORDER)


def rate_label(r):
    return "unshaped" if r == "off" else r.replace("mbit", " Mbit/s").replace("gbit", " Gbit/s")


def load(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    bad = [r for r in rows if "error" in r or not r.get("bit_exact")]
    ok = [r for r in rows if "error" not in r and r.get("bit_exact")]
    return ok, bad


def group(rows):
    """(rate, source, payload_bytes) -> {'raw' | backend: [runs]}"""
    g = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in rows:
        key = (r["rate"], r["source"], r["payload_bytes"])
        g[key][r["mode"] if r["mode"].startswith("raw") else r["backend"] or "auto"].append(r)
    return g


def med(runs, field):
    return statistics.median(r[field] for r in runs)


def summarize(g):
    """One row per compressed configuration, with its raw baseline and model."""
    out = []
    for (rate, source, payload), modes in g.items():
        raws = {k: med(v, "wall_s") for k, v in modes.items() if k.startswith("raw")}
        if not raws:
            continue
        # The baseline is the faster raw submission (one batch, or the
        # compressed path's window), so the speedup is never flattered.
        raw_kind = min(raws, key=raws.get)
        raw_s = raws[raw_kind]
        link_Bps = payload / raw_s
        for backend, runs in modes.items():
            if backend.startswith("raw"):
                continue
            comp_s = med(runs, "wall_s")
            enc_s, dec_s = med(runs, "encode_s"), med(runs, "decode_s")
            ratio = med(runs, "ratio")
            frames = runs[0]["frames"]
            pred = sztx.predict(payload / enc_s, payload / dec_s, link_Bps, ratio, payload, frames)
            out.append(dict(rate=rate, source=source, payload=payload, backend=backend,
                            raw_s=raw_s, comp_s=comp_s, speedup=raw_s / comp_s, ratio=ratio,
                            enc_s=enc_s, dec_s=dec_s, link_s=med(runs, "link_s"),
                            link_MBps=link_Bps / 1e6, G_enc=payload / enc_s / 1e6,
                            G_dec=payload / dec_s / 1e6, pred_s=pred["compressed_s"],
                            pred_speedup=raw_s / pred["compressed_s"],
                            bottleneck=pred["bottleneck"], b_hide=pred["b_hide_Bps"] / 1e6,
                            n=len(runs), n_raw=len(modes[raw_kind]), raw_kind=raw_kind,
                            raw_batch_s=raws.get("raw"), raw_window_s=raws.get("raw-window")))
    return out


def fig_vs_size(rows, rate, path):
    sel = sorted([r for r in rows if r["rate"] == rate and r["source"] == "synthetic"],
                 key=lambda r: r["payload"])
    if not sel:
        return False
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    raw = sorted({(r["payload"], r["raw_s"]) for r in sel})
    ax.plot([p / MIB for p, _ in raw], [t for _, t in raw], "o-", color="k", label="raw")
    for be, color in (("cpu", "tab:blue"), ("reference", "tab:orange")):
        s = [r for r in sel if r["backend"] == be]
        if not s:
            continue
        ax.plot([r["payload"] / MIB for r in s], [r["comp_s"] for r in s], "s-", color=color,
                label=f"SplitZip ({be} backend)")
        ax.plot([r["payload"] / MIB for r in s], [r["pred_s"] for r in s], "x--", color=color,
                alpha=0.7, label=f"model ({be})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("KV payload (MiB, bf16)")
    ax.set_ylabel("prefill -> decode handoff time (s)")
    ax.set_title(f"Mooncake TCP, link shaped to {rate_label(rate)}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def fig_vs_rate(rows, source, payload, path):
    sel = [r for r in rows if r["source"] == source and r["payload"] == payload]
    if not sel:
        return False
    rates = sorted({r["rate"] for r in sel}, key=rate_key)
    x = list(range(len(rates)))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    raw = {r["rate"]: r["raw_s"] for r in sel}
    ax1.plot(x, [raw[k] for k in rates], "o-", color="k", label="raw")
    for be, color in (("cpu", "tab:blue"), ("reference", "tab:orange")):
        s = {r["rate"]: r for r in sel if r["backend"] == be}
        xs = [i for i, k in enumerate(rates) if k in s]
        if not xs:
            continue
        ax1.plot(xs, [s[rates[i]]["comp_s"] for i in xs], "s-", color=color,
                 label=f"SplitZip ({be})")
        ax1.plot(xs, [s[rates[i]]["pred_s"] for i in xs], "x--", color=color, alpha=0.7,
                 label=f"model ({be})")
        ax2.plot(xs, [s[rates[i]]["speedup"] for i in xs], "s-", color=color,
                 label=f"measured ({be})")
        ax2.plot(xs, [s[rates[i]]["pred_speedup"] for i in xs], "x--", color=color, alpha=0.7,
                 label=f"model ({be})")
    ratio = statistics.median(r["ratio"] for r in sel)
    ax2.axhline(ratio, color="g", ls=":", label=f"ideal = ratio {ratio:.3f}")
    ax2.axhline(1.0, color="k", lw=0.8)
    for ax in (ax1, ax2):
        ax.set_xticks(x)
        ax.set_xticklabels([rate_label(k) for k in rates], rotation=20, fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.set_xlabel("link rate (tc tbf on the veth pair)")
    ax1.set_ylabel("handoff time (s)")
    ax2.set_ylabel("speedup over raw")
    what = f"{payload / MIB:.0f} MiB {'real KV (stories260k, tiled)' if source == 'real' else 'synthetic KV'}"
    ax1.set_title(f"Time vs link rate, {what}", fontsize=10)
    ax2.set_title("End-to-end speedup vs the ideal (the ratio)", fontsize=10)
    ax1.legend(fontsize=7)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def fig_breakdown(rows, source, payload, path):
    sel = sorted([r for r in rows if r["source"] == source and r["payload"] == payload],
                 key=lambda r: (r["backend"], rate_key(r["rate"])))
    if not sel:
        return False
    fig, ax = plt.subplots(figsize=(11, 4.2))
    labels, x = [], []
    for i, r in enumerate(sel):
        x.append(i)
        labels.append(f"{rate_label(r['rate'])}\n{r['backend']}")
        ax.bar(i - 0.2, r["enc_s"], 0.35, color="tab:green", label="encode (busy)" if i == 0 else None)
        ax.bar(i - 0.2, r["link_s"], 0.35, bottom=r["enc_s"], color="tab:blue",
               label="link (writes in flight)" if i == 0 else None)
        ax.bar(i - 0.2, r["dec_s"], 0.35, bottom=r["enc_s"] + r["link_s"], color="tab:purple",
               label="decode (busy)" if i == 0 else None)
        ax.bar(i + 0.2, r["comp_s"], 0.35, color="tab:gray",
               label="measured end-to-end (overlapped)" if i == 0 else None)
        ax.plot([i - 0.4, i + 0.4], [r["raw_s"]] * 2, color="k", lw=2,
                label="raw handoff" if i == 0 else None)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("seconds")
    ax.set_title(f"Stage breakdown, {payload / MIB:.0f} MiB {source} KV: stages sum (left) vs "
                 "pipelined total (right)", fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def fig_model(rows, path):
    fig, ax = plt.subplots(figsize=(5, 4.6))
    for be, color in (("cpu", "tab:blue"), ("reference", "tab:orange")):
        s = [r for r in rows if r["backend"] == be]
        ax.scatter([r["pred_s"] for r in s], [r["comp_s"] for r in s], color=color, s=18,
                   label=be)
    vals = [r["comp_s"] for r in rows] + [r["pred_s"] for r in rows]
    lo, hi = min(vals) * 0.8, max(vals) * 1.2
    ax.plot([lo, hi], [lo, hi], "k:", lw=1, label="measured = model")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("model: predicted compressed handoff (s)")
    ax.set_ylabel("measured (s)")
    ax.set_title("Appendix B model vs measurement", fontsize=10)
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def table(rows):
    head = ("| link | payload | backend | raw s (batch / window) | SplitZip s | speedup | "
            "ratio = ideal | B MB/s | G_enc MB/s | G_dec MB/s | B_hide MB/s | model s | "
            "model speedup | bottleneck | runs |")
    lines = [head, "|" + "---|" * 15]

    def f3(v):
        return "-" if v is None else f"{v:.3f}"

    for r in sorted(rows, key=lambda r: (r["source"], r["payload"], r["backend"],
                                         rate_key(r["rate"]))):
        what = f"{r['payload'] / MIB:.0f} MiB {r['source']}"
        lines.append(
            f"| {rate_label(r['rate'])} | {what} | {r['backend']} | "
            f"{f3(r['raw_batch_s'])} / {f3(r['raw_window_s'])} | "
            f"{r['comp_s']:.3f} | **{r['speedup']:.2f}x** | {r['ratio']:.3f} | "
            f"{r['link_MBps']:.0f} | {r['G_enc']:.0f} | {r['G_dec']:.0f} | {r['b_hide']:.0f} | "
            f"{r['pred_s']:.3f} | {r['pred_speedup']:.2f}x | {r['bottleneck']} | "
            f"{r['n_raw']}+{r['n']} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("results")
    p.add_argument("--figures", default="docs/figures")
    p.add_argument("--tables", default="-")
    p.add_argument("--size-rate", default="1gbit")
    args = p.parse_args()
    ok, bad = load(args.results)
    rows = summarize(group(ok))
    os.makedirs(args.figures, exist_ok=True)
    made = []
    f = os.path.join(args.figures, "transfer_time_vs_size.png")
    if fig_vs_size(rows, args.size_rate, f):
        made.append(f)
    for source in ("synthetic", "real"):
        payloads = sorted({r["payload"] for r in rows if r["source"] == source},
                          key=lambda pl: -len({r["rate"] for r in rows
                                              if r["source"] == source and r["payload"] == pl}))
        if not payloads:
            continue
        f = os.path.join(args.figures, f"transfer_vs_rate_{source}.png")
        if fig_vs_rate(rows, source, payloads[0], f):
            made.append(f)
        f = os.path.join(args.figures, f"transfer_breakdown_{source}.png")
        if fig_breakdown(rows, source, payloads[0], f):
            made.append(f)
    f = os.path.join(args.figures, "transfer_model.png")
    if rows and fig_model(rows, f):
        made.append(f)
    text = table(rows)
    text += f"\n\n{len(ok)} runs bit-exact, {len(bad)} failed or not bit-exact.\n"
    if args.tables == "-":
        print(text)
    else:
        open(args.tables, "w").write(text)
    for m in made:
        print("wrote", m)


if __name__ == "__main__":
    main()
