# SPDX-License-Identifier: Apache-2.0
"""numcodecs and Zarr 3 codec for splitzip.

With the wheel installed (``pip install`` of the splitzip-kv wheel or of
``./python``; see docs/PACKAGING.md)::

    import numcodecs
    codec = numcodecs.get_codec({"id": "splitzip", "mode": "capacity"})  # numcodecs.codecs entry point
    frame = codec.encode(kv)                                    # bf16 / fp16 / fp32 / fp8
    back = codec.decode(frame)

Zarr 3 (``zarr>=3.1.3``): the array-to-bytes codec ``splitzip`` (entry point
group ``zarr.codecs``; ``numcodecs.splitzip``, the name older arrays carry,
reads too), a subclass of Zarr's public ``zarr.abc.codec.ArrayBytesCodec``::

    from splitzip_kv.numcodecs_codec import SplitzipZarrCodec
    zarr.create_array(store, shape=..., chunks=..., dtype="float16",
                      serializer=SplitzipZarrCodec(mode="capacity"), compressors=None)

``mode``: ``"fast"`` (default, 4-bit exponent codes) or ``"capacity"``
(per-block Huffman exponents, FORMAT.md 4.6: smaller, slower; fp8_e4m3's
whole byte, 4.6.7). ``codebook``: a calibrated table for the fast mode
(``splitzip_kv.calibrate``), given as a ``Codebook``, a ``.szcb`` path or
``{"dtype": "bf16", "entries": [...]}``; the config (and so the Zarr
metadata) always carries the last form, so the array needs no side file.
``tables``: the path of a capacity table set file (``.szct``, from
``splitzip calibrate --mode capacity`` or ``TableSet.save``) for
``mode="capacity"``: chunks are coded with it (frames name the set instead
of carrying tables) and decoded with it. The config keeps the path, so
reading the array needs that file at that path (a missing or other set is
an error naming the set's id, never wrong data).

Data types: with ``zarr>=3.1`` and ``ml_dtypes``, importing this module
registers ``bfloat16``, ``float8_e4m3fn`` and ``float8_e5m2`` as Zarr 3 data
types (also by the ``zarr.data_type`` entry point), so ``dtype=ml_dtypes.bfloat16``
arrays work directly. Zarr itself (through 3.1.6) defines none of them.
``dtype`` (config) reads raw integer chunks as that splitzip dtype (e.g.
``uint16`` storage holding bf16, as arrays written before carry) and
``view`` returns decoded values as that numpy dtype; by default the chunk's
own dtype decides. ``checksum`` (default True) stores the block checksum;
``threads`` (default 1, Zarr parallelises over chunks) and ``chunk_log2``
pass through.
"""

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray

from . import _api, _dtypes

_MODES = ("fast", "capacity")


