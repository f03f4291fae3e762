# SPDX-License-Identifier: Apache-2.0
"""Tensor files: safetensors-like save/load of compressed files, and the
original ``.safetensors`` / ``.npy`` bytes back from a ``.sz`` stream.

The files are the CLI's (docs/CLI.md, Containers): ``save_file`` writes what
``splitzip decompress`` restores to a byte-identical ``.safetensors``, and
``load_file`` / ``restore`` read what ``splitzip compress`` writes.
"""

import json
import os
import struct
import subprocess
import tempfile

import ml_dtypes
import numpy as np

from . import _api, _cli

_NPY, _SAFETENSORS = 1, 2  # descriptor container kinds (FORMAT.md 4.8)

# safetensors dtype names <-> numpy dtypes (the ones numpy and ml_dtypes hold).
_ST_TO_NP = {
    "BF16": np.dtype(ml_dtypes.bfloat16),
    "F16": np.dtype("<f2"),
    "F32": np.dtype("<f4"),
    "F64": np.dtype("<f8"),
    "F8_E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "F8_E4M3": np.dtype(ml_dtypes.float8_e4m3fn),
    "I8": np.dtype("i1"), "U8": np.dtype("u1"),
    "I16": np.dtype("<i2"), "U16": np.dtype("<u2"),
    "I32": np.dtype("<i4"), "U32": np.dtype("<u4"),
    "I64": np.dtype("<i8"), "U64": np.dtype("<u8"),
    "BOOL": np.dtype("?"),
}
_NP_TO_ST = {v: k for k, v in _ST_TO_NP.items()}


def _read(src):
    if isinstance(src, (bytes, bytearray, memoryview)):
        return bytes(src)
    with open(src, "rb") as f:
        return f.read()


def restore(src):
    """The original file bytes (``.safetensors`` or ``.npy``) of a stream the
    CLI wrote for a container (``src``: a path or the ``.sz`` bytes), as
    ``splitzip decompress`` writes them. A stream without a container header
    gives its decoded elements."""
    data = _read(src)
    buf = np.frombuffer(data, dtype=np.uint8)
    infos = _api.frames(buf)
    parts = []
    if infos:
        desc = _api.tensor_desc(buf, 0)
        if desc is not None and desc["container"] in (_NPY, _SAFETENSORS):
            header = bytes(desc["container_header"])
            if desc["container"] == _SAFETENSORS:
                parts.append(struct.pack("<Q", len(header)))
            parts.append(header)
    for info in infos:
        off, size = info["offset"], info["frame_size"]
        parts.append(_api.decompress(buf[off:off + size]).reshape(-1).view(np.uint8).tobytes())
    return b"".join(parts)


def _parse_safetensors(raw):
    if len(raw) < 8:
        raise ValueError("not a safetensors file: shorter than 8 bytes")
    (n,) = struct.unpack_from("<Q", raw, 0)
    if 8 + n > len(raw):
        raise ValueError("not a safetensors file: its header runs past the end")
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    return header, memoryview(raw)[8 + n:]


def _to_framework(arr, framework):
    if framework in ("np", "numpy"):
        return arr
    if framework in ("pt", "torch"):
        import torch
        names = {"bfloat16": torch.bfloat16, "float8_e5m2": torch.float8_e5m2,
                 "float8_e4m3fn": torch.float8_e4m3fn}
        if arr.dtype.name in names:
            bits = np.ascontiguousarray(arr).view({1: np.uint8, 2: np.int16}[arr.dtype.itemsize])
            return torch.from_numpy(bits.copy()).view(names[arr.dtype.name])
        return torch.from_numpy(np.array(arr))
    raise ValueError(f"framework must be 'np' or 'pt', not {framework!r}")


