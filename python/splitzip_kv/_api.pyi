# SPDX-License-Identifier: Apache-2.0
# Type stub of splitzip_kv._api (the public functions). Sources and
# destinations are numpy arrays, torch tensors, buffer-protocol objects or
# DLPack producers, hence `Any` for those; return types are exact.
from typing import Any, Dict, Iterable, Iterator, List, Literal, NamedTuple, Optional, Sequence, Union, overload

from ._core import Codebook, TableSet

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
    mode: Optional[Literal["fast", "capacity"]] = ...,
    name: Optional[str] = ...,
    tables: Optional[TableSet] = ...,
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
    mode: Optional[Literal["fast", "capacity"]] = ...,
    tables: Optional[TableSet] = ...,
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
    mode: Optional[Literal["fast", "capacity"]] = ...,
    tables: Union[None, TableSet, Sequence[Optional[TableSet]]] = ...,  # one set, or one per page
) -> List[bytes]: ...
def decompress_batch(
    frames: Iterable[Any],
    outs: Optional[Any] = ...,  # one buffer per frame, or one array whose rows take the frames
    *,
    backend: Optional[str] = ...,
    threads: int = ...,
    verify_checksum: bool = ...,
    max_output_bytes: int = ...,
    tables: Union[TableSet, Sequence[TableSet], None] = ...,
) -> Any: ...
def decompress(
    buf: Any,
    out: Any = ...,
    *,
    backend: Optional[str] = ...,
    threads: int = ...,
    verify_checksum: bool = ...,
    max_output_bytes: int = ...,
    tables: Union[TableSet, Sequence[TableSet], None] = ...,
) -> Any: ...
def decompress_into(
    buf: Any,
    out: Any,
    *,
    backend: Optional[str] = ...,
    threads: int = ...,
    verify_checksum: bool = ...,
    max_output_bytes: int = ...,
    tables: Union[TableSet, Sequence[TableSet], None] = ...,
) -> Result: ...
def frame_info(buf: Any, offset: int = ...) -> Dict[str, Any]: ...
def tensor_desc(buf: Any, offset: int = ...) -> Optional[Dict[str, Any]]: ...
def iter_frames(buf: Any) -> Iterator[Dict[str, Any]]: ...
def frames(buf: Any) -> List[Dict[str, Any]]: ...
@overload
def calibrate(
    arrays: Union[Any, Iterable[Any]],
    *,
    dtype: Optional[_Dtype] = ...,
    mode: Literal["fast"] = ...,
    table_count: None = ...,
) -> Codebook: ...
@overload
def calibrate(
    arrays: Union[Any, Iterable[Any]],
    *,
    dtype: Optional[_Dtype] = ...,
    mode: Literal["capacity"],
    table_count: Optional[int] = ...,
) -> TableSet: ...
def backends() -> Dict[str, bool]: ...
def backend_unavailable_reason(name: str) -> Optional[str]: ...
def xxh64(data: Any, seed: int = ...) -> int: ...
def xxh3_64(data: Any) -> int: ...