class SplitzipCodec(Codec):
    """Lossless SplitZip coding of float chunks (one splitzip frame per chunk)."""

    codec_id = "splitzip"

    def __init__(self, dtype=None, checksum=True, chunk_log2=10, threads=1, view=None, mode="fast",
                 codebook=None, tables=None):
        if mode not in _MODES:
            raise ValueError(f"splitzip codec: mode must be 'fast' or 'capacity', not {mode!r}")
        self.mode = mode
        # codebook: the calibrated table of the fast mode, kept in the config
        # as JSON ({"dtype": "bf16", "entries": [...]}) so Zarr metadata
        # carries it; a Codebook or a .szcb file path is accepted too.
        self._codebook = _codebook_of(codebook)
        self.codebook = None if self._codebook is None else \
            {"dtype": self._codebook.dtype, "entries": list(self._codebook.entries)}
        if self._codebook is not None and mode != "fast":
            raise ValueError("splitzip codec: a codebook is for mode='fast' (the capacity mode builds its own tables)")
        # tables: a set file's path, kept as such in the config.
        if tables is not None and not (isinstance(tables, str) or hasattr(tables, "__fspath__")):
            raise TypeError(f"splitzip codec: tables must be a .szct file path, not {type(tables).__name__}")
        if tables is not None and mode != "capacity":
            raise ValueError("splitzip codec: a table set is for mode='capacity'")
        self.tables = None if tables is None else str(tables.__fspath__() if hasattr(tables, "__fspath__") else tables)
        self._tables = None
        if self.tables is not None:
            from ._core import TableSet
            self._tables = TableSet.load(self.tables)
        self.dtype = None if dtype is None else _dtypes.normalize(dtype)
        # view: numpy dtype name the decoded values are returned as (same
        # width), e.g. "uint16" for bf16 kept in uint16 storage (Zarr 3 has
        # no bfloat16 data type).
        self.view = None if view is None else np.dtype(view).str
        self.checksum = bool(checksum)
        self.chunk_log2 = int(chunk_log2)
        self.threads = int(threads)

    def encode(self, buf):
        arr = np.asarray(buf) if not isinstance(buf, np.ndarray) else buf
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        if self.dtype is not None and _dtypes.from_numpy(arr.dtype) is None:
            arr = arr.reshape(-1).view(np.uint8)  # raw storage read as self.dtype
        kw = {} if self._codebook is None else {"codebook": self._codebook}
        if self._tables is not None:
            kw["tables"] = self._tables
        return _api.compress(arr, checksum=self.checksum, chunk_log2=self.chunk_log2,
                             threads=self.threads, dtype=self.dtype, mode=self.mode, **kw)

    def decode(self, buf, out=None):
        frame = ensure_contiguous_ndarray(buf).reshape(-1).view(np.uint8)
        dec = _api.decompress(frame, threads=self.threads, tables=self._tables)
        if self.view is not None:
            dec = dec.view(np.dtype(self.view))
        if out is not None:
            return _copy_into(dec, out)
        return dec

    def __repr__(self):
        return (f"SplitzipCodec(dtype={self.dtype!r}, checksum={self.checksum}, "
                f"chunk_log2={self.chunk_log2}, threads={self.threads}, view={self.view!r}, mode={self.mode!r}, "
                f"codebook={self.codebook!r}, tables={self.tables!r})")


def _codebook_of(cb):
    """A Codebook from None, a Codebook, its JSON config form or a .szcb path."""
    if cb is None:
        return None
    from ._core import Codebook
    if isinstance(cb, Codebook):
        return cb
    if isinstance(cb, dict):
        if set(cb) != {"dtype", "entries"}:
            raise ValueError(f"splitzip codec: codebook config needs 'dtype' and 'entries', got {sorted(cb)}")
        return Codebook(cb["dtype"], [int(e) for e in cb["entries"]])
    if isinstance(cb, (str, bytes)) or hasattr(cb, "__fspath__"):
        return Codebook.load(cb)
    raise TypeError(f"splitzip codec: codebook must be a Codebook, a dict or a .szcb path, not {type(cb).__name__}")


def _copy_into(dec, out):
    """Copies the decoded bytes into out (any buffer of the same byte size)."""
    dst = np.frombuffer(memoryview(out).cast("B"), dtype=np.uint8) if not isinstance(out, np.ndarray) \
        else out.reshape(-1).view(np.uint8)
    src = dec.reshape(-1).view(np.uint8)
    if src.size != dst.size:
        raise ValueError(f"out has {dst.size} bytes, the frame decodes to {src.size}")
    dst[...] = src
    return out


