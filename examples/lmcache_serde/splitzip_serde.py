# SPDX-License-Identifier: Apache-2.0
"""An LMCache-style serde for KV-cache chunks, built on splitzip.

A KV chunk is a tensor laid out as ``[layers, 2, tokens, heads, head_dim]``
(index 1: 0 = K, 1 = V) in bf16, fp16, fp32 or fp8_e5m2. It is stored as one
splitzip frame per layer and K/V, behind a small container header that
records the layout and each frame's size, so a reader can check the layout
before decoding and decode one layer without touching the others.

Container (little-endian, all offsets from its start):

    0   4   magic b"SZLC"
    4   2   container version (1)
    6   1   dtype id (splitzip FORMAT.md section 2)
    7   1   reserved, 0
    8   40  layers, 2, tokens, heads, head_dim (u64 each)
    48  8   frame count F = 2 * layers
    56  8   payload bytes (sum of frame sizes)
    64  8F  frame sizes, in (layer, K/V) order
    ..      zero padding to a multiple of 16, then the F frames back to back

Interface (as the issue asks, after LMCache's serializer/deserializer pair):

    estimate_serialized_size(layout) -> int      upper bound, before compressing
    serialize(src, dst) -> int                   bytes written into dst
    deserialize(src, dst) -> int                 bytes written into dst
"""

import struct
from dataclasses import dataclass

import ml_dtypes
import numpy as np

import splitzip_kv

MAGIC = b"SZLC"
VERSION = 1
_FIXED = struct.Struct("<4sHBB5QQQ")  # 64 bytes
_DTYPE_IDS = {"bf16": 1, "fp16": 2, "fp32": 3, "fp8_e5m2": 4}
_DTYPE_NAMES = {v: k for k, v in _DTYPE_IDS.items()}


class SerdeError(ValueError):
    """The container is malformed or does not match the destination."""


@dataclass(frozen=True)
class KVLayout:
    layers: int
    tokens: int
    heads: int
    head_dim: int
    dtype: str = "bf16"

    @property
    def shape(self):
        return (self.layers, 2, self.tokens, self.heads, self.head_dim)

    @property
    def frame_elems(self):
        return self.tokens * self.heads * self.head_dim

    @classmethod
    def of(cls, array):
        """The layout of a [layers, 2, tokens, heads, head_dim] numpy array or torch tensor."""
        shape = tuple(int(s) for s in array.shape)
        if len(shape) != 5 or shape[1] != 2:
            raise SerdeError(f"expected a [layers, 2, tokens, heads, head_dim] array, got {shape}")
        return cls(shape[0], shape[2], shape[3], shape[4], _dtype_name(array))


def _dtype_name(array):
    dt = array.dtype
    name = str(dt).replace("torch.", "")
    return {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32",
            "float8_e5m2": "fp8_e5m2"}.get(name) or _unsupported(dt)


def _unsupported(dt):
    raise SerdeError(f"dtype {dt} is not supported (bf16, fp16, fp32, fp8_e5m2)")


def _align16(x):
    return (x + 15) & ~15


def _header_size(layout):
    return _align16(_FIXED.size + 8 * 2 * layout.layers)


def estimate_serialized_size(layout):
    """Upper bound of serialize()'s output for this layout: header plus the
    worst case of every frame (splitzip_kv.compress_bound)."""
    return _header_size(layout) + 2 * layout.layers * splitzip_kv.compress_bound(
        layout.dtype, layout.frame_elems)


def _bytes_view(dst, writable):
    """A flat numpy uint8 view of a bytes-like object or CPU tensor (no copy)."""
    if isinstance(dst, np.ndarray):
        if not dst.flags.c_contiguous:
            raise SerdeError("buffer must be C-contiguous")
        return dst.reshape(-1).view(np.uint8)
    if hasattr(dst, "numpy") and hasattr(dst, "device"):  # torch tensor on the CPU
        if dst.device.type != "cpu":
            raise SerdeError("this serde works on host buffers; copy device tensors first")
        return _bytes_view(dst.detach().numpy(), writable)
    view = np.frombuffer(dst, dtype=np.uint8)
    if writable and not view.flags.writeable:
        raise SerdeError("destination is read-only")
    return view


_NUMPY = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32,
          "fp8_e5m2": ml_dtypes.float8_e5m2}


