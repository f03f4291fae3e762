#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Whole-process CLI benchmark: splitzip against zstd, lz4 and cp.

usage: run_cli_bench.py [--splitzip PATH] [--size-mib 256] [--reps 3]
                        [--rss-mib 1024] [--workdir /dev/shm/...] [--out-dir bench/results]
                        [--frame-sweep 64K,128K,256K,512K,1M] [--plot-python PY] [--quick]
                        [--timing PATH_TO_splitzip_cpu_timing]

Times whole processes on a file in tmpfs, as a user runs them: splitzip
compress/decompress with DEFAULT options (dynamic codebook, checksum on) at
-T1 and -T2, the same in capacity mode (`--mode capacity`, FORMAT.md 4.6,
checksum on) at -T1 and -T2, next to zstd -1/-3 (-T1/-T2), lz4 -1 and cp, in
the same run, best of --reps runs taken in alternating order (every job once
per round). Every round checks every splitzip output: each decompress gives
the input back byte for byte, each compress gives the bytes of the reference
stream of its mode (the same for any -T); a difference stops the run.
Each process is timed by wall clock; its peak RSS, user/system time and page
faults come from GNU time (/usr/bin/time). Ratios are input bytes / output bytes.

Also: peak RSS of splitzip at --rss-mib (default 1 GiB) both ways, a frame
size sweep (dynamic vs calibrated codebook, no checksum), the ratio on the
bundled real KV, the issue-12 targets with PASS/MISS, capacity mode's
ratio and speed against zstd -1/-3 of the same run, and (when
splitzip_cpu_timing is built next to splitzip, or --timing names it) the CLI's
capacity -T1 times against the library's capacity codec on the same bytes in
memory, frame by frame as the CLI codes them. Writes
OUT_DIR/cli.json and OUT_DIR/cli.md, then OUT_DIR/cli.png with
plot_cli_bench.py (needs matplotlib: --plot-python names a Python that has
it, e.g. a venv's).

Input: make_bench_data.py (real KV sign+exponent, random low mantissa bits).
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
TIME = "/usr/bin/time"  # GNU time (Debian package `time`)


def run_timed(cmd, stdout_path=None):
    """Runs cmd under /usr/bin/time; returns dict(wall_s, user_s, sys_s, rss_kb, minflt, majflt).

    Peak RSS comes from GNU time (wait4 of a small C parent): a child forked
    straight from this Python process would report the interpreter's RSS
    inherited across fork as its own peak.
    """
    tfile = "/dev/shm/.splitzip-cli-bench-time.%d" % os.getpid()
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    try:
        t0 = time.perf_counter()
        p = subprocess.run([TIME, "-f", "%M %U %S %R %F %x", "-o", tfile] + cmd, stdout=out, stderr=subprocess.PIPE)
        wall = time.perf_counter() - t0
    finally:
        if stdout_path:
            out.close()
    fields = open(tfile).read().split()
    os.unlink(tfile)
    if p.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.decode(errors="replace").strip()))
    rss, user, sys_s, minflt, majflt = int(fields[-6]), float(fields[-5]), float(fields[-4]), int(fields[-3]), int(fields[-2])
    return {"wall_s": wall, "user_s": user, "sys_s": sys_s, "rss_kb": rss, "minflt": minflt, "majflt": majflt}


def rm(*paths):
    for p in paths:
        if os.path.exists(p):
            os.unlink(p)


def cmp_files(a, b):
    return subprocess.call(["cmp", "-s", a, b]) == 0


def must_match(out, ref, what):
    """Stops the run (exit 1, message on stderr) when out's bytes differ from ref's."""
    if not cmp_files(out, ref):
        sys.exit("run_cli_bench.py: MISMATCH: %s: %s differs from %s" % (what, out, ref))


