#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prefill -> decode KV handoff over the Mooncake Transfer Engine (TCP
transport, P2PHANDSHAKE metadata), raw or SplitZip-compressed and streamed.

Run the decode side first (it listens), then the prefill side:
  kv_transfer.py --role decode  --local-ip 127.0.0.1 --ctl-port 17500 --mode compressed ...
  kv_transfer.py --role prefill --local-ip 127.0.0.1 --peer-ip 127.0.0.1 --ctl-port 17500 \
      --mode compressed ...
Both sides must get the same payload options: the decode side rebuilds the
payload to check that what arrived is bit-exact. The prefill side prints one
JSON line with the result.

Data moves only through Mooncake. A small TCP control connection carries the
handshake, per-frame notices (slot, size, offset) and the decode side's
credits (free receive slots), which bound memory on both sides.

Compressed path:
  prefill: StreamEncoder (own thread) fills a ring of `slots` frame buffers;
           the main loop takes frame i, waits for a free remote slot, writes
           the frame into it with Mooncake, and tells the decode side.
  decode:  StreamDecoder owns the receive ring (registered with Mooncake);
           its thread decodes each announced frame into place while the next
           ones arrive; a freed slot goes back to the prefill side as a credit.
"""
import argparse
import collections
import json
import socket
import sys
import threading
import time

import numpy as np

import sztx

MIB = 1 << 20


def log(*a):
    print(*a, file=sys.stderr, flush=True)


class Channel:
    """JSON lines over TCP; send() is thread-safe."""

    def __init__(self, sock):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        self.rfile = sock.makefile("rb")
        self.lock = threading.Lock()

    def send(self, obj):
        data = (json.dumps(obj, separators=(",", ":")) + "\n").encode()
        with self.lock:
            self.sock.sendall(data)

    def recv(self):
        line = self.rfile.readline()
        if not line:
            raise ConnectionError("control connection closed")
        return json.loads(line)


def engine(local_ip):
    from mooncake.engine import TransferEngine

    te = TransferEngine()
    rc = te.initialize(local_ip, "P2PHANDSHAKE", "tcp", "")
    if rc != 0:
        raise RuntimeError(f"Mooncake initialize failed ({rc})")
    return te


def register(te, addr, size):
    rc = te.register_memory(addr, size)
    if rc != 0:
        raise RuntimeError(f"Mooncake register_memory failed ({rc})")


def payload(args):
    return sztx.make_payload(args.source, args.size_mb, args.repeat, args.layer_mb)


# ---- prefill side (sender) -------------------------------------------------

def prefill(args):
    tensors = payload(args)
    total = sum(t.nbytes for t in tensors)
    frame_elems = int(args.frame_mb * MIB) // 2
    te = engine(args.local_ip)
    ch = None
    deadline = time.time() + 30
    while ch is None:
        try:
            ch = Channel(socket.create_connection((args.peer_ip, args.ctl_port), timeout=5))
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
    ch.sock.settimeout(None)
    ch.send({"hello": args.mode, "total": total, "frame_elems": frame_elems,
             "slots": args.slots, "n_tensors": len(tensors)})
    peer = ch.recv()
    seg = peer["segment"]
    res = {"mode": args.mode, "source": args.source, "payload_bytes": total,
           "frame_bytes": frame_elems * 2, "slots": args.slots, "rate": args.rate_label,
           "backend": args.backend if args.mode == "compressed" else ""}

    if args.mode in ("raw", "raw-window"):
        for t in tensors:
            register(te, t.ctypes.data, t.nbytes)
        # Same frame boundaries as the compressed run, straight into the
        # destination: the uncompressed handoff.
        bufs, dsts, lens = [], [], []
        off = 0
        for t in tensors:
            for first in range(0, t.nbytes, frame_elems * 2):
                n = min(frame_elems * 2, t.nbytes - first)
                bufs.append(t.ctypes.data + first)
                dsts.append(peer["dst"] + off + first)
                lens.append(n)
            off += t.nbytes
        t0 = time.perf_counter()
        if args.mode == "raw":
            # One batch: Mooncake schedules all slices itself.
            rc = te.batch_transfer_sync_write(seg, bufs, dsts, lens)
            if rc != 0:
                raise RuntimeError(f"Mooncake batch write failed ({rc})")
        else:
            # The compressed path's submission pattern: `inflight` writes at once.
            window = collections.deque()
            for i in range(len(bufs)):
                batch = te.transfer_submit_write(seg, bufs[i], dsts[i], lens[i])
                if batch < 0:
                    raise RuntimeError(f"Mooncake submit failed ({batch})")
                window.append(batch)
                while len(window) >= args.inflight or (i == len(bufs) - 1 and window):
                    wait_write(te, window.popleft())
        t_link = time.perf_counter() - t0
        ch.send({"end": len(bufs)})
        done = recv_done(ch)
        wall = time.perf_counter() - t0
        res.update(frames=len(bufs), wire_bytes=total, link_s=t_link, encode_s=0.0,
                   decode_s=0.0)
    else:
        enc = sztx.Encoder(tensors, frame_elems, args.slots, threads=args.codec_threads,
                           backend=args.backend)
        link_s = wait_enc = wait_credit = 0.0
        wire = frames = 0
        inflight = collections.deque()  # frames being written: (batch, slot, notice)
        busy_since = None

        def complete_oldest():
            # Wait for the oldest write, then hand its slot back and announce it.
            nonlocal link_s, busy_since
            batch, slot, notice = inflight.popleft()
            wait_write(te, batch)
            enc.release(slot)
            ch.send({"f": notice})
            if not inflight:
                link_s += time.perf_counter() - busy_since
                busy_since = None

        t0 = time.perf_counter()
        enc.start()
        ring, ring_bytes = enc.ring
        register(te, ring, ring_bytes)
        ring_remote, cap = peer["ring"], peer["slot_capacity"]
        while True:
            a = time.perf_counter()
            f = enc.next()
            b = time.perf_counter()
            wait_enc += b - a
            if f is None:
                break
            slot, addr, size, raw, off = f
            if size > cap:
                raise RuntimeError("frame larger than the decode side's slot")
            credit = ch.recv()["credit"]
            c = time.perf_counter()
            wait_credit += c - b
            batch = te.transfer_submit_write(seg, addr, ring_remote + credit * cap, size)
            if batch < 0:
                raise RuntimeError(f"Mooncake submit failed ({batch})")
            if busy_since is None:
                busy_since = c
            inflight.append((batch, slot, [credit, size, off, raw]))
            # Keep up to `inflight` writes on the wire so the link never idles
            # between frames; the encoder keeps filling the other slots.
            while len(inflight) >= args.inflight:
                complete_oldest()
            wire += size
            frames += 1
        while inflight:
            complete_oldest()
        ch.send({"end": frames})
        done = recv_done(ch)
        wall = time.perf_counter() - t0
        es = enc.stats()
        enc.close()
        res.update(frames=frames, wire_bytes=wire, link_s=link_s, encode_s=es["busy_s"],
                   decode_s=done.get("decode_s", 0.0), wait_encoder_s=wait_enc,
                   wait_credit_s=wait_credit, inflight=args.inflight, ratio=total / wire if wire else 0.0)
    if not done.get("ok"):
        raise RuntimeError(f"decode side reports failure: {done}")
    verdict = ch.recv()
    res.update(wall_s=wall, bit_exact=bool(verdict["bit_exact"]),
               goodput_MBps=total / wall / 1e6)
    te_close(te)
    print(json.dumps(res), flush=True)


def wait_write(te, batch):
    while True:
        st = te.transfer_check_status(batch)
        if st == 1:
            return
        if st < 0:
            raise RuntimeError(f"Mooncake write failed ({st})")
        time.sleep(0.0002)


def recv_done(ch):
    # Credits the decode side sent after the last frame are not needed.
    while True:
        m = ch.recv()
        if "credit" not in m:
            return m


def te_close(te):
    # The Python binding has no explicit shutdown; dropping it tears it down.
    del te


# ---- decode side (receiver) ------------------------------------------------

def decode(args):
    te = engine(args.local_ip)
    seg = f"{args.local_ip}:{te.get_rpc_port()}"
    srv = socket.create_server((args.local_ip, args.ctl_port), reuse_port=False)
    srv.settimeout(60)
    conn, _ = srv.accept()
    conn.settimeout(None)
    ch = Channel(conn)
    hello = ch.recv()
    total, frame_elems, slots = hello["total"], hello["frame_elems"], hello["slots"]
    dst = np.empty(total, dtype=np.uint8)
    dst.fill(0x5A)  # pre-fault: KV memory is allocated before a handoff starts
    reply = {"segment": seg}
    if hello["hello"] != "compressed":
        register(te, dst.ctypes.data, dst.nbytes)
        reply["dst"] = dst.ctypes.data
        ch.send(reply)
        end = ch.recv()
        assert "end" in end
        decode_s = 0.0
        ok = True
    else:
        cap = sztx.slot_capacity(frame_elems)
        dec = sztx.Decoder(dst, slots, cap, threads=args.codec_threads, backend=args.backend)
        ring, ring_bytes = dec.ring
        register(te, ring, ring_bytes)
        reply.update(ring=ring, slot_capacity=cap)
        ch.send(reply)
        failure = []

        def credits():
            # Each slot the decoder frees becomes a credit for the sender.
            try:
                while True:
                    ch.send({"credit": dec.acquire()})
            except (sztx.SplitzipError, OSError) as e:
                failure.append(str(e))

        th = threading.Thread(target=credits, daemon=True)
        th.start()
        ok = True
        while True:
            msg = ch.recv()
            if "end" in msg:
                break
            slot, size, off, raw = msg["f"]
            dec.submit(slot, size, off, raw)
        try:
            dec.finish()
        except sztx.SplitzipError as e:
            ok = False
            failure.append(str(e))
        decode_s = dec.stats()["busy_s"]
        dec.stop()  # ends the credit thread's acquire()
        th.join(timeout=5)
    # The handoff is complete here; the prefill side stops its clock on this.
    ch.send({"arrived": True, "ok": ok, "decode_s": decode_s})
    # Bit-exactness against an independently rebuilt payload (outside the timing).
    want = np.concatenate(payload(args)) if total else np.empty(0, np.uint8)
    exact = want.nbytes == dst.nbytes and bool(np.array_equal(want, dst))
    ch.send({"bit_exact": exact})
    log(f"decode side: {total} bytes, bit_exact={exact}")
    conn.close()
    srv.close()
    if not exact:
        sys.exit(3)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--role", choices=["prefill", "decode"], required=True)
    p.add_argument("--mode", choices=["raw", "raw-window", "compressed"], default="compressed")
    p.add_argument("--local-ip", default="127.0.0.1")
    p.add_argument("--peer-ip", default="127.0.0.1")
    p.add_argument("--ctl-port", type=int, default=17500)
    p.add_argument("--source", choices=["real", "synthetic"], default="real")
    p.add_argument("--size-mb", type=float, default=256, help="synthetic payload MiB")
    p.add_argument("--layer-mb", type=float, default=32, help="synthetic tensor MiB")
    p.add_argument("--repeat", type=int, default=1, help="copies of the real KV")
    p.add_argument("--frame-mb", type=float, default=4, help="raw MiB per frame")
    p.add_argument("--slots", type=int, default=4, help="ring slots on each side")
    p.add_argument("--codec-threads", type=int, default=1)
    p.add_argument("--backend", default="", help="splitzip backend ('': dispatch)")
    p.add_argument("--inflight", type=int, default=2,
                   help="compressed frames on the wire at once (< slots)")
    p.add_argument("--rate-label", default="", help="recorded in the result")
    args = p.parse_args()
    (prefill if args.role == "prefill" else decode)(args)


if __name__ == "__main__":
    main()