def _kv_view(array, writable):
    """The KV tensor as a C-contiguous numpy array of its dtype, sharing memory
    with array (a read-only source that is not contiguous is copied once)."""
    if hasattr(array, "numpy") and hasattr(array, "device"):  # torch
        import torch

        if array.device.type != "cpu":
            raise SerdeError("this serde works on host tensors; copy device tensors first")
        if not array.is_contiguous():
            if writable:
                raise SerdeError("destination tensor must be contiguous")
            array = array.contiguous()
        # numpy has no bfloat16: cross as raw integers, then view with ml_dtypes.
        raw = array.detach().view({1: torch.uint8, 2: torch.int16, 4: torch.int32}[
            array.element_size()]).numpy()
        return raw.view(_NUMPY[_dtype_name(array)])
    arr = np.asarray(array)
    if not arr.flags.c_contiguous:
        if writable:
            raise SerdeError("destination array must be C-contiguous")
        arr = np.ascontiguousarray(arr)
    return arr


def serialize(src, dst, *, codebook=None, checksum=True):
    """Compresses the KV tensor src into dst; returns the bytes written.

    dst is any writable byte buffer (bytearray, numpy uint8, CPU uint8
    tensor) of at least estimate_serialized_size(KVLayout.of(src)) bytes.
    A calibrated ``codebook`` (splitzip_kv.calibrate over sample chunks) skips
    the per-frame histogram; by default each frame uses its own top-16.
    """
    layout = KVLayout.of(src)
    kv = _kv_view(src, writable=False)
    out = _bytes_view(dst, writable=True)
    need = estimate_serialized_size(layout)
    if out.size < need:
        raise SerdeError(f"destination holds {out.size} bytes, needs up to {need} "
                         "(estimate_serialized_size)")
    header = _header_size(layout)
    off = header
    sizes = []
    for layer in range(layout.layers):
        for half in range(2):
            res = splitzip_kv.compress_into(kv[layer, half], out[off:], codebook=codebook,
                                         checksum=checksum)
            sizes.append(res.size)
            off += res.size
    _FIXED.pack_into(out, 0, MAGIC, VERSION, _DTYPE_IDS[layout.dtype], 0, *layout.shape,
                     len(sizes), off - header)
    struct.pack_into(f"<{len(sizes)}Q", out, _FIXED.size, *sizes)
    out[_FIXED.size + 8 * len(sizes):header] = 0
    return off


def read_header(src):
    """(layout, frame offsets, total size) of a container, validated."""
    buf = _bytes_view(src, writable=False)
    if buf.size < _FIXED.size:
        raise SerdeError("truncated container header")
    magic, version, dtype_id, reserved, layers, two, tokens, heads, head_dim, count, payload = \
        _FIXED.unpack_from(buf, 0)
    if magic != MAGIC:
        raise SerdeError("not a splitzip KV container (bad magic)")
    if version != VERSION or reserved != 0:
        raise SerdeError(f"unsupported container version {version}")
    if dtype_id not in _DTYPE_NAMES or two != 2 or count != 2 * layers:
        raise SerdeError("inconsistent container header")
    layout = KVLayout(layers, tokens, heads, head_dim, _DTYPE_NAMES[dtype_id])
    header = _header_size(layout)
    if buf.size < header:
        raise SerdeError("truncated frame table")
    sizes = struct.unpack_from(f"<{count}Q", buf, _FIXED.size)
    if sum(sizes) != payload or header + payload > buf.size:
        raise SerdeError("frame table does not match the payload")
    offsets = np.concatenate([[0], np.cumsum(sizes, dtype=np.uint64)]).astype(np.int64) + header
    return layout, offsets, header + payload


def deserialize(src, dst, *, layers=None):
    """Decodes the container src into the KV tensor dst (in place, zero copy).

    dst must have the container's shape and dtype (numpy array or CPU torch
    tensor). ``layers`` restricts decoding to some layers (e.g. range(2, 4)).
    Returns the bytes written into dst.
    """
    layout, offsets, _ = read_header(src)
    buf = _bytes_view(src, writable=False)
    got = KVLayout.of(dst)
    if got != layout:
        raise SerdeError(f"destination layout {got} differs from the container's {layout}")
    kv = _kv_view(dst, writable=True)
    written = 0
    for layer in (range(layout.layers) if layers is None else layers):
        if not 0 <= layer < layout.layers:
            raise SerdeError(f"layer {layer} out of range")
        for half in range(2):
            i = 2 * layer + half
            frame = buf[offsets[i]:offsets[i + 1]]
            info = splitzip_kv.frame_info(frame)
            if info["frame_size"] != frame.size or info["dtype"] != layout.dtype \
                    or info["n_elems"] != layout.frame_elems:
                raise SerdeError(f"frame {i} does not match the container layout")
            target = kv[layer, half]
            splitzip_kv.decompress(frame, out=target)
            written += target.nbytes
    return written
