# SPDX-License-Identifier: Apache-2.0
# Type stub of splitzip_kv._api (the public functions). Sources and
# destinations are numpy arrays, torch tensors, buffer-protocol objects or
# DLPack producers, hence `Any` for those; return types are exact.
from typing import Any, Dict, Iterable, Iterator, List, Literal, NamedTuple, Optional, Sequence, Union

from ._core import Codebook

class Result(NamedTuple):
    size: int
    backend: str

_Dtype = Union[str, Any]  # a splitzip dtype name, or a numpy / ml_dtypes / torch dtype

def compress_bound(dtype: _Dtype, n: int) -> int: ...
def compress(
    array: Any,
    codebook: Optional[Codebook] = ...,
    backend: Optional[str] = ...,
    checksum: bool = ...,
    chunk_log2: int = ...,
    *,
    dtype: Optional[_Dtype] = ...,
    threads: int = ...,
    mode: Literal["fast", "capacity"] = ...,
    name: Optional[str] = ...,
) -> Any: ...
def compress_into(
    array: Any,
    out: Any,
    codebook: Optional[Codebook] = ...,
    backend: Optional[str] = ...,
    checksum: bool = ...,
    chunk_log2: int = ...,
    *,
    dtype: Optional[_Dtype] = ...,
    threads: int = ...,
    mode: Literal["fast", "capacity"] = ...,
) -> Result: ...
def compress_batch(
    arrays: Iterable[Any],  # pages, or one array whose rows (axis 0) are the pages
    codebook: Optional[Codebook] = ...,
    backend: Optional[str] = ...,
    checksum: bool = ...,
    chunk_log2: int = ...,
    *,
    dtype: Optional[_Dtype] = ...,
    threads: int = ...,
    mode: Literal["fast", "capacity"] = ...,
) -> List[bytes]: ...
def decompress_batch(
    frames: Iterable[Any],
    outs: Optional[Any] = ...,  # one buffer per frame, or one array whose rows take the frames
    *,
    backend: Optional[str] = ...,
    threads: int = ...,
    verify_checksum: bool = ...,
    max_output_bytes: int = ...,
) -> Any: ...
def decompress(
    buf: Any,
    out: Any = ...,
    *,
    backend: Optional[str] = ...,
    threads: int = ...,
    verify_checksum: bool = ...,
    max_output_bytes: int = ...,
) -> Any: ...
def decompress_into(
    buf: Any,
    out: Any,
    *,
    backend: Optional[str] = ...,
    threads: int = ...,
    verify_checksum: bool = ...,
    max_output_bytes: int = ...,
) -> Result: ...
def frame_info(buf: Any, offset: int = ...) -> Dict[str, Any]: ...
def tensor_desc(buf: Any, offset: int = ...) -> Optional[Dict[str, Any]]: ...
def iter_frames(buf: Any) -> Iterator[Dict[str, Any]]: ...
def frames(buf: Any) -> List[Dict[str, Any]]: ...
def calibrate(arrays: Union[Any, Iterable[Any]], *, dtype: Optional[_Dtype] = ...) -> Codebook: ...
def backends() -> Dict[str, bool]: ...
def backend_unavailable_reason(name: str) -> Optional[str]: ...
def xxh64(data: Any, seed: int = ...) -> int: ...
def xxh3_64(data: Any) -> int: ...
