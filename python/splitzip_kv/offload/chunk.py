# SPDX-License-Identifier: Apache-2.0
"""The value stored under one offload key: a small header plus splitzip frames.

A chunk is one (layer, token block) of a paged KV cache: its parts are the
K page and the V page (any number of equal-sized parts is allowed). Each
part is one splitzip frame, always with the XXH64 content checksum, coded
in the store's mode: "fast" (the 4-bit exponent code, each frame with its
own top-16 codebook) or "capacity" (per-block Huffman-coded exponents,
smaller frames). The mode is recorded in each frame (FORMAT.md header byte
49), not here: a reader decodes either mode without being told. The
header binds the value to its key, so a value stored (or replicated, or
copied) under the wrong key is refused as well as one with flipped bits.

Layout, little-endian:

    0   4   magic b"SZKC"
    4   1   chunk version (1)
    5   1   dtype id (FORMAT.md section 2: bf16 1, fp16 2, fp32 3, fp8_e5m2 4, fp8_e4m3 5)
    6   2   number of parts P (1..65535)
    8   8   xxh64 of the key (utf-8), seed 0
    16  8   elements per part
    24  4P  frame size of each part (u32)
    ..      zero padding to a multiple of 8
    H-8 8   xxh64 of bytes [0, H-8) (the header checksum), H = header size
    H   ..  the P frames back to back

Decoding checks, in order: size, magic, version, header checksum, key hash,
frame sizes against the value size, then per frame: the splitzip header
(frame_info), that the checksum flag is set, dtype and element count, and
finally the content checksum while decoding. Any failure raises ChunkError
naming the key; the destination of a failed chunk must not be used (the
store layer zeroes it).
"""

import math
import struct

import numpy as np

import splitzip_kv as splitzip
from splitzip_kv import _api, _core

MAGIC = b"SZKC"
VERSION = 1
DTYPE_IDS = {"bf16": 1, "fp16": 2, "fp32": 3, "fp8_e5m2": 4, "fp8_e4m3": 5}
DTYPE_NAMES = {v: k for k, v in DTYPE_IDS.items()}
_FIXED = struct.Struct("<4sBBHQQ")  # 24 bytes
_ITEMSIZE = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8_e5m2": 1, "fp8_e4m3": 1}
MODES = ("fast", "capacity")
_FRAME_MODE_BYTE = 49  # FORMAT.md section 3: the frame header's mode field


def check_mode(mode, what="codec mode"):
    """``mode`` if it is one of MODES, else ValueError naming the choices."""
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"{what} must be 'fast' or 'capacity', not {mode!r}")
    return mode


def check_dtype(dtype):
    """``dtype`` if it is a splitzip dtype name, else ValueError naming them."""
    if not isinstance(dtype, str) or dtype not in DTYPE_IDS:
        raise ValueError(f"dtype must be one of {sorted(DTYPE_IDS)}, not {dtype!r}")
    return dtype


class ChunkError(ValueError):
    """A stored value that is not a valid chunk for its key (corrupt, truncated,
    stored under another key, or of another layout). ``.key`` names the key."""

    def __init__(self, key, reason):
        super().__init__(f"chunk {key!r} refused: {reason}")
        self.key = key
        self.reason = reason


def _xxh64(data):
    """XXH64 (seed 0) of bytes or of a host array's bytes: straight to the
    extension for bytes and contiguous uint8 arrays (the public wrapper's
    argument handling cost as much as hashing a chunk header)."""
    if isinstance(data, bytes) or (data.dtype == np.uint8 and data.flags.c_contiguous):
        return _core.xxh64(data, 0)
    return splitzip.xxh64(data)


def key_hash(key):
    return _xxh64(key.encode("utf-8"))


def header_size(n_parts):
    return ((_FIXED.size + 4 * n_parts + 7) & ~7) + 8


def chunk_bound(dtype, n_parts, part_elems):
    """Largest value a chunk of n_parts parts of part_elems elements can take."""
    return header_size(n_parts) + n_parts * splitzip.compress_bound(dtype, part_elems)


