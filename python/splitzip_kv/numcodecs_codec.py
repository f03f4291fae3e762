# SPDX-License-Identifier: Apache-2.0
"""numcodecs and Zarr 3 codec for splitzip.

After ``pip install splitzip-kv``::

    import numcodecs
    codec = numcodecs.get_codec({"id": "splitzip"})           # numcodecs.codecs entry point
    frame = codec.encode(kv)                                    # bf16 / fp16 / fp32 / fp8
    back = codec.decode(frame)

Zarr 3 (``zarr>=3.1.3``): the array-to-bytes codec ``numcodecs.splitzip``::

    from splitzip_kv.numcodecs_codec import SplitzipZarrCodec
    zarr.create_array(store, shape=..., chunks=..., dtype="float16",
                      serializer=SplitzipZarrCodec())

``dtype`` (config) reads raw integer chunks as that splitzip dtype (e.g.
``uint16`` storage holding bf16) and ``view`` returns decoded values as that
numpy dtype (``"uint16"``); by default the chunk's own dtype decides. Zarr 3
has no bfloat16 data type: bf16 KV is a uint16 Zarr array with
``SplitzipZarrCodec(dtype="bf16", view="uint16")``.
``checksum`` (default True) stores the block checksum; ``threads`` (default
1, Zarr parallelises over chunks) and ``chunk_log2`` pass through.
"""

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray

from . import _api, _dtypes


class SplitzipCodec(Codec):
    """Lossless SplitZip coding of float chunks (one splitzip frame per chunk)."""

    codec_id = "splitzip"

    def __init__(self, dtype=None, checksum=True, chunk_log2=10, threads=1, view=None):
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
        return _api.compress(arr, checksum=self.checksum, chunk_log2=self.chunk_log2,
                             threads=self.threads, dtype=self.dtype)

    def decode(self, buf, out=None):
        frame = ensure_contiguous_ndarray(buf).reshape(-1).view(np.uint8)
        dec = _api.decompress(frame, threads=self.threads)
        if self.view is not None:
            dec = dec.view(np.dtype(self.view))
        if out is not None:
            return _copy_into(dec, out)
        return dec

    def __repr__(self):
        return (f"SplitzipCodec(dtype={self.dtype!r}, checksum={self.checksum}, "
                f"chunk_log2={self.chunk_log2}, threads={self.threads}, view={self.view!r})")


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
    from zarr.codecs.numcodecs._codecs import _NumcodecsArrayBytesCodec

    class SplitzipZarrCodec(_NumcodecsArrayBytesCodec, codec_name="splitzip"):
        """Zarr 3 codec ``numcodecs.splitzip`` wrapping SplitzipCodec."""

        def __init__(self, **codec_config):
            super().__init__(**codec_config)

except ImportError:  # pragma: no cover - zarr absent or older
    SplitzipZarrCodec = None  # type: ignore[misc,assignment]
