# SPDX-License-Identifier: Apache-2.0
"""splitzip as an LMCache serde plugin (LMCache v1 distributed storage).

LMCache wraps an L2 adapter (its remote / disk / Mooncake backends) with a
serde named in the adapter's config:

    {"type": "...", ..., "serde": {"type": "splitzip"}}

after ``splitzip_kv.offload.lmcache_serde.register()`` has put the name in
LMCache's serde registry (``lmcache.v1.distributed.serde.factory``). The
plugin implements LMCache's sync ``Serializer`` / ``Deserializer`` and is
wrapped in LMCache's own ``AsyncSerdeProcessor``.

Lossless and shape/dtype preserving: a KV object (LMCache's
``[2, layers, tokens, hidden]`` tensor, or any bf16/fp16/fp32/fp8_e5m2
tensor) becomes one checksummed splitzip frame per row of its first two
axes (K/V x layer), coded in the serializer's mode (chunk.py), inside the
offload chunk format, preceded by a small shape record:

    0  4  b"SZLM"   4 2 version (1)   6 2 ndim   8 8*ndim dims (u64)   then the chunk

The chunk is bound to the object key *and* the shape (the key hash covers
both), so bytes read back for another key, or for a buffer of another
shape or dtype, are refused (ChunkError) and never written as KV.

Serializer kwargs (the "serde" dict): ``backend`` (splitzip backend name),
``threads``, ``max_workers`` (AsyncSerdeProcessor pool size), ``mode``:
"fast" (default, the 4-bit exponent code with a top-16 codebook per frame)
or "capacity" (per-block Huffman-coded exponents: smaller records, slower).
Each frame records its mode, so the deserializer reads records of either
mode without being told.
"""

import struct

import numpy as np

from . import chunk as _chunk
from .. import _dtypes

_PREFIX = struct.Struct("<4sHH")
MAGIC = b"SZLM"
VERSION = 1

try:  # LMCache's interface, when it is installed (it needs torch).
    from lmcache.v1.distributed.serde.base import Deserializer as _Deserializer
    from lmcache.v1.distributed.serde.base import Serializer as _Serializer
    HAVE_LMCACHE = True
except ImportError:  # usable standalone: the same methods, no LMCache base class
    _Serializer = _Deserializer = object
    HAVE_LMCACHE = False


def _dtype_name(dt):
    """splitzip name of a torch or numpy dtype (fp8 kinds included), None when
    splitzip has none (never numpy's TypeError on a torch dtype)."""
    if str(dt).startswith("torch."):
        return _dtypes.from_torch(dt)
    try:
        return _dtypes.from_numpy(dt)
    except TypeError:
        return None


def _rows(shape):
    shape = tuple(int(s) for s in shape)
    if len(shape) >= 3:
        return shape[0] * shape[1]
    return shape[0] if len(shape) == 2 else 1


def _object_key(key, shape, dtype):
    if key is None:
        k = ""
    elif hasattr(key, "chunk_hash"):
        k = "@".join([key.model_name, str(key.kv_rank), str(getattr(key, "object_group_id", 0)),
                      getattr(key, "cache_salt", ""), bytes(key.chunk_hash).hex()])
    else:
        k = str(key)
    return f"{k}|{'x'.join(str(int(s)) for s in shape)}|{dtype}"


def _prefix_size(ndim):
    return _PREFIX.size + 8 * ndim


def _flat_bytes(obj):
    """A flat numpy uint8 view of a MemoryObj's buffer (or of a tensor/array)."""
    t = obj.tensor if hasattr(obj, "tensor") and not hasattr(obj, "numpy") else obj
    if t is None:
        raise ValueError("splitzip serde needs a MemoryObj with a tensor")
    if hasattr(t, "numpy"):
        import torch
        if t.device.type != "cpu":
            raise ValueError("splitzip serde works on host memory objects")
        if not t.is_contiguous():
            raise ValueError("splitzip serde needs contiguous buffers")
        return t.reshape(-1).view(torch.uint8).numpy()
    return np.asarray(t).reshape(-1).view(np.uint8)


def _kv_tensor(obj):
    t = obj.tensor if hasattr(obj, "tensor") and not hasattr(obj, "numpy") else obj
    if t is None:
        raise ValueError("splitzip serde needs a MemoryObj with a tensor")
    dtype = _dtype_name(t.dtype)
    if dtype is None:
        raise ValueError(f"splitzip serde: dtype {t.dtype} is not supported "
                         "(bf16, fp16, fp32, fp8_e4m3, fp8_e5m2)")
    if hasattr(t, "is_contiguous") and not t.is_contiguous():
        raise ValueError("splitzip serde needs a contiguous KV tensor")
    return t, tuple(int(s) for s in t.shape), dtype