_NAMES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float8_e5m2": "fp8_e5m2",
          "float8_e4m3fn": "fp8_e4m3"}
_NAME_OF_DTYPE: dict[object, str] = {}  # dtype object -> name, filled as dtypes are seen (a str() of a dtype costs ~3 us)


def _known_name(d):
    """The splitzip name of numpy / torch dtype ``d``, or None (cached)."""
    name = _NAME_OF_DTYPE.get(d)
    if name is None:
        name = _NAMES.get(str(d).replace("torch.", ""))
        if name is not None:
            _NAME_OF_DTYPE[d] = name
    return name


def dtype_name(array):
    """splitzip dtype name of a numpy (ml_dtypes) array or torch tensor."""
    name = _known_name(array.dtype)
    if name is None:
        raise ValueError(f"dtype {array.dtype} is not supported (bf16, fp16, fp32, fp8_e4m3, fp8_e5m2)")
    return name


def _host_bytes(a, writable=False):
    """The uint8 view of a C-contiguous host numpy array, which goes to the
    codec with no further argument handling; None for anything else (torch
    tensors, strided arrays), which takes the public API. Why: at a 32 KiB
    page the public API's per-call checks cost as much as the codec."""
    if type(a) is not np.ndarray or not a.flags.c_contiguous or (writable and not a.flags.writeable):
        return None
    return a.reshape(-1).view(np.uint8)


def encode_into(key, parts, out, *, dtype=None, codebook=None, backend=None, threads=0,
                mode="fast"):
    """Writes the chunk of ``parts`` (contiguous host arrays of one dtype and
    size) for ``key`` into the uint8 array ``out``; returns the bytes used.
    ``out`` must hold chunk_bound(...) bytes (it covers both modes).
    ``mode``: "fast" or "capacity" (the codebook applies to "fast" only)."""
    check_mode(mode)
    if not parts or len(parts) > 0xFFFF:
        raise ValueError("a chunk has 1..65535 parts")
    dtype = dtype or dtype_name(parts[0])
    n = math.prod(parts[0].shape) if hasattr(parts[0], "shape") else None
    h = header_size(len(parts))
    off = h
    sizes = []
    # The checks compress_into() would make per part, once.
    _api._check_codebook(codebook)
    _api._check_common(10, threads)
    m = _api._mode(mode)
    dst = _host_bytes(out, writable=True)
    for p in parts:
        if math.prod(p.shape) != n:
            raise ValueError("all parts of a chunk must have the same number of elements")
        src = _host_bytes(p) if dst is not None else None
        if src is not None and _known_name(p.dtype) == dtype:
            size, _ = _core.compress_into(src, dst[off:], dtype, codebook, 10, True, backend, threads, m)
        else:
            size = splitzip.compress_into(p, out[off:], codebook=codebook, backend=backend,
                                          checksum=True, dtype=dtype, threads=threads, mode=mode).size
        sizes.append(size)
        off += size
    _FIXED.pack_into(out, 0, MAGIC, VERSION, DTYPE_IDS[dtype], len(parts), key_hash(key), n)
    struct.pack_into(f"<{len(parts)}I", out, _FIXED.size, *sizes)
    pad_from = _FIXED.size + 4 * len(parts)
    out[pad_from:h - 8] = 0
    struct.pack_into("<Q", out, h - 8, _xxh64(out[:h - 8]))
    return off


def encode_many(keys, src, part_offsets, n_parts, part_elems, out, out_offsets, *, dtype,
                codebook=None, backend=None, threads=0, mode="fast"):
    """Writes the chunks of ``keys`` in one call (the GIL released once,
    threads across the chunks): chunk i's part j is the ``part_elems``
    values at byte offset ``part_offsets[i * n_parts + j]`` of ``src`` (a
    C-contiguous host numpy array: a paged KV cache, a tensor's rows), and
    its value goes to ``out[out_offsets[i]:]``, which must hold
    chunk_bound(...) bytes. The values are those encode_into() writes.
    Returns (sizes, errors): each value's size (0 where it failed) and
    {chunk index: reason} for the chunks that failed."""
    check_mode(mode)
    _api._check_codebook(codebook)
    _api._check_common(10, threads)
    sizes, errors = _core.encode_chunks(
        _host_bytes(out, writable=True), _u64(out_offsets), keys, _host_bytes(src), _u64(part_offsets),
        n_parts, part_elems, dtype, DTYPE_IDS[dtype], codebook, backend, threads, _api._mode(mode))
    return sizes, dict(errors)