def kernel_capacity(timing, src, mib, frame_kib, reps):
    """The library's capacity codec on src's bytes in memory, one thread,
    frames of frame_kib KiB with the checksum on (as the CLI's defaults),
    via splitzip_cpu_timing; best of reps rounds by thread CPU time. Returns
    dict(enc_s, dec_s, memcpy_s, ratio) or None when the tool fails."""
    import re
    cmd = [timing, "--mode", "capacity", "--frames", str(frame_kib), "--checksum", "--data", "file:" + src,
           "--mb", str(mib), "--reps", str(max(reps, 3)), "--cpu-time"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    m = re.search(r"memcpy [\d.]+ GB/s \(([\d.]+) s\) \| capacity encode [\d.]+ GB/s \(([\d.]+) s, .*"
                  r"decode [\d.]+ GB/s \(([\d.]+) s, .*ratio ([\d.]+)", p.stdout)
    if p.returncode != 0 or not m:
        print("kernel timing skipped: %s gave %d: %s" % (" ".join(cmd), p.returncode, p.stdout.strip()[-300:]))
        return None
    return {"cmd": " ".join([os.path.basename(timing)] + cmd[1:]).replace("file:" + src, "file:INPUT"),
            "memcpy_s": float(m.group(1)), "enc_s": float(m.group(2)), "dec_s": float(m.group(3)), "ratio": float(m.group(4))}


def write_floor(path, nbytes, threads, reps):
    """Best time to pwrite() nbytes into a new tmpfs file from `threads`
    threads at once (disjoint 512 KiB chunks, interleaved), as a multi-thread
    splitzip writes its output. The GIL is released inside each pwrite."""
    import threading
    chunk = 512 << 10
    buf = os.urandom(chunk)
    best = float("inf")
    for _ in range(reps):
        rm(path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)

        def work(k):
            for off in range(k * chunk, nbytes, threads * chunk):
                os.pwrite(fd, buf[:min(chunk, nbytes - off)], off)

        t0 = time.perf_counter()
        ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        best = min(best, time.perf_counter() - t0)
        os.close(fd)
    rm(path)
    return best


def process_start(cmd, reps):
    """Best wall time of a process that does no work (exec, loading, exit)."""
    best = float("inf")
    for _ in range(max(reps, 5)):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        best = min(best, time.perf_counter() - t0)
    return best


def machine_info(sz):
    info = {"platform": platform.platform(), "nproc": os.cpu_count(), "loadavg_start": os.getloadavg()}
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        info["l2"] = subprocess.check_output(["lscpu"], text=True).split("L2 cache:")[1].split("\n")[0].strip()
    except Exception:
        pass
    for tool, arg in (("zstd", "--version"), ("lz4", "--version")):
        try:
            info[tool] = subprocess.check_output([tool, arg], text=True, stderr=subprocess.STDOUT).strip().splitlines()[0].strip("* ")
        except Exception:
            info[tool] = None
    info["splitzip_backends"] = subprocess.check_output([sz, "backends"], text=True).strip().splitlines()
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--splitzip", default=os.path.join(REPO, "build", "bin", "splitzip"))
    ap.add_argument("--size-mib", type=int, default=256)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rss-mib", type=int, default=1024, help="input size of the RSS check (0 = skip)")
    ap.add_argument("--workdir", default=None, help="tmpfs scratch directory (default /dev/shm/splitzip-cli-bench.PID)")
    ap.add_argument("--out-dir", default=os.path.join(REPO, "bench", "results"))
    ap.add_argument("--frame-sweep", default="64K,128K,256K,512K,1M", help="'' to skip")
    ap.add_argument("--plot-python", default=sys.executable)
    ap.add_argument("--timing", default=None,
                    help="splitzip_cpu_timing for the kernel comparison (default: next to --splitzip; '' to skip)")
    ap.add_argument("--quick", action="store_true", help="64 MiB, 1 rep, RSS at 256 MiB, short sweep")
    ap.add_argument("--note", default="", help="one line on the build measured (commit, backends), put in cli.md")
    ap.add_argument("--render-only", metavar="JSON", help="rewrite OUT_DIR/cli.md (and the chart) from a cli.json")
    a = ap.parse_args()
    if a.render_only:
        result = json.load(open(a.render_only))
        if a.note:
            result["note"] = a.note
        with open(a.render_only, "w") as f:
            json.dump(result, f, indent=1)
        with open(os.path.join(a.out_dir, "cli.md"), "w") as f:
            f.write(render_md(result))
        subprocess.call([a.plot_python, os.path.join(HERE, "plot_cli_bench.py"), a.render_only,
                         os.path.join(a.out_dir, "cli.png")])
        return 0
    if a.quick:
        a.size_mib, a.reps, a.rss_mib, a.frame_sweep = 64, 1, 256, "64K,512K"
    sz = os.path.abspath(a.splitzip)
    if not os.access(TIME, os.X_OK):
        sys.exit("run_cli_bench.py: %s not found (apt-get install time)" % TIME)
    for tool in ("zstd", "lz4", "cp"):
        if not shutil.which(tool):
            sys.exit("run_cli_bench.py: %s not found (apt-get install zstd lz4)" % tool)
    if not os.access(sz, os.X_OK):
        sys.exit("run_cli_bench.py: no splitzip at %s (build it, or pass --splitzip)" % sz)
    work = a.workdir or "/dev/shm/splitzip-cli-bench.%d" % os.getpid()
    os.makedirs(work, exist_ok=True)
    if not a.workdir:  # also when a check stops the run: tmpfs holds it in memory
        import atexit
        atexit.register(shutil.rmtree, work, True)
    W = lambda n: os.path.join(work, n)  # noqa: E731
    info = machine_info(sz)
    print("machine: %s, %s CPUs, L2 %s, load %s" % (info.get("cpu"), info["nproc"], info.get("l2"),
                                                   " ".join("%.1f" % x for x in info["loadavg_start"])), flush=True)
    print("splitzip backends: %s" % "; ".join(info["splitzip_backends"]), flush=True)

    src = W("kv.bf16")
    subprocess.check_call([sys.executable, os.path.join(HERE, "make_bench_data.py"), src, str(a.size_mib)])
    nbytes = os.path.getsize(src)
    # A calibrated codebook for the "calibrated, no checksum" rows.
    cb = W("kv.szcb")
    rm(cb)
    subprocess.check_call([sz, "calibrate", "-o", cb, src], stderr=subprocess.DEVNULL)

    # Outputs of the compress jobs feed the decompress jobs; they are made
    # once (untimed) first.
    szf, szc, z1, z3, l4 = W("kv.sz"), W("kv.cap.sz"), W("kv.1.zst"), W("kv.3.zst"), W("kv.lz4")
    rm(szf, szc, z1, z3, l4)
    subprocess.check_call([sz, "compress", "-o", szf, src])
    subprocess.check_call([sz, "compress", "--mode", "capacity", "-o", szc, src])
    # A capacity row must time capacity frames: byte 49 of a frame header is
    # its mode (FORMAT.md 4.6: 1 = capacity).
    with open(szc, "rb") as f:
        hdr = f.read(64)
    if len(hdr) < 64 or hdr[49] != 1:
        sys.exit("run_cli_bench.py: MISMATCH: `compress --mode capacity` wrote no capacity frame (mode byte %r)"
                 % (hdr[49:50],))
    for ref, what in ((szf, "default"), (szc, "--mode capacity")):
        rm(W("check"))
        subprocess.check_call([sz, "decompress", "-o", W("check"), ref])
        must_match(W("check"), src, "reference %s stream decompressed" % what)
    rm(W("check"))
    subprocess.check_call(["zstd", "-q", "-1", src, "-o", z1])
    subprocess.check_call(["zstd", "-q", "-3", src, "-o", z3])
    subprocess.check_call(["lz4", "-q", "-1", src, l4])
    sizes = {"splitzip": os.path.getsize(szf), "splitzip capacity": os.path.getsize(szc),
             "zstd -1": os.path.getsize(z1), "zstd -3": os.path.getsize(z3), "lz4 -1": os.path.getsize(l4), "cp": nbytes}
    o = W("out")
    CAP = "splitzip --mode capacity"
    jobs = [  # (direction, name, threads, argv, output size key)
        ("compress", "splitzip", 1, [sz, "compress", "-T1", "-o", o, src], "splitzip"),
        ("compress", "splitzip", 2, [sz, "compress", "-T2", "-o", o, src], "splitzip"),
        ("compress", "splitzip --no-checksum", 1, [sz, "compress", "-T1", "--no-checksum", "-o", o, src], None),
        ("compress", "splitzip --codebook --no-checksum", 1,
         [sz, "compress", "-T1", "--codebook", cb, "--no-checksum", "-o", o, src], None),
        ("compress", CAP, 1, [sz, "compress", "-T1", "--mode", "capacity", "-o", o, src], "splitzip capacity"),
        ("compress", CAP, 2, [sz, "compress", "-T2", "--mode", "capacity", "-o", o, src], "splitzip capacity"),
        ("compress", "zstd -1", 1, ["zstd", "-q", "-1", "-T1", src, "-o", o], "zstd -1"),
        ("compress", "zstd -1", 2, ["zstd", "-q", "-1", "-T2", src, "-o", o], "zstd -1"),
        ("compress", "zstd -3", 1, ["zstd", "-q", "-3", "-T1", src, "-o", o], "zstd -3"),
        ("compress", "zstd -3", 2, ["zstd", "-q", "-3", "-T2", src, "-o", o], "zstd -3"),
        ("compress", "lz4 -1", 1, ["lz4", "-q", "-1", src, o], "lz4 -1"),
        ("compress", "cp", 1, ["cp", src, o], "cp"),
        ("decompress", "splitzip", 1, [sz, "decompress", "-T1", "-o", o, szf], "splitzip"),
        ("decompress", "splitzip", 2, [sz, "decompress", "-T2", "-o", o, szf], "splitzip"),
        ("decompress", CAP, 1, [sz, "decompress", "-T1", "-o", o, szc], "splitzip capacity"),
        ("decompress", CAP, 2, [sz, "decompress", "-T2", "-o", o, szc], "splitzip capacity"),
        ("decompress", "zstd -1", 1, ["zstd", "-q", "-d", z1, "-o", o], "zstd -1"),
        ("decompress", "zstd -3", 1, ["zstd", "-q", "-d", z3, "-o", o], "zstd -3"),
        ("decompress", "lz4 -1", 1, ["lz4", "-q", "-d", l4, o], "lz4 -1"),
        ("decompress", "cp", 1, ["cp", src, o], "cp"),
    ]
    runs = {i: [] for i in range(len(jobs))}
    for rep in range(a.reps):
        for i, (d, name, t, cmd, key) in enumerate(jobs):
            rm(o)
            r = run_timed(cmd)
            # Every round, untimed: decompress outputs are the input; the
            # splitzip compress outputs are their mode's reference stream.
            if d == "decompress":
                must_match(o, src, "%s -T%d decompress did not reproduce the input" % (name, t))
            elif key in ("splitzip", "splitzip capacity"):
                must_match(o, szf if key == "splitzip" else szc, "%s -T%d compress output" % (name, t))
            elif name.startswith("splitzip"):  # other options, other bytes: they must decode to the input
                rm(W("check"))
                subprocess.check_call([sz, "decompress", "-o", W("check"), o])
                must_match(W("check"), src, "%s -T%d compress output decompressed" % (name, t))
                rm(W("check"))
            runs[i].append(r)
        print("round %d/%d done (load %.1f)" % (rep + 1, a.reps, os.getloadavg()[0]), flush=True)
    rm(o)
    rows = []
    for i, (d, name, t, cmd, key) in enumerate(jobs):
        best = min(runs[i], key=lambda r: r["wall_s"])
        rows.append({"direction": d, "tool": name, "threads": t, "cmd": " ".join(os.path.basename(c) if c == sz else c for c in cmd),
                     "best": best, "runs": runs[i],
                     "ratio": (nbytes / sizes[key]) if key else None,
                     "gbps": nbytes / best["wall_s"] / 1e9})

    def best_of(d, name, t=1):
        for r in rows:
            if r["direction"] == d and r["tool"] == name and r["threads"] == t:
                return r["best"]["wall_s"]
        return None

    # Frame-size sweep: dynamic vs calibrated codebook, no checksum, -T1.
    sweep = []
    for fs in [x for x in a.frame_sweep.split(",") if x]:
        row = {"frame_size": fs}
        for label, extra in (("dynamic", []), ("calibrated", ["--codebook", cb])):
            best = None
            for _ in range(a.reps):
                rm(o)
                r = run_timed([sz, "compress", "-T1", "--no-checksum", "--frame-size", fs] + extra + ["-o", o, src])
                best = r if best is None or r["wall_s"] < best["wall_s"] else best
            row[label + "_s"] = best["wall_s"]
            row[label + "_ratio"] = nbytes / os.path.getsize(o)
        sweep.append(row)
        print("frame %s: dynamic %.3f s, calibrated %.3f s, ratio %.4f" % (fs, row["dynamic_s"], row["calibrated_s"],
                                                                         row["dynamic_ratio"]), flush=True)
    rm(o)

    # Ratio on the bundled real KV (all bf16 files as one stream, defaults).
    bundled = sorted(f for f in os.listdir(os.path.join(REPO, "data", "kv", "stories260k")) if f.endswith(".bf16"))
    cat = W("bundled.bf16")
    with open(cat, "wb") as f:
        for b in bundled:
            f.write(open(os.path.join(REPO, "data", "kv", "stories260k", b), "rb").read())
    rm(o)
    subprocess.check_call([sz, "compress", "-o", o, cat])
    bundled_ratio = os.path.getsize(cat) / os.path.getsize(o)
    rm(o, cat)

    # Peak RSS at a big input, both ways.
    rss = {}
    if a.rss_mib:
        big, bigsz = W("big.bf16"), W("big.sz")
        subprocess.check_call([sys.executable, os.path.join(HERE, "make_bench_data.py"), big, str(a.rss_mib)])
        rm(bigsz, o)
        for t in (1, 2):
            rm(bigsz)
            r = run_timed([sz, "compress", "-T%d" % t, "-o", bigsz, big])
            rss["compress_T%d" % t] = r
            rm(o)
            r = run_timed([sz, "decompress", "-T%d" % t, "-o", o, bigsz])
            rss["decompress_T%d" % t] = r
            if t == 1 and not cmp_files(o, big):
                sys.exit("run_cli_bench.py: %d MiB round trip differs" % a.rss_mib)
            rm(o)
        rm(big, bigsz)
        for k, v in rss.items():
            print("RSS %s at %d MiB: %.1f MB (%.3f s)" % (k, a.rss_mib, v["rss_kb"] / 1024, v["wall_s"]), flush=True)

    # The kernel's floor under -T2: writes to one file serialize on its
    # inode lock, so a process that writes B bytes takes at least the time
    # of B bytes of pwrite() plus its own start, whatever its thread count.
    floor = {"start_s": process_start([sz, "--version"], a.reps),
             "true_s": process_start(["true"], a.reps)}
    for d, b in (("compress", sizes["splitzip"]), ("decompress", nbytes)):
        for t in (1, 2):
            floor["%s_write_T%d_s" % (d, t)] = write_floor(W("floor.bin"), b, t, a.reps)
    print("write floor: %s" % json.dumps(floor), flush=True)

    # Targets of issue 12.
    c1, c2, d1, d2 = (best_of("compress", "splitzip"), best_of("compress", "splitzip", 2),
                      best_of("decompress", "splitzip"), best_of("decompress", "splitzip", 2))
    cpc = best_of("compress", "cp")
    targets = [
        ("compress -T1 (defaults) <= 1.5x cp", c1 / cpc, "<=", 1.5),
        ("compress -T1 >= 3x faster than zstd -1 -T1", best_of("compress", "zstd -1") / c1, ">=", 3.0),
        ("compress -T1 faster than lz4 -1", best_of("compress", "lz4 -1") / c1, ">", 1.0),
        ("decompress -T1 <= 1.5x cp", d1 / best_of("decompress", "cp"), "<=", 1.5),
        ("decompress -T1 faster than lz4 -d", best_of("decompress", "lz4 -1") / d1, ">", 1.0),
        ("compress -T2 >= 1.6x faster than -T1", c1 / c2, ">=", 1.6),
        ("decompress -T2 >= 1.6x faster than -T1", d1 / d2, ">=", 1.6),
    ]
    if rss:
        targets.append(("peak RSS compress, %d MiB input (MB)" % a.rss_mib,
                        max(rss["compress_T1"]["rss_kb"], rss["compress_T2"]["rss_kb"]) / 1024, "<=", 64.0))
        targets.append(("peak RSS decompress, %d MiB input (MB)" % a.rss_mib,
                        max(rss["decompress_T1"]["rss_kb"], rss["decompress_T2"]["rss_kb"]) / 1024, "<=", 64.0))
    for s in sweep:
        if s["frame_size"].upper() in ("64K", "65536"):
            targets.append(("dynamic-codebook encode at 64 KiB frames >= 0.8x calibrated (speed)",
                            s["calibrated_s"] / s["dynamic_s"], ">=", 0.8))
    targets.append(("ratio on the bundled real KV (defaults)", bundled_ratio, ">=", 1.329))
    # Capacity mode against zstd (and the default fast mode), same run.
    capacity = []
    for d, t in (("compress", 1), ("compress", 2), ("decompress", 1), ("decompress", 2)):
        mine = best_of(d, CAP, t)
        for peer in ("zstd -1", "zstd -3", "splitzip"):
            # zstd decompresses with one thread whatever -T says: its -T1 row.
            pt = 1 if (d == "decompress" and peer != "splitzip") else t
            other = best_of(d, peer, pt)
            capacity.append({"direction": d, "threads": t, "peer": peer, "peer_threads": pt,
                             "capacity_s": mine, "peer_s": other, "speedup": other / mine,
                             "capacity_ratio": nbytes / sizes["splitzip capacity"], "peer_ratio": nbytes / sizes[peer]})
    # The CLI against the library's capacity codec on the same bytes in
    # memory (one thread, the CLI's default frame, checksum on).
    kernel = None
    timing = a.timing if a.timing is not None else os.path.join(os.path.dirname(sz), "splitzip_cpu_timing")
    if timing and os.access(timing, os.X_OK):
        kernel = kernel_capacity(timing, src, a.size_mib, 512, a.reps)
        if kernel:
            for d, k in (("compress", "enc_s"), ("decompress", "dec_s")):
                row = next(x for x in rows if x["direction"] == d and x["tool"] == CAP and x["threads"] == 1)
                kernel[d] = {"cli_s": row["best"]["wall_s"], "cli_cpu_s": row["best"]["user_s"] + row["best"]["sys_s"],
                             "cli_user_s": row["best"]["user_s"], "cli_sys_s": row["best"]["sys_s"],
                             "kernel_s": kernel[k], "cp_s": best_of(d, "cp")}
            print("kernel: %s" % json.dumps(kernel), flush=True)
    ops = {"<=": lambda x, y: x <= y, ">=": lambda x, y: x >= y, ">": lambda x, y: x > y}
    tgt = [{"target": n, "value": v, "op": op, "limit": lim, "pass": bool(ops[op](v, lim))} for n, v, op, lim in targets]

    info["loadavg_end"] = os.getloadavg()
    result = {"input_mib": a.size_mib, "input_bytes": nbytes, "reps": a.reps, "machine": info, "rows": rows,
              "sweep": sweep, "rss": rss, "floor": floor, "rss_mib": a.rss_mib, "bundled_ratio": bundled_ratio, "targets": tgt,
              "capacity": capacity, "kernel": kernel, "note": a.note}
    os.makedirs(a.out_dir, exist_ok=True)
    jpath = os.path.join(a.out_dir, "cli.json")
    with open(jpath, "w") as f:
        json.dump(result, f, indent=1)
    md = render_md(result)
    with open(os.path.join(a.out_dir, "cli.md"), "w") as f:
        f.write(md)
    print(md)
    rm(src, cb, szf, szc, z1, z3, l4)
    if not a.workdir:
        shutil.rmtree(work, ignore_errors=True)
    rc = subprocess.call([a.plot_python, os.path.join(HERE, "plot_cli_bench.py"), jpath,
                          os.path.join(a.out_dir, "cli.png")])
    if rc != 0:
        print("plot skipped: %s has no matplotlib (pass --plot-python of a venv that has it)" % a.plot_python)
    return 0


def render_md(r):
    m = r["machine"]
    L = []
    L.append("# Whole-process CLI benchmark\n")
    L.append("Made by `bench/cli/run_cli_bench.py` (chart: `bench/cli/plot_cli_bench.py` -> `cli.png`, raw: `cli.json`).")
    L.append("%d MiB of bf16 in tmpfs (`make_bench_data.py`: the bundled real KV's sign and exponent, "
             "random low mantissa bits), every job run as a whole process, best of %d alternating rounds; "
             "time by wall clock, peak RSS, CPU time and page faults from GNU `time`. splitzip runs with its default options "
             "(dynamic codebook per frame, checksum on) unless the row says otherwise.\n" % (r["input_mib"], r["reps"]))
    L.append("Machine: %s, %s CPUs, L2 %s; load average %s at the start, %s at the end; %s; %s; "
             "splitzip backends: %s.\n" % (m.get("cpu"), m["nproc"], m.get("l2"),
                                           " ".join("%.1f" % x for x in m["loadavg_start"]),
                                           " ".join("%.1f" % x for x in m["loadavg_end"]),
                                           (m.get("zstd") or "no zstd").strip("* "), (m.get("lz4") or "no lz4").strip("* "),
                                           "; ".join(" ".join(x.split()) for x in m["splitzip_backends"])))
    if max(m["loadavg_start"][0], m["loadavg_end"][0]) > 0.5 * (m["nproc"] or 1):
        L.append("**Busy machine**: the load average was above half the CPU count, so other processes "
                 "took CPU time from these runs. Multi-thread figures (-T2) are not meaningful here and "
                 "single-thread ones are noisy: re-run on a quiet machine before quoting them.\n")
    if r.get("note"):
        L.append("Build: %s\n" % r["note"])
    cp = {d: next(x["best"]["wall_s"] for x in r["rows"] if x["tool"] == "cp" and x["direction"] == d)
          for d in ("compress", "decompress")}
    for d in ("compress", "decompress"):
        L.append("## %s\n" % d)
        L.append("| tool | -T | time (s) | x cp | GB/s | ratio | peak RSS (MB) | user (s) | sys (s) | minor faults |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for x in r["rows"]:
            if x["direction"] != d:
                continue
            b = x["best"]
            L.append("| %s | %d | %.3f | %.2f | %.2f | %s | %.1f | %.3f | %.3f | %d |" % (
                x["tool"], x["threads"], b["wall_s"], b["wall_s"] / cp[d], x["gbps"],
                "%.4f" % x["ratio"] if x["ratio"] else "", b["rss_kb"] / 1024, b["user_s"], b["sys_s"], b["minflt"]))
        L.append("")
    if r["sweep"]:
        L.append("## Frame size (compress -T1 --no-checksum)\n")
        L.append("| --frame-size | dynamic codebook (s) | calibrated codebook (s) | dynamic / calibrated speed | ratio (dynamic) |")
        L.append("|---|---:|---:|---:|---:|")
        for s in r["sweep"]:
            L.append("| %s | %.3f | %.3f | %.2f | %.4f |" % (s["frame_size"], s["dynamic_s"], s["calibrated_s"],
                                                        s["calibrated_s"] / s["dynamic_s"], s["dynamic_ratio"]))
        L.append("")
    if r["rss"]:
        L.append("## Peak RSS at %d MiB\n" % r["rss_mib"])
        L.append("| job | time (s) | peak RSS (MB) | minor faults |")
        L.append("|---|---:|---:|---:|")
        for k, v in r["rss"].items():
            L.append("| splitzip %s | %.3f | %.1f | %d |" % (k.replace("_", " -"), v["wall_s"], v["rss_kb"] / 1024, v["minflt"]))
        L.append("")
    f = r.get("floor")
    if f:
        L.append("## The kernel's floor under -T2\n")
        L.append("Writes to one file serialize on its inode lock, so no thread count writes one output "
                 "faster than one thread's pwrite() of its bytes. Measured in the same run: pwrite() of the "
                 "output's size into a new tmpfs file from 1 and 2 threads (512 KiB chunks), and the start of "
                 "a process that does no work (`splitzip --version`; `true` for comparison). The ceiling is "
                 "the -T1 time over the larger of (write floor + start) and (half of -T1's work + start).\n")
        L.append("| direction | bytes written | pwrite, 1 thread (s) | pwrite, 2 threads, one file (s) | start (s) | "
                 "-T1 (s) | ceiling on -T2/-T1 | measured -T2/-T1 |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for d in ("compress", "decompress"):
            t1 = next(x["best"]["wall_s"] for x in r["rows"] if x["tool"] == "splitzip" and x["direction"] == d
                      and x["threads"] == 1)
            t2 = next(x["best"]["wall_s"] for x in r["rows"] if x["tool"] == "splitzip" and x["direction"] == d
                      and x["threads"] == 2)
            w = min(f["%s_write_T1_s" % d], f["%s_write_T2_s" % d])
            nb = r["input_bytes"] if d == "decompress" else r["input_bytes"] / next(
                x["ratio"] for x in r["rows"] if x["tool"] == "splitzip" and x["direction"] == "compress")
            L.append("| %s | %d | %.3f | %.3f | %.4f | %.3f | %.2f | %.2f |" % (
                d, nb, f["%s_write_T1_s" % d], f["%s_write_T2_s" % d], f["start_s"], t1, t1 / max(w + f["start_s"], (t1 - f["start_s"]) / 2 + f["start_s"]),
                t1 / t2))
        L.append("\n(`true` starts in %.4f s.)\n" % f["true_s"])
    L.append("## Targets (issue 12)\n")
    L.append("| target | measured | limit | |")
    L.append("|---|---:|---:|---|")
    for t in r["targets"]:
        L.append("| %s | %.3f | %s %g | %s |" % (t["target"], t["value"], t["op"], t["limit"], "PASS" if t["pass"] else "MISS"))
    L.append("")
    L.append("Ratio of splitzip on the bundled real KV (`data/kv/stories260k/*.bf16` as one stream, defaults): %.4f.\n"
             % r["bundled_ratio"])
    if r.get("capacity"):
        L.append("## Capacity mode (`--mode capacity`) against zstd\n")
        L.append("The rows `splitzip --mode capacity` above, as ratios to the other rows of the same run "
                 "(checksum on, as by default). speed = peer time / capacity time (above 1: capacity is "
                 "faster). zstd decompresses with one thread, so capacity -T2 decompress is set against "
                 "zstd's only row; `splitzip` is the default fast mode.\n")
        L.append("| direction | capacity -T | peer | capacity (s) | peer (s) | speed | capacity ratio | peer ratio |")
        L.append("|---|---:|---|---:|---:|---:|---:|---:|")
        def peer(c):
            p = "fast mode (default)" if c["peer"] == "splitzip" else c["peer"]
            if c["direction"] == "decompress" and c["peer"] != "splitzip":
                return p + " -d"  # zstd's decoder has no -T
            return "%s -T%d" % (p, c["peer_threads"])
        for c in r["capacity"]:
            L.append("| %s | %d | %s | %.3f | %.3f | %.2fx | %.4f | %.4f |" % (
                c["direction"], c["threads"], peer(c), c["capacity_s"], c["peer_s"],
                c["speedup"], c["capacity_ratio"], c["peer_ratio"]))
        L.append("")
        for c in r["capacity"]:
            if c["threads"] == 1 and c["peer"] != "splitzip":
                L.append("- capacity %s -T1 is %.2f times as fast as %s, at ratio %.4f vs %.4f." % (
                    c["direction"], c["speedup"], peer(c), c["capacity_ratio"], c["peer_ratio"]))
        for c in r["capacity"]:
            if c["threads"] == 1 and c["peer"] == "splitzip":
                L.append("- capacity %s -T1 takes %.2f times the fast mode's time, for ratio %.4f vs %.4f." % (
                    c["direction"], 1 / c["speedup"], c["capacity_ratio"], c["peer_ratio"]))
        L.append("")
    k = r.get("kernel")
    if k:
        L.append("## Capacity mode: the CLI against the codec\n")
        L.append("The codec: `%s` (the library's capacity codec on this input's bytes in memory, one thread, "
                 "%d KiB frames as the CLI cuts them, checksum on; best round by thread CPU time). A whole "
                 "process adds reading the input and writing the output, which `cp` of the input bounds "
                 "(it reads and writes the input's size; compress writes less, decompress reads less).\n"
                 % (k["cmd"], 512))
        L.append("| -T1 | CLI wall (s) | CLI user (s) | CLI sys (s) | codec (s) | cp (s) | codec + cp (s) | "
                 "CLI / (codec + cp) | CLI user / codec |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for d in ("compress", "decompress"):
            x = k[d]
            L.append("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f |" % (
                d, x["cli_s"], x["cli_user_s"], x["cli_sys_s"], x["kernel_s"], x["cp_s"], x["kernel_s"] + x["cp_s"],
                x["cli_s"] / (x["kernel_s"] + x["cp_s"]), x["cli_user_s"] / x["kernel_s"]))
        L.append("\n(GNU `time` gives user/sys time in steps of 10 ms.)\n")
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    sys.exit(main())
