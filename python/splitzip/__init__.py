"""splitzip: lossless compression of LLM KV caches (SplitZip exponent coding).

    import numpy as np, ml_dtypes, splitzip
    kv = np.random.randn(1 << 20).astype(ml_dtypes.bfloat16)
    frame = splitzip.compress(kv)                  # bytes
    back = splitzip.decompress(frame)              # numpy bfloat16, bit-exact
    cb = splitzip.calibrate([kv])                  # offline codebook
    frame = splitzip.compress(kv, codebook=cb, checksum=True)

See docs/PYTHON.md in the repository for the full reference.
"""

from . import _core
from ._api import (
    Result,
    backends,
    calibrate,
    compress,
    compress_bound,
    compress_into,
    decompress,
    decompress_into,
    frame_info,
    frames,
    iter_frames,
    xxh3_64,
    xxh64,
)
from ._core import Codebook
from ._dtypes import DTYPES
from ._errors import SplitzipError

__version__ = "0.1.0"

#: Frame format version this build writes (it also reads MIN_FORMAT_VERSION on).
FORMAT_VERSION = _core.FORMAT_VERSION
MIN_FORMAT_VERSION = _core.MIN_FORMAT_VERSION
HEADER_SIZE = _core.HEADER_SIZE
DEFAULT_CHUNK_LOG2 = _core.DEFAULT_CHUNK_LOG2

__all__ = [
    "Codebook",
    "DTYPES",
    "DEFAULT_CHUNK_LOG2",
    "FORMAT_VERSION",
    "HEADER_SIZE",
    "MIN_FORMAT_VERSION",
    "Result",
    "SplitzipError",
    "backends",
    "calibrate",
    "compress",
    "compress_bound",
    "compress_into",
    "decompress",
    "decompress_into",
    "frame_info",
    "frames",
    "iter_frames",
    "xxh3_64",
    "xxh64",
]