def decode_many(keys, buf, value_offsets, value_sizes, dst, part_offsets, n_parts, part_elems, *,
                dtype, backend=None, threads=0, exact=True, tables=None):
    """Checks and decodes the values of ``keys`` in one call (the GIL released
    once, threads across all parts): value i is ``buf[value_offsets[i]:][:value_sizes[i]]``
    and its part j goes to byte offset ``part_offsets[i * n_parts + j]`` of
    ``dst`` (a writable C-contiguous host numpy array). The checks are
    decode_into()'s, in its order. Returns a list with None for each value
    decoded and the ChunkError reason for each one refused (its destination
    parts are then undefined). ``tables``: the capacity table sets (a
    TableSet or a list) frames may name; a frame naming another is refused
    with a reason that contains MISSING_TABLES."""
    _api._check_common(None, threads)
    return _core.decode_chunks(buf, _u64(value_offsets), _u64(value_sizes), keys,
                               _host_bytes(dst, writable=True), _u64(part_offsets), n_parts,
                               part_elems, dtype, DTYPE_IDS[dtype], exact, backend, threads, tables)


def _u64(a):
    """uint64 array or a list of ints, as _core takes them."""
    return a if type(a) is list or (type(a) is np.ndarray and a.dtype == np.uint64) else np.asarray(a, np.uint64)


def encode(key, parts, **kw):
    """The chunk as bytes (convenience; encode_into avoids the allocation)."""
    dtype = kw.get("dtype") or dtype_name(parts[0])
    out = np.empty(chunk_bound(dtype, len(parts), math.prod(parts[0].shape)), np.uint8)
    n = encode_into(key, parts, out, **kw)
    return out[:n].tobytes()


def parse(key, value, *, dtype=None, n_parts=None, part_elems=None, exact=True):
    """Validates the chunk header of ``value`` (bytes-like or uint8 array) for
    ``key``; returns (dtype, elements per part, [(offset, size) of each frame]).
    ``exact=False`` accepts bytes after the chunk (a buffer larger than the
    value, as LMCache hands over). Raises ChunkError."""
    buf = value if isinstance(value, np.ndarray) else np.frombuffer(value, np.uint8)
    if buf.size < _FIXED.size:
        raise ChunkError(key, f"value of {buf.size} bytes is shorter than a chunk header")
    magic, version, dtype_id, parts, khash, elems = _FIXED.unpack_from(buf, 0)
    if magic != MAGIC:
        raise ChunkError(key, "bad magic (not a splitzip chunk)")
    if version != VERSION:
        raise ChunkError(key, f"unsupported chunk version {version}")
    if parts == 0:
        raise ChunkError(key, "chunk header has no parts")
    h = header_size(parts)
    if buf.size < h:
        raise ChunkError(key, "truncated chunk header")
    (hsum,) = struct.unpack_from("<Q", buf, h - 8)
    if hsum != _xxh64(buf[:h - 8]):
        raise ChunkError(key, "chunk header checksum mismatch")
    if khash != key_hash(key):
        raise ChunkError(key, "value belongs to another key")
    if dtype_id not in DTYPE_NAMES:
        raise ChunkError(key, f"unknown dtype id {dtype_id}")
    name = DTYPE_NAMES[dtype_id]
    if dtype is not None and name != dtype:
        raise ChunkError(key, f"dtype {name}, expected {dtype}")
    if n_parts is not None and parts != n_parts:
        raise ChunkError(key, f"{parts} parts, expected {n_parts}")
    if part_elems is not None and elems != part_elems:
        raise ChunkError(key, f"{elems} elements per part, expected {part_elems}")
    sizes = struct.unpack_from(f"<{parts}I", buf, _FIXED.size)
    if (h + sum(sizes) != buf.size) if exact else (h + sum(sizes) > buf.size):
        raise ChunkError(key, f"frame sizes add up to {h + sum(sizes)} bytes, value has {buf.size}")
    spans, off = [], h
    for s in sizes:
        spans.append((off, s))
        off += s
    return name, elems, spans