def load_file(path, framework="np"):
    """The tensors of a compressed ``.safetensors.sz`` (``splitzip compress
    model.safetensors`` or ``save_file``) as a dict name -> array
    (``framework="np"``: numpy, bf16/fp8 as ml_dtypes; ``"pt"``: torch
    CPU tensors). A ``.npy.sz`` gives ``{"": array}``."""
    raw = restore(path)
    if raw[:6] == b"\x93NUMPY":
        import io
        arr = np.load(io.BytesIO(raw))
        if arr.dtype.kind == "V" and arr.dtype.itemsize == 2:  # how ml_dtypes saves bfloat16
            arr = arr.view(ml_dtypes.bfloat16)
        return {"": _to_framework(arr, framework)}
    header, data = _parse_safetensors(raw)
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dt = _ST_TO_NP.get(info["dtype"])
        if dt is None:
            raise ValueError(f"tensor {name!r}: dtype {info['dtype']} is not readable here")
        begin, end = info["data_offsets"]
        arr = np.frombuffer(data[begin:end], dtype=dt).reshape(info["shape"])
        out[name] = _to_framework(arr.copy(), framework)
    return out


def _as_numpy(t):
    if isinstance(t, np.ndarray):
        return t
    mod = type(t).__module__
    if mod.startswith("torch"):
        import torch
        t = t.detach().cpu().contiguous()
        for tdt, npdt in ((torch.bfloat16, ml_dtypes.bfloat16), (torch.float8_e5m2, ml_dtypes.float8_e5m2),
                          (torch.float8_e4m3fn, ml_dtypes.float8_e4m3fn)):
            if t.dtype == tdt:
                bits = t.view(torch.uint8 if t.element_size() == 1 else torch.int16).numpy()
                return bits.view(npdt)
        return t.numpy()
    return np.asarray(t)


def safetensors_bytes(tensors, metadata=None):
    """The ``.safetensors`` file bytes of a dict name -> array (numpy, torch
    or anything numpy converts), tensors in sorted-name order, 8-byte aligned."""
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name in sorted(tensors):
        arr = _as_numpy(tensors[name])
        if not arr.flags.c_contiguous:
            arr = arr.copy(order="C")
        st = _NP_TO_ST.get(arr.dtype.newbyteorder("<") if arr.dtype.byteorder == ">" else arr.dtype)
        if st is None:
            raise ValueError(f"tensor {name!r}: dtype {arr.dtype} has no safetensors name")
        blob = arr.astype(_ST_TO_NP[st], copy=False).tobytes()
        header[name] = {"dtype": st, "shape": list(arr.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    js = json.dumps(header, separators=(",", ":")).encode("utf-8")
    js += b" " * (-len(js) % 8)
    return struct.pack("<Q", len(js)) + js + b"".join(blobs)


def save_file(tensors, path, metadata=None, *, mode="fast", checksum=True):
    """Writes a dict name -> array as a compressed ``.safetensors`` stream at
    ``path`` (conventionally ``*.safetensors.sz``): each tensor in frames of
    its own dtype, the JSON header in the first frame's descriptor, exactly as
    ``splitzip compress model.safetensors`` writes it, so ``splitzip
    decompress`` restores the ``.safetensors`` file and ``load_file`` reads it.
    ``mode``: ``"fast"`` or ``"capacity"``."""
    if mode not in ("fast", "capacity"):
        raise ValueError(f"mode must be 'fast' or 'capacity', not {mode!r}")
    raw = safetensors_bytes(tensors, metadata)
    _compress_container(raw, ".safetensors", os.fspath(path), mode, checksum)


def _compress_container(raw, suffix, path, mode, checksum):
    # The CLI shipped in this wheel does the framing, so Python and the CLI
    # write the same bytes for the same file.
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in" + suffix)
        with open(src, "wb") as f:
            f.write(raw)
        cmd = [_cli.executable(), "compress", "-f", "--mode", mode,
               "--checksum" if checksum else "--no-checksum", "-o", path, src]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"splitzip compress failed ({res.returncode}): {res.stderr.strip()}")
