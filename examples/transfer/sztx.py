# SPDX-License-Identifier: Apache-2.0
"""ctypes wrapper of libsplitzip_transfer.so (transfer_capi.cpp) and the KV
payloads the transfer example moves.

Every C call here releases the GIL (ctypes does that for CDLL calls), so the
encoder/decoder threads of transfer/stream.h run beside the Python control loop.
"""
import ctypes as C
import glob
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DEFAULT_LIB = os.path.join(ROOT, "build-transfer", "ex", "libsplitzip_transfer.so")
DATA_DIR = os.path.join(ROOT, "data", "kv", "stories260k")

BF16 = 1
DTYPE_BYTES = {1: 2, 2: 2, 3: 4, 4: 1}
STAGES = ("encode", "link", "decode")

_u64p = C.POINTER(C.c_uint64)
_dblp = C.POINTER(C.c_double)


class SplitzipError(RuntimeError):
    pass


def load(path=None):
    lib = C.CDLL(path or os.environ.get("SPLITZIP_TRANSFER_LIB", DEFAULT_LIB))
    sig = {
        "sztx_encoder_new": (C.c_void_p, [C.c_int, C.POINTER(C.c_void_p), _u64p, C.c_uint64,
                                          C.c_uint64, C.c_uint32, C.c_int, C.c_int, C.c_char_p]),
        "sztx_encoder_start": (C.c_int, [C.c_void_p]),
        "sztx_encoder_next": (C.c_int, [C.c_void_p, _u64p, C.POINTER(C.c_int)]),
        "sztx_encoder_release": (None, [C.c_void_p, C.c_uint32]),
        "sztx_encoder_frames": (C.c_uint64, [C.c_void_p]),
        "sztx_encoder_slot_capacity": (C.c_uint64, [C.c_void_p]),
        "sztx_encoder_ring": (C.c_void_p, [C.c_void_p]),
        "sztx_encoder_ring_bytes": (C.c_uint64, [C.c_void_p]),
        "sztx_encoder_stats": (None, [C.c_void_p, _dblp]),
        "sztx_encoder_free": (None, [C.c_void_p]),
        "sztx_decoder_new": (C.c_void_p, [C.c_void_p, C.c_uint64, C.c_uint32, C.c_uint64,
                                          C.c_int, C.c_char_p]),
        "sztx_decoder_start": (C.c_int, [C.c_void_p]),
        "sztx_decoder_acquire": (C.c_int, [C.c_void_p, C.POINTER(C.c_uint32)]),
        "sztx_decoder_submit": (C.c_int, [C.c_void_p, C.c_uint32, C.c_uint64, C.c_uint64,
                                          C.c_uint64]),
        "sztx_decoder_finish": (C.c_int, [C.c_void_p]),
        "sztx_decoder_ring": (C.c_void_p, [C.c_void_p]),
        "sztx_decoder_ring_bytes": (C.c_uint64, [C.c_void_p]),
        "sztx_decoder_stats": (None, [C.c_void_p, _dblp]),
        "sztx_decoder_stop": (None, [C.c_void_p]),
        "sztx_decoder_free": (None, [C.c_void_p]),
        "sztx_predict": (C.c_int, [C.c_double] * 5 + [C.c_uint64, C.c_uint64, _dblp]),
        "sztx_synth": (C.c_int, [C.c_char_p, C.c_int, C.c_uint64, C.c_uint64, C.c_uint64,
                                 C.c_uint64, C.c_void_p]),
        "sztx_stream_scan": (C.c_int, [C.c_void_p, C.c_uint64, _u64p]),
        "sztx_status_name": (C.c_char_p, [C.c_int]),
        "sztx_xxh64": (C.c_uint64, [C.c_void_p, C.c_uint64]),
        "sztx_slot_capacity": (C.c_uint64, [C.c_int, C.c_uint64]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib


_lib = None


def lib():
    global _lib
    if _lib is None:
        _lib = load()
    return _lib


def check(status, what):
    if status != 0:
        raise SplitzipError(f"{what}: {lib().sztx_status_name(status).decode()}")


def _stats(fn, h):
    out = (C.c_double * 4)()
    fn(h, out)
    return {"frames": int(out[0]), "raw_bytes": int(out[1]), "coded_bytes": int(out[2]),
            "busy_s": out[3]}


class Encoder:
    """StreamEncoder over a list of contiguous numpy tensors (kept alive here)."""

    def __init__(self, tensors, frame_elems, slots, threads=1, dtype=BF16, backend=""):
        self._tensors = tensors
        n = len(tensors)
        ptrs = (C.c_void_p * max(n, 1))(*[t.ctypes.data for t in tensors])
        elems = (C.c_uint64 * max(n, 1))(*[t.nbytes // DTYPE_BYTES[dtype] for t in tensors])
        self.h = lib().sztx_encoder_new(dtype, ptrs, elems, n, frame_elems, slots, threads, 0,
                                        backend.encode())
        if not self.h:
            raise SplitzipError(f"encoder setup failed (backend {backend!r})")

    def start(self):
        check(lib().sztx_encoder_start(self.h), "encoder start")

    def next(self):
        """(slot, address, size, raw_bytes, out_offset) or None at the end."""
        out = (C.c_uint64 * 6)()
        done = C.c_int(0)
        check(lib().sztx_encoder_next(self.h, out, C.byref(done)), "encode")
        if done.value:
            return None
        return int(out[1]), int(out[2]), int(out[3]), int(out[4]), int(out[5])

    def release(self, slot):
        lib().sztx_encoder_release(self.h, slot)

    @property
    def frames(self):
        return int(lib().sztx_encoder_frames(self.h))

    @property
    def ring(self):
        return int(lib().sztx_encoder_ring(self.h)), int(lib().sztx_encoder_ring_bytes(self.h))

    def stats(self):
        return _stats(lib().sztx_encoder_stats, self.h)

    def close(self):
        if self.h:
            lib().sztx_encoder_free(self.h)
            self.h = None


class Decoder:
    """StreamDecoder writing into the numpy uint8 array dst."""

    def __init__(self, dst, slots, slot_capacity, threads=1, backend=""):
        self._dst = dst
        self.slot_capacity = slot_capacity
        self.h = lib().sztx_decoder_new(dst.ctypes.data, dst.nbytes, slots, slot_capacity,
                                        threads, backend.encode())
        if not self.h:
            raise SplitzipError(f"decoder setup failed (backend {backend!r})")
        check(lib().sztx_decoder_start(self.h), "decoder start")

    def acquire(self):
        s = C.c_uint32(0)
        check(lib().sztx_decoder_acquire(self.h, C.byref(s)), "decoder acquire")
        return s.value

    def submit(self, slot, size, offset, expect):
        check(lib().sztx_decoder_submit(self.h, slot, size, offset, expect), "decoder submit")

    def finish(self):
        check(lib().sztx_decoder_finish(self.h), "decode")

    @property
    def ring(self):
        return int(lib().sztx_decoder_ring(self.h)), int(lib().sztx_decoder_ring_bytes(self.h))

    def stats(self):
        return _stats(lib().sztx_decoder_stats, self.h)

    def stop(self):
        lib().sztx_decoder_stop(self.h)

    def close(self):
        if self.h:
            lib().sztx_decoder_free(self.h)
            self.h = None


def stream_scan(buf):
    """(frames, decoded bytes) of a stream of back-to-back frames in a host
    buffer, every header checked (the library's FrameIterator). An empty
    stream is (0, 0)."""
    view = np.frombuffer(buf, dtype=np.uint8)
    out = (C.c_uint64 * 2)()
    check(lib().sztx_stream_scan(view.ctypes.data if view.size else None, view.size, out),
          "stream scan")
    return int(out[0]), int(out[1])


def slot_capacity(frame_elems, dtype=BF16):
    return int(lib().sztx_slot_capacity(dtype, frame_elems))


def predict(enc_Bps, dec_Bps, link_Bps, ratio, payload, n_frames, latency_s=0.0):
    """Appendix B model (bench/pipeline_model.h predict)."""
    out = (C.c_double * 7)()
    check(lib().sztx_predict(enc_Bps, dec_Bps, link_Bps, ratio, latency_s, payload, n_frames,
                             out), "predict")
    return {"raw_s": out[0], "compressed_s": out[1], "steady_stage_s": out[2],
            "bottleneck": STAGES[int(out[3])], "b_hide_Bps": out[4], "speedup": out[5],
            "ideal_speedup": out[6]}


# ---- payloads --------------------------------------------------------------

def real_kv(repeat=1):
    """The bundled stories260k KV (10 bf16 tensors, 5 MiB), `repeat` times
    in sequence (each copy a separate tensor, as more layers would be)."""
    files = sorted(glob.glob(os.path.join(DATA_DIR, "layer*_[kv].bf16")))
    if not files:
        raise SplitzipError(f"no KV files under {DATA_DIR}")
    base = [np.fromfile(f, dtype=np.uint8) for f in files]
    return [t.copy() for _ in range(repeat) for t in base]


CACHE_DIR = os.environ.get("SPLITZIP_TRANSFER_CACHE",
                           os.path.join(ROOT, "build-transfer", "kv-cache"))


def _synthetic_tensor(generator, nbytes, seed):
    # Generating is single-threaded and slow (~50 MB/s); both sides and the
    # check need the same bytes, so each tensor is made once and cached.
    path = os.path.join(CACHE_DIR, f"{generator}-bf16-{nbytes}-{seed}.bin")
    if os.path.exists(path) and os.path.getsize(path) == nbytes:
        return np.fromfile(path, dtype=np.uint8)
    t = np.empty(nbytes, dtype=np.uint8)
    n = nbytes // 2
    check(lib().sztx_synth(generator.encode(), BF16, n, seed, 0, n, t.ctypes.data), "synthetic")
    os.makedirs(CACHE_DIR, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    t.tofile(tmp)
    os.replace(tmp, path)
    return t


def synthetic_kv(total_mb, layer_mb=32, seed=7, generator="gaussian_kv"):
    """Deterministic synthetic bf16 KV (tests/support/synthetic.h), total_mb MiB in
    tensors of layer_mb MiB (tensor i from seed + i)."""
    total = int(total_mb * (1 << 20)) // 2 * 2
    per = int(layer_mb * (1 << 20)) // 2 * 2
    out = []
    i = 0
    while total > 0:
        nb = min(per, total)
        out.append(_synthetic_tensor(generator, nb, seed + i))
        total -= nb
        i += 1
    return out


def make_payload(source, size_mb=0.0, repeat=1, layer_mb=32):
    if source == "real":
        return real_kv(repeat)
    if source == "synthetic":
        return synthetic_kv(size_mb, layer_mb)
    raise SplitzipError(f"unknown source {source!r}")