def frame_modes(key, value, *, exact=True):
    """How each part of a valid chunk is coded: "fast", "capacity", or
    "stored" (a frame kept raw because coding would not shrink it, in either
    mode). Read from the frames' headers; raises ChunkError like parse()."""
    buf = value if isinstance(value, np.ndarray) else np.frombuffer(value, np.uint8)
    _, _, spans = parse(key, buf, exact=exact)
    out = []
    for i, (off, size) in enumerate(spans):
        try:
            info = splitzip.frame_info(buf[off:off + size])
        except splitzip.SplitzipError as e:
            raise ChunkError(key, f"part {i}: {e.status}: {e.message}") from None
        out.append("stored" if info["stored"] else MODES[int(buf[off + _FRAME_MODE_BYTE])])
    return out


def _dest_error(dst, elems, name):
    """Why ``dst`` cannot take a part of ``elems`` ``name`` values, or None."""
    if math.prod(dst.shape) != elems or dtype_name(dst) != name:
        return f"destination is {dst.shape} {dst.dtype}, chunk holds {elems} {name}"
    return None


def decode_into(key, value, dests, *, backend=None, threads=0, exact=True):
    """Decodes the chunk ``value`` for ``key`` into the arrays ``dests`` (one
    per part, C-contiguous, the chunk's dtype and size), in place. Raises
    ChunkError for anything wrong; the dests' content is then undefined."""
    buf = value if isinstance(value, np.ndarray) else np.frombuffer(value, np.uint8)
    name, elems, spans = parse(key, buf, n_parts=len(dests), exact=exact)
    _api._check_common(None, threads)
    host = buf.dtype == np.uint8 and buf.ndim == 1 and buf.flags.c_contiguous
    raws = [_host_bytes(d, writable=True) for d in dests] if host else None
    if raws is not None and all(r is not None for r in raws):
        # Host numpy destinations: every part's checks and decode in one
        # call (at a 32 KiB page the per-part Python steps below cost three
        # times the codec); the same checks in the same order.
        errs = [_dest_error(d, elems, name) for d in dests]
        bad = _core.decode_chunk_parts(buf, spans, raws, errs, name, elems, backend, threads)
        if bad is not None:
            i, status, message = bad
            raise ChunkError(key, f"part {i}: {status}: {message}" if status else f"part {i}: {message}")
        return elems * _ITEMSIZE[name] * len(dests)
    for i, ((off, size), dst) in enumerate(zip(spans, dests)):
        frame = buf[off:off + size]
        try:
            info = _core.frame_info(frame, 0) if host else splitzip.frame_info(frame)
        except splitzip.SplitzipError as e:
            raise ChunkError(key, f"part {i}: {e.status}: {e.message}") from None
        if info["frame_size"] != size:
            raise ChunkError(key, f"part {i}: frame is {info['frame_size']} bytes, span {size}")
        if not info["checksum"]:
            raise ChunkError(key, f"part {i}: frame has no content checksum")
        if info["dtype"] != name or info["n_elems"] != elems:
            raise ChunkError(key, f"part {i}: frame holds {info['n_elems']} {info['dtype']}, "
                             f"expected {elems} {name}")
        err = _dest_error(dst, elems, name)
        if err is not None:
            raise ChunkError(key, f"part {i}: {err}")
        try:
            raw = _host_bytes(dst, writable=True) if host else None
            if raw is not None:
                # One frame of `name` (checked above) into bytes of its size.
                _core.decompress_into(frame, raw, name, False, backend, threads, 0, True)
            else:
                splitzip.decompress(frame, out=dst, backend=backend, threads=threads,
                                    verify_checksum=True)
        except splitzip.SplitzipError as e:
            raise ChunkError(key, f"part {i}: {e.status}: {e.message}") from None
    return elems * _ITEMSIZE[name] * len(dests)
