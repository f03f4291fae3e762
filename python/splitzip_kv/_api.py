# SPDX-License-Identifier: Apache-2.0
"""The public functions. Argument handling lives here; the codec is in _core.

Sources are numpy arrays, torch tensors, any buffer-protocol object or any
DLPack producer. Nothing is copied except a non-contiguous numpy array or
torch tensor given as a source, which is made contiguous once (on its own
device). Destinations (``out=``) are never copied: they must be C-contiguous
and writable.
"""

import sys
from collections import namedtuple

import numpy as np

from . import _core, _dtypes
from ._errors import error, invalid

_DL_CPU = 1
_DL_CUDA = 2
_DL_HOST_READABLE = (1, 3, 13)  # kDLCPU, kDLCUDAHost, kDLCUDAManaged

#: What compress_into / decompress_into report: bytes written and the backend
#: that ran ("reference", "cpu", "cuda", "kokkos").
Result = namedtuple("Result", ["size", "backend"])


def _torch():
    return sys.modules.get("torch")


def _is_tensor(obj):
    torch = _torch()
    return torch is not None and isinstance(obj, torch.Tensor)


def _device_type(obj):
    if isinstance(obj, (bytes, bytearray, memoryview, np.ndarray)):
        return _DL_CPU
    if _is_tensor(obj):
        return _DL_CUDA if obj.device.type == "cuda" else _DL_CPU
    get = getattr(obj, "__dlpack_device__", None)
    if get is None:
        return _DL_CPU
    device = int(get()[0])
    # Pinned (CUDAHost) and managed memory are readable from the host.
    return _DL_CPU if device in _DL_HOST_READABLE else device


def _require_cuda(what):
    if not _core.backend_available("cuda"):
        raise error("BACKEND_UNAVAILABLE",
                    f"{what} is in CUDA memory but this splitzip build has no usable CUDA "
                    "backend (rebuild with SPLITZIP_CUDA=ON on a machine with a GPU, "
                    "or copy it to the host)")


def _sync(tensor):
    # The library runs outside torch's stream model: finish pending work on
    # the tensor's current stream before it reads or writes the memory.
    if tensor.device.type == "cuda":
        _torch().cuda.current_stream(tensor.device).synchronize()


def _want(dtype):
    return None if dtype is None else _dtypes.normalize(dtype)


def _check_match(natural, want, what):
    if natural is not None and want is not None and natural != want:
        raise invalid(f"{what} holds {natural} values but dtype={want!r} was given")


def _foreign(np_dtype):
    # Types registered by ml_dtypes (bfloat16, float8_*) have user-defined
    # type numbers and cross neither the buffer protocol nor numpy's DLPack.
    return np_dtype.num >= 256


def _source(obj, want, what="array"):
    """(object for _core, dtype name or None, DLPack device type)."""
    if isinstance(obj, np.ndarray):
        natural = _dtypes.from_numpy(obj.dtype)
        _check_match(natural, want, what)
        if natural is None and _foreign(obj.dtype):
            raise invalid(f"{what} has numpy dtype {obj.dtype}, which is not a splitzip dtype "
                          f"(expected one of {', '.join(_dtypes.DTYPES)})")
        arr = obj if obj.flags.c_contiguous else np.ascontiguousarray(obj)
        if _foreign(arr.dtype):
            # Their bytes cross, with the dtype passed by name.
            arr = arr.reshape(-1).view(np.uint8)
        return arr, want or natural, _DL_CPU
    if _is_tensor(obj):
        torch = _torch()
        natural = _dtypes.from_torch(obj.dtype)
        _check_match(natural, want, what)
        t = obj.detach()
        if not t.is_contiguous():
            t = t.contiguous()
        if natural in ("fp8_e5m2", "fp8_e4m3"):
            # DLPack export of float8 is recent in torch; the bytes are the same.
            t = t.reshape(-1).view(torch.uint8)
        device = _DL_CUDA if t.device.type == "cuda" else _DL_CPU
        if device == _DL_CUDA:
            _require_cuda(what)
            _sync(t)
        return t, want or natural, device
    return obj, want, _device_type(obj)


