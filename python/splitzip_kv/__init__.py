# SPDX-License-Identifier: Apache-2.0
"""splitzip_kv: lossless compression of LLM KV caches (SplitZip exponent coding).

    import numpy as np, ml_dtypes, splitzip_kv
    kv = np.random.randn(1 << 20).astype(ml_dtypes.bfloat16)
    frame = splitzip_kv.compress(kv)                  # bytes
    back = splitzip_kv.decompress(frame)              # numpy bfloat16, bit-exact
    cb = splitzip_kv.calibrate([kv])                  # offline codebook
    frame = splitzip_kv.compress(kv, codebook=cb, checksum=False)  # checksum is on by default
    ts = splitzip_kv.calibrate([kv], mode="capacity") # offline capacity table set
    frame = splitzip_kv.compress(kv, tables=ts)       # capacity mode; decompress(frame, tables=ts)

See docs/PYTHON.md in the repository for the full reference. Distribution
name: splitzip-kv (the PyPI name "splitzip" belongs to an unrelated tool).
"""

try:
    from . import _core
except ImportError:
    import importlib.util as _util
    if _util.find_spec(__name__ + "._core") is not None:
        raise  # the extension is there but cannot load (a missing library, ...): say why
    # The source tree (python/ on sys.path) has no compiled extension; say so
    # instead of Python's "partially initialized module ... circular import".
    raise ImportError(
        "splitzip_kv: the extension is not built: pip install ./python "
        "(the python/ directory of the source tree has no splitzip_kv._core)") from None
from ._api import (
    Result,
    backend_unavailable_reason,
    backends,
    calibrate,
    compress,
    compress_batch,
    compress_bound,
    compress_into,
    decompress,
    decompress_batch,
    decompress_into,
    frame_info,
    frames,
    iter_frames,
    tensor_desc,
    xxh3_64,
    xxh64,
)
from ._core import Codebook, TableSet
from ._dtypes import DTYPES
from ._errors import SplitzipError
from .files import load_file, restore, safetensors_bytes, save_file

#: Version of the splitzip library inside (one source: the CMake project version).
__version__: str = _core.version()

#: Newest frame format version this build writes and reads (3: fp8_e4m3 in the
#: capacity mode, and frames that name a table set; others are written as 2);
#: it also reads MIN_FORMAT_VERSION on.
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
    "TableSet",
    "__version__",
    "backend_unavailable_reason",
    "backends",
    "calibrate",
    "compress",
    "compress_batch",
    "compress_bound",
    "compress_into",
    "decompress",
    "decompress_batch",
    "decompress_into",
    "frame_info",
    "frames",
    "iter_frames",
    "load_file",
    "restore",
    "safetensors_bytes",
    "save_file",
    "tensor_desc",
    "xxh3_64",
    "xxh64",
]