try:  # Zarr 3 array-to-bytes codec, when zarr >= 3.1.3 is installed
    from dataclasses import dataclass

    from zarr.abc.codec import ArrayBytesCodec

    _CONFIG_KEYS = ("dtype", "checksum", "chunk_log2", "threads", "view", "mode", "codebook", "tables")

    @dataclass(frozen=True, init=False)
    class SplitzipZarrCodec(ArrayBytesCodec):
        """Zarr 3 array-to-bytes codec ``splitzip`` (one splitzip frame per chunk)."""

        is_fixed_size = False
        codec_config: dict

        def __init__(self, **codec_config):
            codec_config.pop("id", None)  # numcodecs-style configs carry it
            unknown = set(codec_config) - set(_CONFIG_KEYS)
            if unknown:
                raise TypeError(f"SplitzipZarrCodec: unknown config {sorted(unknown)}")
            codec = SplitzipCodec(**codec_config)  # validates
            if codec.codebook is not None:  # embedded in the array metadata, not a path
                codec_config["codebook"] = codec.codebook
            if codec.tables is not None:  # a path (str) in the metadata
                codec_config["tables"] = codec.tables
            object.__setattr__(self, "codec_config", dict(codec_config))
            object.__setattr__(self, "_codec", codec)

        @classmethod
        def from_dict(cls, data):
            name = data.get("name")
            if name not in ("splitzip", "numcodecs.splitzip"):
                raise ValueError(f"not a splitzip codec: {name!r}")
            return cls(**dict(data.get("configuration") or {}))

        def to_dict(self):
            return {"name": "splitzip", "configuration": dict(self.codec_config)}

        def compute_encoded_size(self, input_byte_length, chunk_spec):
            raise NotImplementedError  # variable size

        def _decode_sync(self, chunk_bytes, chunk_spec):
            out = self._codec.decode(chunk_bytes.as_numpy_array())
            want = chunk_spec.dtype.to_native_dtype()
            if out.dtype != want:
                out = out.view(want)
            return chunk_spec.prototype.nd_buffer.from_ndarray_like(out.reshape(chunk_spec.shape))

        def _encode_sync(self, chunk_array, chunk_spec):
            frame = self._codec.encode(chunk_array.as_numpy_array())
            return chunk_spec.prototype.buffer.from_bytes(frame)

        async def _decode_single(self, chunk_bytes, chunk_spec):
            return self._decode_sync(chunk_bytes, chunk_spec)

        async def _encode_single(self, chunk_array, chunk_spec):
            return self._encode_sync(chunk_array, chunk_spec)

        def __repr__(self):
            return f"SplitzipZarrCodec({self.codec_config!r})"

except ImportError:  # pragma: no cover - zarr absent or older
    SplitzipZarrCodec = None  # type: ignore[misc,assignment]


try:  # ml_dtypes' bf16 and fp8 as Zarr 3 data types (zarr >= 3.1: public zarr.dtype)
    from dataclasses import dataclass as _dataclass

    import ml_dtypes
    from zarr.dtype import Float16 as _Float16
    from zarr.dtype import data_type_registry as _registry

    def _ml_dtype(name, np_type, doc):
        native = np.dtype(np_type)

        # Float16's JSON scalars, fill values and checks, on another numpy dtype.
        @_dataclass(frozen=True, kw_only=True)
        class _T(_Float16):
            dtype_cls = type(native)
            _zarr_v3_name = name

            @classmethod
            def _check_native_dtype(cls, dtype):
                return dtype == native

            def to_native_dtype(self):
                return native

        _T.__name__ = _T.__qualname__ = "".join(w.capitalize() for w in name.split("_"))
        _T.__doc__ = doc
        return _T

    BFloat16 = _ml_dtype("bfloat16", ml_dtypes.bfloat16, "Zarr 3 data type bfloat16 (ml_dtypes.bfloat16).")
    Float8E4M3FN = _ml_dtype("float8_e4m3fn", ml_dtypes.float8_e4m3fn,
                             "Zarr 3 data type float8_e4m3fn (ml_dtypes; vLLM's and SGLang's fp8 KV).")
    Float8E5M2 = _ml_dtype("float8_e5m2", ml_dtypes.float8_e5m2, "Zarr 3 data type float8_e5m2 (ml_dtypes).")
    for _cls in (BFloat16, Float8E4M3FN, Float8E5M2):
        if _cls._zarr_v3_name not in _registry.contents:  # never replace one Zarr itself defines
            _registry.register(_cls._zarr_v3_name, _cls)

except ImportError:  # pragma: no cover - zarr < 3.1 or ml_dtypes absent
    BFloat16 = Float8E4M3FN = Float8E5M2 = None  # type: ignore[misc,assignment]