def _check_target(natural, dtype, expect):
    if natural is None or expect is None:
        return
    if expect == "mixed":
        raise invalid("frames of different dtypes decode only into a raw uint8 buffer, "
                      f"out= has dtype {dtype}")
    if natural != expect:
        raise invalid(f"out= has dtype {dtype} but the frame holds {expect}")


def _target(out, expect):
    """Validates a caller's destination and returns the object for _core."""
    if isinstance(out, np.ndarray):
        if not out.flags.c_contiguous:
            raise invalid("out= must be C-contiguous (it is written in place, never copied)")
        if not out.flags.writeable:
            raise invalid("out= is read-only")
        natural = _dtypes.from_numpy(out.dtype)
        _check_target(natural, out.dtype, expect)
        if _foreign(out.dtype):
            if natural is None:
                raise invalid(f"out= has numpy dtype {out.dtype}, which is not a splitzip dtype")
            return out.reshape(-1).view(np.uint8)
        return out
    if _is_tensor(out):
        torch = _torch()
        if not out.is_contiguous():
            raise invalid("out= must be contiguous (it is written in place, never copied)")
        natural = _dtypes.from_torch(out.dtype)
        _check_target(natural, out.dtype, expect)
        t = out.detach()
        if natural in ("fp8_e5m2", "fp8_e4m3"):
            t = t.reshape(-1).view(torch.uint8)
        if t.device.type == "cuda":
            _require_cuda("out=")
            _sync(t)
        return t
    return out


_ORIGIN_NUMPY = 1
_ORIGIN_TORCH = 2