class SplitzipSerializer(_Serializer):
    def __init__(self, backend=None, threads=0, mode="fast"):
        _chunk.check_mode(mode, "splitzip serde: mode")
        self.mode = mode
        self.backend = backend
        self.threads = int(threads)

    def estimate_serialized_size(self, layout_desc):
        shapes = list(layout_desc.shapes)
        dtypes = list(layout_desc.dtypes)
        if len(shapes) != 1:
            raise ValueError("splitzip serde handles single-group memory objects "
                             f"(got {len(shapes)} groups)")
        dtype = _dtype_name(dtypes[0])
        if dtype is None:
            raise ValueError(f"splitzip serde: dtype {dtypes[0]} is not supported "
                             "(bf16, fp16, fp32, fp8_e4m3, fp8_e5m2)")
        shape = tuple(int(s) for s in shapes[0])
        n = int(np.prod(shape))
        rows = _rows(shape)
        return _prefix_size(len(shape)) + _chunk.chunk_bound(dtype, rows, n // rows)

    def serialize(self, src, dst, key=None):
        t, shape, dtype = _kv_tensor(src)
        out = _flat_bytes(dst)
        rows = _rows(shape)
        n = int(np.prod(shape))
        need = _prefix_size(len(shape)) + _chunk.chunk_bound(dtype, rows, n // rows)
        if out.size < need:
            raise ValueError(f"splitzip serde: destination holds {out.size} bytes, needs "
                             f"{need} (estimate_serialized_size)")
        flat = t.reshape(rows, n // rows)
        parts = [flat[i] for i in range(rows)]
        p = _prefix_size(len(shape))
        _PREFIX.pack_into(out, 0, MAGIC, VERSION, len(shape))
        struct.pack_into(f"<{len(shape)}Q", out, _PREFIX.size, *shape)
        used = _chunk.encode_into(_object_key(key, shape, dtype), parts, out[p:], dtype=dtype,
                                  backend=self.backend, threads=self.threads, mode=self.mode)
        return p + used


class SplitzipDeserializer(_Deserializer):
    def __init__(self, backend=None, threads=0):
        self.backend = backend
        self.threads = int(threads)

    def deserialize(self, src, dst, key=None):
        buf = _flat_bytes(src)
        t, shape, dtype = _kv_tensor(dst)
        if buf.size < _PREFIX.size:
            raise _chunk.ChunkError(str(key), "truncated splitzip serde record")
        magic, version, ndim = _PREFIX.unpack_from(buf, 0)
        if magic != MAGIC or version != VERSION:
            raise _chunk.ChunkError(str(key), "not a splitzip serde record")
        p = _prefix_size(ndim)
        if buf.size < p:
            raise _chunk.ChunkError(str(key), "truncated splitzip serde record")
        stored = struct.unpack_from(f"<{ndim}Q", buf, _PREFIX.size)
        if tuple(stored) != shape:
            raise _chunk.ChunkError(str(key), f"record holds shape {tuple(stored)}, "
                                    f"destination is {shape}")
        rows = _rows(shape)
        flat = t.reshape(rows, -1)
        try:
            _chunk.decode_into(_object_key(key, shape, dtype), buf[p:], [flat[i] for i in range(rows)],
                               backend=self.backend, threads=self.threads, exact=False)
        except _chunk.ChunkError:
            _flat_bytes(dst)[...] = 0  # never leave partly decoded KV behind
            raise


def make_processor(kwargs=None):
    """LMCache serde factory: kwargs from the adapter config's "serde" dict."""
    from lmcache.v1.distributed.serde.async_processor import AsyncSerdeProcessor
    kw = dict(kwargs or {})
    workers = int(kw.pop("max_workers", 1))
    backend = kw.pop("backend", None)
    threads = int(kw.pop("threads", 0))
    mode = kw.pop("mode", "fast")
    if kw:
        raise ValueError(f"splitzip serde: unknown options {sorted(kw)}")
    return AsyncSerdeProcessor(SplitzipSerializer(backend, threads, mode),
                               SplitzipDeserializer(backend, threads), max_workers=workers)


def register(name="splitzip"):
    """Registers the plugin with LMCache's serde factory (idempotent)."""
    from lmcache.v1.distributed.serde.factory import (get_registered_serde_types,
                                                      register_serde_factory)
    if name not in get_registered_serde_types():
        register_serde_factory(name, make_processor)
    return name
