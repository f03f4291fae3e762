#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Chart of bench/results/cli.json: usage: plot_cli_bench.py CLI.json OUT.png

Two panels (compress, decompress): best wall time of each whole process,
cp marked as a dashed line, each bar labelled with its ratio and peak RSS.
Needs matplotlib (exit 2 without it).
"""
import json
import sys


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 1
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return 2
    r = json.load(open(argv[1]))
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2))
    for ax, d in zip(axes, ("compress", "decompress")):
        rows = [x for x in r["rows"] if x["direction"] == d]
        labels = ["%s -T%d" % (x["tool"], x["threads"]) if x["tool"] != "cp" else "cp" for x in rows]
        times = [x["best"]["wall_s"] for x in rows]
        colors = ["#1f77b4" if x["tool"].startswith("splitzip") else "#7f7f7f" if x["tool"] == "cp" else "#ff7f0e"
                  for x in rows]
        y = range(len(rows))
        ax.barh(list(y), times, color=colors)
        ax.set_yticks(list(y))
        ax.set_yticklabels(labels, fontsize=8)
        ax.invert_yaxis()
        cp = next(x["best"]["wall_s"] for x in rows if x["tool"] == "cp")
        ax.axvline(cp, color="k", ls="--", lw=0.8)
        ax.axvline(1.5 * cp, color="k", ls=":", lw=0.8)
        for i, x in enumerate(rows):
            note = "%.3f s, %.0f MB" % (x["best"]["wall_s"], x["best"]["rss_kb"] / 1024)
            if x["ratio"]:
                note += ", ratio %.3f" % x["ratio"]
            ax.text(x["best"]["wall_s"], i, " " + note, va="center", fontsize=7)
        ax.set_xlim(0, max(times) * 1.6)
        ax.set_xlabel("wall time, best of %d (s); dashed: cp, dotted: 1.5x cp" % r["reps"])
        ax.set_title("%s %d MiB bf16 (tmpfs)" % (d, r["input_mib"]))
    from matplotlib.patches import Patch
    fig.legend(handles=[Patch(color="#1f77b4", label="splitzip (this project)"), Patch(color="#ff7f0e", label="peers"),
                        Patch(color="#7f7f7f", label="cp")], loc="lower center", ncol=3, fontsize=9, frameon=False)
    m = r["machine"]
    fig.suptitle("splitzip CLI vs zstd / lz4 / cp, whole processes - %s, %s CPUs, load %.1f"
                 % (m.get("cpu"), m["nproc"], m["loadavg_start"][0]), fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