def _check_int(name, value, lo, hi):
    """An integer argument within [lo, hi], else SplitzipError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise invalid(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if value < lo or value > hi:
        raise invalid(f"{name}={value} is out of range ({lo}..{hi})")
    return value


def _check_common(chunk_log2=None, threads=0, max_output_bytes=None):
    if chunk_log2 is not None:
        # Out-of-range values reach the library, which names them (BAD_CHUNK_SIZE).
        _check_int("chunk_log2", chunk_log2, 0, 2**32 - 1)
    _check_int("threads", threads, 0, 2**31 - 1)
    if max_output_bytes is not None:
        _check_int("max_output_bytes", max_output_bytes, 0, 2**64 - 1)


def _tensor_spec(array, name, name_hint=None):
    """(shape, origin, name) to record in the frame (FORMAT.md 4.8), or None."""
    if name is None:
        return None
    if isinstance(array, np.ndarray):
        origin, shape, itemsize = _ORIGIN_NUMPY, array.shape, array.dtype.itemsize
    elif _is_tensor(array):
        origin, shape, itemsize = _ORIGIN_TORCH, tuple(array.shape), array.element_size()
    else:
        return None
    if itemsize != _core.dtype_bytes(name) or len(shape) > 8:
        return None  # raw bytes of another width, or a rank the format cannot record
    if len(shape) == 1 and origin == _ORIGIN_NUMPY and name_hint is None:
        return None  # a flat numpy array is what a frame without a descriptor decodes to
    return (tuple(int(d) for d in shape), origin, name_hint)


def _check_codebook(codebook):
    if codebook is not None and not isinstance(codebook, _core.Codebook):
        raise TypeError(f"codebook must be a splitzip_kv.Codebook or None, got {type(codebook).__name__}")


def _check_tables(tables):
    """The one TableSet a compress call codes with, or None."""
    if tables is not None and not isinstance(tables, _core.TableSet):
        raise TypeError(f"tables must be a splitzip_kv.TableSet or None, got {type(tables).__name__} "
                        "(TableSet.load(path) reads a set file)")
    return tables


def _decode_tables(tables):
    """tables= of the decode calls: None, a TableSet or a sequence of them."""
    if tables is None or isinstance(tables, _core.TableSet):
        return tables
    if isinstance(tables, (str, bytes, bytearray)) or not hasattr(tables, "__iter__"):
        raise TypeError("tables must be a splitzip_kv.TableSet, a sequence of them, or None, "
                        f"got {type(tables).__name__} (TableSet.load(path) reads a set file)")
    sets = list(tables)
    for t in sets:
        if not isinstance(t, _core.TableSet):
            raise TypeError(f"tables must hold splitzip_kv.TableSet objects, got {type(t).__name__}")
    return sets


def compress_bound(dtype, n):
    """Largest frame that n values of dtype can produce (FORMAT.md section 5)."""
    n = _check_int("n", n, 0, 2**64 - 1)
    return _core.compress_bound(_dtypes.normalize(dtype), n)


_MODES = {"fast": 0, "capacity": 1}


def _mode(mode, tables=None):
    """Header byte 49 for mode="fast" | "capacity" (FORMAT.md 4.6); None:
    capacity with a table set, else fast."""
    if mode is None:
        mode = "fast" if tables is None else "capacity"
    if not isinstance(mode, str) or mode not in _MODES:
        raise invalid(f"mode must be 'fast' or 'capacity', got {mode!r}")
    if tables is not None and mode != "capacity":
        raise invalid("a table set codes the capacity mode: pass mode='capacity' (or leave mode unset)")
    return _MODES[mode]


def compress(array, codebook=None, backend=None, checksum=True, chunk_log2=10, *, dtype=None,
             threads=0, mode=None, name=None, tables=None):
    """Compresses array into one frame.

    Returns ``bytes`` for host data. A CUDA torch tensor gives a uint8 tensor
    on the same device (needs the CUDA backend). ``dtype`` is needed only
    when the array holds raw integers (bytes, uint16 views, ...).
    ``codebook=None`` means the buffer's own top-16 exponents.
    ``mode="capacity"``: per-block Huffman-coded exponents (smaller frames,
    slower; the codebook is not used). The mode is recorded in the frame:
    decompress needs no flag. ``mode=None`` (default): fast, or capacity
    when ``tables`` is given.
    ``tables``: a TableSet from ``calibrate(..., mode="capacity")`` or
    ``TableSet.load``: the frame names the set instead of carrying tables
    (faster and smaller on pages); decompress then needs ``tables=`` too.
    ``checksum=False`` opts out of the block checksum (on by default).
    A numpy array or torch tensor records its shape, dtype and kind (and
    ``name`` when given) in the frame (FORMAT.md 4.8), so decompress()
    gives back the same shape, dtype and kind; a flat numpy array needs no
    record (a frame without one decodes flat). The record adds
    ``tensor_desc_size`` bytes to the frame, beyond compress_bound().
    """
    _check_codebook(codebook)
    _check_tables(tables)
    _check_common(chunk_log2, threads)
    m = _mode(mode, tables)
    src, dname, device = _source(array, _want(dtype))
    spec = _tensor_spec(array, dname, name)
    if device == _DL_CPU:
        data, _ = _core.compress(src, dname, codebook, chunk_log2, checksum, backend, threads, m, spec, tables)
        return data
    name = dname
    if device != _DL_CUDA:
        raise error("UNSUPPORTED_MEMORY", "splitzip reads host and CUDA memory only")
    _require_cuda("array")
    if not _is_tensor(src):
        raise invalid("a CUDA array other than a torch tensor needs compress_into(array, out) "
                      "with a device buffer of compress_bound() bytes")
    if name is None:
        raise invalid(f"array holds {src.dtype} values; pass dtype=")
    torch = _torch()
    n = src.numel() * src.element_size() // _core.dtype_bytes(name)
    out = torch.empty(compress_bound(name, n), dtype=torch.uint8, device=src.device)
    # The descriptor is written on the host only: device frames carry none.
    size, _ = _core.compress_into(src, out, name, codebook, chunk_log2, checksum, backend, threads, m, tables)
    return out[:size]


def compress_into(array, out, codebook=None, backend=None, checksum=True, chunk_log2=10, *,
                  dtype=None, threads=0, mode=None, tables=None):
    """Compresses array into the caller's buffer ``out`` (zero copy).

    ``out`` needs at least ``compress_bound(dtype, n)`` bytes to be safe
    from DST_TOO_SMALL. Returns ``Result(size, backend)``. ``mode`` and
    ``tables`` as in compress(). The frame carries no tensor descriptor (use compress() for
    shape round trips).
    """
    _check_codebook(codebook)
    _check_tables(tables)
    _check_common(chunk_log2, threads)
    m = _mode(mode, tables)
    src, name, _ = _source(array, _want(dtype))
    dst = _target(out, None)
    size, ran = _core.compress_into(src, dst, name, codebook, chunk_log2, checksum, backend,
                                    threads, m, tables)
    return Result(size, ran)


def compress_batch(arrays, codebook=None, backend=None, checksum=True, chunk_log2=10, *,
                   dtype=None, threads=0, mode=None, tables=None):
    """Compresses each array of ``arrays`` (pages of a paged KV cache) into
    its own frame, in one call: the GIL released once, threads across the
    pages, one codebook or table set (or none) for all of them.

    ``arrays``: a sequence of pages, or one numpy array / torch tensor of
    2+ dimensions whose rows (axis 0) are the pages (a paged cache's
    blocks: the fastest form, one argument check for all pages).

    Returns a list of ``bytes``, one frame per page, each byte-identical to
    ``compress(page, ...)``: a numpy array or torch tensor records its shape
    and dtype (a flat numpy array needs no record), so decompress_batch()
    and decompress() give each page back as it was. Pages stay
    independently decodable. ``mode`` and ``tables`` as in compress()
    (with a set, decompress_batch needs ``tables=`` too); ``tables`` may
    also be a list with a TableSet (or None: per-block tables) per page,
    e.g. the pages of every layer of a block, each with its layer's set.
    All pages hold one dtype and live in host memory. An error in any page
    raises SplitzipError naming the first failing page.
    """
    _check_codebook(codebook)
    page_tables = None
    if tables is not None and not isinstance(tables, _core.TableSet):
        if isinstance(tables, (str, bytes, bytearray)) or not hasattr(tables, "__len__"):
            _check_tables(tables)  # raises: neither a TableSet nor a list of them
        page_tables = tables if isinstance(tables, (list, tuple)) else list(tables)
        for t in page_tables:
            if t is not None:
                _check_tables(t)
        tables = None
    _check_common(chunk_log2, threads)
    m = _mode(mode, tables if page_tables is None else
              next((t for t in page_tables if t is not None), None))
    want = _want(dtype)
    if (isinstance(arrays, np.ndarray) or _is_tensor(arrays)) and arrays.ndim >= 2:
        if len(arrays) == 0:
            return []
        src, name, device = _source(arrays, want, "pages")
        if device != _DL_CPU:
            raise error("UNSUPPORTED_MEMORY", "compress_batch reads pages in host memory only")
        if src.ndim < 2:  # a byte view of a foreign dtype: rows again
            src = src.reshape(len(arrays), -1)
        return _core.compress_batch(src, name, codebook, chunk_log2, checksum, backend, threads, m,
                                    _tensor_spec(arrays[0], name, None), True, tables, page_tables)
    prepared, names, specs = [], set(), []
    for a in arrays:
        src, name, device = _source(a, want, "page")
        if device != _DL_CPU:
            raise error("UNSUPPORTED_MEMORY", "compress_batch reads pages in host memory only")
        prepared.append(src)
        if name is not None:
            names.add(name)
        specs.append(_tensor_spec(a, name, None))
    if len(names) > 1:
        raise invalid(f"pages hold different dtypes: {sorted(names)}")
    return _core.compress_batch(prepared, names.pop() if names else None, codebook, chunk_log2,
                                checksum, backend, threads, m,
                                specs if any(s is not None for s in specs) else None, False, tables,
                                page_tables)


def _new_output(name, n, shape, origin):
    """The array decompress() returns for a frame: numpy of the recorded
    shape, or a torch tensor where a torch tensor was compressed."""
    if shape is not None and origin == _ORIGIN_TORCH:
        torch = _torch()
        if torch is None:
            try:
                import torch  # noqa: F811 (a torch tensor went in: give one back)
            except ImportError:
                torch = None
        if torch is not None:
            return torch.empty(n, dtype=_dtypes.torch_dtype(name)).reshape(shape)
    return np.empty(shape if shape is not None else (n,), dtype=_dtypes.numpy_dtype(name))


def decompress_batch(frames, outs=None, *, backend=None, threads=0, verify_checksum=True,
                     max_output_bytes=0, tables=None):
    """Decodes a list of frames (one frame each, e.g. from compress_batch) in
    one call: the GIL released once, threads across the frames.

    Without ``outs`` returns one new array per frame, as decompress() would:
    of the frame's dtype and recorded shape (flat without a record), a torch
    tensor where a torch tensor was compressed. With ``outs`` (one writable
    host buffer per frame, or one array of 2+ dimensions whose rows take
    the frames) decodes into them in place and returns ``outs``.
    ``max_output_bytes`` bounds each frame. ``tables``: the TableSet (or a
    sequence of them) frames may name; a frame naming another raises
    MISSING_TABLES with the set's id. An error in any frame raises
    SplitzipError naming the first failing frame (the other outputs may
    have been written).
    """
    _check_common(None, threads, max_output_bytes)
    tables = _decode_tables(tables)
    srcs = frames if isinstance(frames, list) else list(frames)
    if not all(type(f) is bytes for f in srcs):  # bytes go to _core as they are
        srcs = []
        for f in frames:
            src, device = _frame_source(f)
            if device != _DL_CPU:
                raise error("UNSUPPORTED_MEMORY", "decompress_batch reads frames in host memory only")
            srcs.append(src)
    if (isinstance(outs, np.ndarray) or _is_tensor(outs)) and outs.ndim >= 2:
        if _is_tensor(outs) and outs.device.type != "cpu":
            raise error("UNSUPPORTED_MEMORY", "decompress_batch writes host memory only")
        kinds = _core.batch_dtypes(srcs)
        if len(kinds) > 1:
            raise invalid(f"frames hold different dtypes: {kinds}")
        dst = _target(outs, kinds[0] if kinds else None)
        if dst.ndim < 2:  # a byte view of a foreign dtype: rows again
            dst = dst.reshape(len(outs), -1)
        _core.decompress_batch(srcs, dst, backend, threads, int(max_output_bytes), verify_checksum, True, tables)
        return outs
    if outs is None:
        results = [_new_output(*o) for o in _core.batch_outputs(srcs)]
        dsts = [_target(r, None) for r in results]
    else:
        results = outs if isinstance(outs, list) else list(outs)
        if len(results) != len(srcs):
            raise invalid(f"{len(srcs)} frames but {len(results)} outputs")
        dsts = [_target(out, o[0]) for out, o in zip(results, _core.batch_outputs(srcs))]
    _core.decompress_batch(srcs, dsts, backend, threads, int(max_output_bytes), verify_checksum, False, tables)
    return results


def _frame_source(buf):
    """(object for _core, device type) for a buffer holding frames."""
    if isinstance(buf, np.ndarray):
        arr = buf if buf.flags.c_contiguous else np.ascontiguousarray(buf)
        if arr.dtype != np.uint8:
            arr = arr.reshape(-1).view(np.uint8)
        return arr, _DL_CPU
    if _is_tensor(buf):
        torch = _torch()
        t = buf.detach()
        if not t.is_contiguous():
            t = t.contiguous()
        if t.dtype != torch.uint8:
            t = t.reshape(-1).view(torch.uint8)
        if t.device.type == "cuda":
            _require_cuda("frame")
            _sync(t)
            return t, _DL_CUDA
        return t, _DL_CPU
    return buf, _device_type(buf)


def _scan(src, device):
    """Header of every frame in src (a stream of back-to-back frames)."""
    if device == _DL_CPU:
        return list(_core.FrameIter(src))
    if device != _DL_CUDA:
        raise error("UNSUPPORTED_MEMORY", "splitzip reads host and CUDA memory only")
    _require_cuda("frame")
    if not _is_tensor(src):
        raise invalid("frames in CUDA memory are read from torch tensors only")
    # The library's FrameIterator reads host memory only: for a stream on
    # the device, only each frame's 64 header bytes come to the host (to
    # size the output), and header_info() checks them (rules 1-11).
    flat = src.reshape(-1)
    total = flat.numel()
    infos, off = [], 0
    while off < total:
        header = bytes(flat[off:off + _core.HEADER_SIZE].cpu().numpy())
        info = _core.header_info(header, total - off, off)
        infos.append(info)
        off += info["frame_size"]
    return infos


def _summary(src, device):
    """(frames, "none" / the one dtype / "mixed", decoded bytes, elements,
    whether the first frame records a tensor) of the stream in src."""
    if device == _DL_CPU:
        return _core.scan_frames(src)  # no dict per frame: they cost more than a page's decode
    infos = _scan(src, device)
    kinds = {info["dtype"] for info in infos}
    # A stream of no frames (0 bytes) is valid and decodes to 0 bytes.
    expect = "none" if not kinds else kinds.pop() if len(kinds) == 1 else "mixed"
    return (len(infos), expect, sum(info["decoded_size"] for info in infos),
            sum(info["n_elems"] for info in infos), bool(infos and infos[0].get("tensor")))


def _shape_of(src, device, summary):
    """The recorded tensor descriptor of the stream (first frame), if it
    describes exactly the decoded values."""
    count, expect, _, total, first_tensor = summary
    if device != _DL_CPU or not count or not first_tensor or expect in ("none", "mixed"):
        return None
    desc = _core.tensor_desc(src, 0)
    if desc is None or desc["total_elems"] != total or desc["dtype"] != expect:
        return None
    return desc


def _check_out_shape(out, desc):
    shape = getattr(out, "shape", None)
    if shape is None or desc is None:
        return
    natural = _dtypes.from_numpy(out.dtype) if isinstance(out, np.ndarray) else (
        _dtypes.from_torch(out.dtype) if _is_tensor(out) else None)
    if natural is None:
        return  # raw bytes: only the size matters
    if tuple(shape) != tuple(desc["shape"]):
        raise invalid(f"out= has shape {tuple(shape)} but the frame records shape {tuple(desc['shape'])}")


def _decode(buf, out, backend, threads, max_output_bytes, verify_checksum, tables=None):
    _check_common(None, threads, max_output_bytes)
    tables = _decode_tables(tables)
    src, device = _frame_source(buf)
    summary = _summary(src, device)
    count, expect, total = summary[:3]
    if max_output_bytes and total > max_output_bytes:
        raise error("LIMIT_EXCEEDED",
                    f"frames decode to {total} bytes, over max_output_bytes={max_output_bytes}")
    if out is None and expect == "none":
        result = np.empty(0, dtype=np.uint8)
        if device == _DL_CUDA:
            result = _torch().empty(0, dtype=_torch().uint8, device=src.device)
    elif out is None:
        if expect == "mixed":
            raise invalid("the frames hold different dtypes; decode them into "
                          "out=numpy.empty(total_decoded_bytes, numpy.uint8) or one at a time "
                          "(splitzip_kv.frames() gives each frame's offset and size)")
        n = total // _core.dtype_bytes(expect)
        desc = _shape_of(src, device, summary)
        shape = tuple(desc["shape"]) if desc is not None else (n,)
        if device == _DL_CUDA:
            result = _torch().empty(n, dtype=_dtypes.torch_dtype(expect), device=src.device)
        else:
            result = np.empty(shape, dtype=_dtypes.numpy_dtype(expect))
        if desc is not None and desc["origin"] == _ORIGIN_TORCH:
            torch = _torch()
            if torch is None:
                try:
                    import torch  # noqa: F811 (a torch tensor went in: give one back)
                except ImportError:
                    torch = None
            if torch is not None:
                # Decode into torch-owned memory, then view it with the recorded shape.
                t = torch.empty(n, dtype=_dtypes.torch_dtype(expect))
                dst = _target(t, expect)
                size, ran = _core.decompress_into(src, dst, expect, count != 1, backend,
                                                  threads, int(max_output_bytes), verify_checksum, tables)
                return Result(size, ran), t.reshape(shape)
    else:
        result = out
        _check_out_shape(out, _shape_of(src, device, summary))
    dst = _target(result, None if expect == "none" else expect)
    size, ran = _core.decompress_into(src, dst, expect, count != 1, backend, threads,
                                      int(max_output_bytes), verify_checksum, tables)
    return Result(size, ran), result


def decompress(buf, out=None, *, backend=None, threads=0, verify_checksum=True,
               max_output_bytes=0, tables=None):
    """Decodes every frame in buf (one frame or frames back to back).

    Returns a numpy array of the frames' dtype (bf16, fp8_e5m2 and fp8_e4m3
    via ml_dtypes) with the shape recorded by compress() (flat when the
    frame records none); a torch tensor when a torch tensor was compressed
    (and torch is importable); for a CUDA torch tensor, a flat torch tensor
    on that device. With ``out=`` of the frame's dtype, its shape must be
    the recorded shape.
    An empty buf is a stream of no frames: it decodes to an empty uint8
    array (or leaves ``out`` untouched).
    With ``out=`` the values are written into that buffer in place and
    ``out`` is returned; it must hold the frame's dtype (or raw integers of
    the same width, or uint8 bytes) and have room for the decoded bytes.
    ``tables``: the TableSet (or a sequence of them) that frames coded with
    a set name (``frame_info()["tables_id"]``); a frame naming a set not
    given raises SplitzipError MISSING_TABLES with its id, never wrong data.
    """
    _, result = _decode(buf, out, backend, threads, max_output_bytes, verify_checksum, tables)
    return result


def decompress_into(buf, out, *, backend=None, threads=0, verify_checksum=True,
                    max_output_bytes=0, tables=None):
    """Like decompress(buf, out=out) but returns Result(size, backend)."""
    result, _ = _decode(buf, out, backend, threads, max_output_bytes, verify_checksum, tables)
    return result


def frame_info(buf, offset=0):
    """Validated header fields of the frame at ``offset`` of buf, as a dict."""
    offset = _check_int("offset", offset, 0, 2**64 - 1)
    src, device = _frame_source(buf)
    if device == _DL_CPU:
        return _core.frame_info(src, offset)
    if device == _DL_CUDA and _is_tensor(src):
        _require_cuda("frame")
        flat = src.reshape(-1)
        header = bytes(flat[offset:offset + _core.HEADER_SIZE].cpu().numpy())
        return _core.header_info(header, max(flat.numel() - offset, 0), offset)
    _scan(src, device)  # raises the right error for other devices
    raise error("UNSUPPORTED_MEMORY", "unsupported frame buffer")


def tensor_desc(buf, offset=0):
    """The tensor descriptor of the frame at ``offset`` (FORMAT.md 4.8) as a
    dict (dtype, shape, total_elems, origin, name, container,
    container_header), read without decoding, or None when it has none."""
    src, device = _frame_source(buf)
    if device != _DL_CPU:
        raise error("UNSUPPORTED_MEMORY", "tensor descriptors are read from host memory")
    return _core.tensor_desc(src, _check_int("offset", offset, 0, 2**64 - 1))


def iter_frames(buf):
    """Iterates over the frames of a stream of back-to-back frames.

    Yields a frame_info() dict per frame (its ``offset`` and ``frame_size``
    locate it in buf). Each header is validated (FORMAT.md rules 1-11) when
    the walk reaches it: a bad frame raises SplitzipError there, after the
    good frames before it were yielded. An empty buf yields nothing. Host
    memory walks with the library's FrameIterator; frames in CUDA memory
    are read header by header.
    """
    src, device = _frame_source(buf)
    if device == _DL_CPU:
        return _core.FrameIter(src)
    return iter(_scan(src, device))


def frames(buf):
    """frame_info() of every frame in a stream of back-to-back frames, as a
    list ([] for an empty stream)."""
    return list(iter_frames(buf))


def calibrate(arrays, *, dtype=None, mode="fast", table_count=None):
    """Offline calibration from sample arrays (held-out KV of the model).

    ``mode="fast"`` (default): one Codebook from the pooled exponent
    histogram (FORMAT.md section 3). ``mode="capacity"``: one TableSet for
    ``compress(..., tables=)`` (FORMAT.md 4.9, 13.1); each array is taken as
    a frame's values would be (element i codes with table i mod
    ``table_count``), so pass pages or layers, not a concatenation cut at
    odd offsets. ``table_count``: a power of 2 in 1..32 (default 1: page speed;
    32 codes 0.7-2.8% smaller, docs/DESIGN.md 7a).
    ``arrays`` is an array or an iterable of arrays, all of one dtype, in
    host memory.
    """
    if mode not in ("fast", "capacity"):
        raise invalid(f"mode must be 'fast' or 'capacity', got {mode!r}")
    if table_count is not None:
        if mode != "capacity":
            raise invalid("table_count applies to mode='capacity' only")
        table_count = _check_int("table_count", table_count, 1, 32)
        if table_count & (table_count - 1):
            raise invalid(f"table_count={table_count} is not a power of 2 (1, 2, 4, 8, 16 or 32)")
    if isinstance(arrays, (np.ndarray, bytes, bytearray, memoryview)) or _is_tensor(arrays) \
            or hasattr(arrays, "__dlpack__"):
        arrays = [arrays]
    want = _want(dtype)
    prepared, names = [], set()
    for a in arrays:
        src, name, _ = _source(a, want, "calibration array")
        prepared.append(src)
        if name is not None:
            names.add(name)
    if len(names) > 1:
        raise invalid(f"calibration arrays hold different dtypes: {sorted(names)}")
    if mode == "capacity":
        return _core.calibrate_tables(prepared, names.pop() if names else None, table_count or 0)
    return _core.calibrate(prepared, names.pop() if names else None)


def backends():
    """Backends compiled into this build, in registry order: {name: available}."""
    return {name: available for name, available in _core.backends()}


def backend_unavailable_reason(name):
    """Why backend ``name`` cannot run here (e.g. "no CUDA driver ..."), or None when it can."""
    return _core.backend_unavailable_reason(name)


def xxh64(data, seed=0):
    """XXH64 of a host buffer's bytes, as format v1 uses it (header check and
    content checksum)."""
    seed = _check_int("seed", seed, 0, 2**64 - 1)
    src, _, _ = _source(data, None) if isinstance(data, np.ndarray) else (data, None, None)
    return _core.xxh64(src, seed)


def xxh3_64(data):
    """XXH3-64 (seed 0) of a host buffer's bytes, as format v2 uses it (header
    check, checksum blocks and their combination)."""
    src, _, _ = _source(data, None) if isinstance(data, np.ndarray) else (data, None, None)
    return _core.xxh3_64(src)
