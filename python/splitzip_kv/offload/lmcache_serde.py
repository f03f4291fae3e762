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

``tables``: a capacity table set calibrated offline for the model
(``splitzip calibrate --mode capacity -o model.szct ...`` or
``splitzip_kv.calibrate(samples, mode="capacity").save(...)``), given as a
set file's path, its bytes or a ``TableSet``; or a list of those. The
serializer codes with the first (the capacity mode: frames name the set
by id instead of carrying tables); the deserializer accepts every set in
the list, so records written with an older set stay readable while its
file is listed. A record naming a set not configured is refused
(``ChunkError`` naming MISSING_TABLES and the set's id), never decoded
to wrong KV.

    {"type": "...", ..., "serde": {"type": "splitzip", "tables": "/models/llama3-8b.szct"}}
"""

import math
import struct

import numpy as np

from .. import _api, _core
from . import chunk as _chunk
from .. import _dtypes, _errors

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


def _object_key(key, shape, dtype, suffix=None):
    if key is None:
        k = ""
    elif type(key) is str:
        k = key
    elif hasattr(key, "chunk_hash"):
        k = "@".join([key.model_name, str(key.kv_rank), str(getattr(key, "object_group_id", 0)),
                      getattr(key, "cache_salt", ""), bytes(key.chunk_hash).hex()])
    else:
        k = str(key)
    if suffix is None:
        suffix = f"|{'x'.join(str(int(s)) for s in shape)}|{dtype}"
    return k + suffix


def _prefix_size(ndim):
    return _PREFIX.size + 8 * ndim


def _tensor_of(obj):
    t = obj.tensor if hasattr(obj, "tensor") and not hasattr(obj, "numpy") else obj
    if t is None:
        raise ValueError("splitzip serde needs a MemoryObj with a tensor")
    return t


def _flat_bytes(obj):
    """A flat numpy uint8 view of a MemoryObj's buffer (or of a tensor/array)."""
    t = obj if type(obj) is np.ndarray else _tensor_of(obj)
    if type(t) is np.ndarray:
        if not t.flags.c_contiguous:
            raise ValueError("splitzip serde needs contiguous buffers")
        return t.reshape(-1).view(np.uint8)
    if hasattr(t, "numpy"):
        import torch
        if t.device.type != "cpu":
            raise ValueError("splitzip serde works on host memory objects")
        if not t.is_contiguous():
            raise ValueError("splitzip serde needs contiguous buffers")
        return t.reshape(-1).view(torch.uint8).numpy()
    return np.asarray(t).reshape(-1).view(np.uint8)


class _Plan:
    """What a record of one (shape, dtype) needs, computed once: records of a
    shape repeat (LMCache's chunks), and the per-call Python time is the cost."""

    def __init__(self, t):
        dtype = _dtype_name(t.dtype)
        if dtype is None:
            raise ValueError(f"splitzip serde: dtype {t.dtype} is not supported "
                             "(bf16, fp16, fp32, fp8_e4m3, fp8_e5m2)")
        self.shape = tuple(int(s) for s in t.shape)
        self.dtype = dtype
        self.dtype_id = _chunk.DTYPE_IDS[dtype]
        self.rows = _rows(self.shape)
        self.row_elems = math.prod(self.shape) // self.rows
        self.prefix_size = _prefix_size(len(self.shape))
        self.need = self.prefix_size + _chunk.chunk_bound(dtype, self.rows, self.row_elems)
        self.prefix = struct.Struct(f"<4sHH{len(self.shape)}Q")  # _PREFIX, then the dims
        self.prefix_values = (MAGIC, VERSION, len(self.shape), *self.shape)
        self.key_suffix = f"|{'x'.join(str(s) for s in self.shape)}|{dtype}"
        self.at = [self.prefix_size]
        self.row_offsets = np.arange(self.rows, dtype=np.uint64) * np.uint64(
            self.row_elems * _chunk._ITEMSIZE[dtype])


_PLANS: dict = {}


def _plan(t):
    k = (t.shape, t.dtype)
    p = _PLANS.get(k)
    if p is None:
        if len(_PLANS) > 256:
            _PLANS.clear()
        p = _PLANS[k] = _Plan(t)
    return p


def _kv_tensor(obj):
    t = _tensor_of(obj)
    if hasattr(t, "is_contiguous") and not t.is_contiguous():
        raise ValueError("splitzip serde needs a contiguous KV tensor")
    plan = _plan(t)
    return t, plan.shape, plan.dtype


def load_tables(spec):
    """The table sets a serde configuration names, as a list of TableSet:
    ``spec`` is None, a TableSet, a set file's bytes, a path (str or
    os.PathLike), or a list / tuple of those."""
    if spec is None:
        return []
    items = list(spec) if isinstance(spec, (list, tuple)) else [spec]
    sets = []
    for item in items:
        if isinstance(item, _core.TableSet):
            sets.append(item)
        elif isinstance(item, (bytes, bytearray, memoryview)):
            sets.append(_core.TableSet.from_bytes(item))
        elif isinstance(item, str) or hasattr(item, "__fspath__"):
            sets.append(_core.TableSet.load(item))
        else:
            raise ValueError("splitzip serde: tables must be a set file path, its bytes or a "
                             f"splitzip_kv.TableSet (or a list of them), not {type(item).__name__}")
    return sets


def _encode_error(text):
    """The codec's status as a SplitzipError (a ValueError), e.g. an undefined
    dtype x mode pair, from the native call's "part i: STATUS: message"."""
    parts = text.split(": ", 2)
    if len(parts) == 3 and parts[1].replace("_", "").isupper():
        return _errors.SplitzipError(parts[1], "splitzip serde: " + parts[2],
                                     _errors._CODES.get(parts[1]))
    return ValueError(f"splitzip serde: {text}")


_UNSET = object()  # mode not given: fast, or capacity with a table set


class SplitzipSerializer(_Serializer):
    def __init__(self, backend=None, threads=0, mode=_UNSET, tables=None):
        sets = load_tables(tables)
        self.tables = sets[0] if sets else None
        if mode is _UNSET:
            mode = "capacity" if self.tables is not None else "fast"
        _chunk.check_mode(mode, "splitzip serde: mode")
        if self.tables is not None and mode != "capacity":
            raise ValueError("splitzip serde: a table set codes the capacity mode; mode='fast' conflicts")
        _api._check_common(None, threads)
        self.mode = mode
        self._mode = _api._mode(mode)
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
        t = _tensor_of(src)
        plan = _plan(t)
        out = _flat_bytes(dst)
        if out.size < plan.need:
            raise ValueError(f"splitzip serde: destination holds {out.size} bytes, needs "
                             f"{plan.need} (estimate_serialized_size)")
        plan.prefix.pack_into(out, 0, *plan.prefix_values)
        # Every row in one codec call (chunk.encode_many's native call, its
        # checks made once in __init__ and _Plan), straight from the tensor.
        sizes, errors = _core.encode_chunks(
            out, plan.at, [_object_key(key, plan.shape, plan.dtype, plan.key_suffix)], _flat_bytes(t), plan.row_offsets,
            plan.rows, plan.row_elems, plan.dtype, plan.dtype_id, None, self.backend, self.threads,
            self._mode, self.tables if self.tables is not None and self.tables.dtype == plan.dtype else None)
        if errors:
            raise _encode_error(errors[0][1])
        return plan.prefix_size + sizes[0]


class SplitzipDeserializer(_Deserializer):
    def __init__(self, backend=None, threads=0, tables=None):
        _api._check_common(None, threads)
        self.backend = backend
        self.threads = int(threads)
        self.tables = load_tables(tables)

    def deserialize(self, src, dst, key=None):
        buf = _flat_bytes(src)
        t = _tensor_of(dst)
        plan = _plan(t)
        shape = plan.shape
        if buf.size < _PREFIX.size:
            raise _chunk.ChunkError(str(key), "truncated splitzip serde record")
        magic, version, ndim = _PREFIX.unpack_from(buf, 0)
        if magic != MAGIC or version != VERSION:
            raise _chunk.ChunkError(str(key), "not a splitzip serde record")
        p = _prefix_size(ndim)
        if buf.size < p:
            raise _chunk.ChunkError(str(key), "truncated splitzip serde record")
        stored = plan.prefix.unpack_from(buf, 0)[3:] if ndim == len(shape) else \
            struct.unpack_from(f"<{ndim}Q", buf, _PREFIX.size)
        if stored != shape:
            raise _chunk.ChunkError(str(key), f"record holds shape {tuple(stored)}, "
                                    f"destination is {shape}")
        k = _object_key(key, shape, plan.dtype, plan.key_suffix)
        # Checks and every row's decode in one call (chunk.decode_many's native call).
        why = _core.decode_chunks(buf, plan.at, [buf.size - p], [k], _flat_bytes(t),
                                  plan.row_offsets, plan.rows, plan.row_elems, plan.dtype, plan.dtype_id,
                                  False, self.backend, self.threads, self.tables)[0]
        if why is not None:
            _flat_bytes(dst)[...] = 0  # never leave partly decoded KV behind
            raise _chunk.ChunkError(k, why)


def make_processor(kwargs=None):
    """LMCache serde factory: kwargs from the adapter config's "serde" dict."""
    from lmcache.v1.distributed.serde.async_processor import AsyncSerdeProcessor
    kw = dict(kwargs or {})
    workers = int(kw.pop("max_workers", 1))
    backend = kw.pop("backend", None)
    threads = int(kw.pop("threads", 0))
    mode = kw.pop("mode", _UNSET)
    tables = load_tables(kw.pop("tables", None))  # read once, shared by both sides
    if kw:
        raise ValueError(f"splitzip serde: unknown options {sorted(kw)}")
    return AsyncSerdeProcessor(SplitzipSerializer(backend, threads, mode, tables),
                               SplitzipDeserializer(backend, threads, tables), max_workers=workers)


def register(name="splitzip"):
    """Registers the plugin with LMCache's serde factory (idempotent)."""
    from lmcache.v1.distributed.serde.factory import (get_registered_serde_types,
                                                      register_serde_factory)
    if name not in get_registered_serde_types():
        register_serde_factory(name, make_processor)
    return name
