# SPDX-License-Identifier: Apache-2.0
"""Dtype names: splitzip's canonical ones and their numpy / ml_dtypes / torch twins."""

import sys

import ml_dtypes
import numpy as np

from ._errors import invalid

#: The dtypes the format defines, by canonical name (core/FORMAT.md section 2).
DTYPES = ("bf16", "fp16", "fp32", "fp8_e5m2", "fp8_e4m3")

_ALIASES = {
    "bf16": "bf16",
    "bfloat16": "bf16",
    "fp16": "fp16",
    "float16": "fp16",
    "half": "fp16",
    "fp32": "fp32",
    "float32": "fp32",
    "fp8_e5m2": "fp8_e5m2",
    "float8_e5m2": "fp8_e5m2",
    "fp8_e4m3": "fp8_e4m3",
    "float8_e4m3fn": "fp8_e4m3",
    "float8_e4m3": "fp8_e4m3",
}

_NUMPY = {
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "fp16": np.dtype(np.float16),
    "fp32": np.dtype(np.float32),
    "fp8_e5m2": np.dtype(ml_dtypes.float8_e5m2),
    "fp8_e4m3": np.dtype(ml_dtypes.float8_e4m3fn),
}
_FROM_NUMPY = {v: k for k, v in _NUMPY.items()}

_TORCH_NAMES = {
    "bf16": "bfloat16",
    "fp16": "float16",
    "fp32": "float32",
    "fp8_e5m2": "float8_e5m2",
    "fp8_e4m3": "float8_e4m3fn",
}


def normalize(dtype):
    """Canonical name for a name, numpy dtype (or type) or torch dtype."""
    if isinstance(dtype, str):
        key = dtype.lower()
        if key.startswith("torch."):
            key = key[len("torch."):]
        name = _ALIASES.get(key)
        if key in ("fp8", "float8"):
            raise invalid(f"dtype {dtype!r} is ambiguous: say fp8_e4m3 (float8_e4m3fn) or fp8_e5m2")
        if name is None:
            raise invalid(f"unknown dtype {dtype!r} (expected one of {', '.join(DTYPES)})")
        return name
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(dtype, torch.dtype):
        name = from_torch(dtype)
        if name is None:
            raise invalid(f"{dtype} is not a splitzip dtype (expected one of {', '.join(DTYPES)})")
        return name
    try:
        np_dtype = np.dtype(dtype)
    except TypeError:
        raise invalid(f"unknown dtype {dtype!r} (expected one of {', '.join(DTYPES)})") from None
    name = _FROM_NUMPY.get(np_dtype)
    if name is None:
        raise invalid(f"numpy dtype {np_dtype} is not a splitzip dtype "
                      f"(expected one of {', '.join(DTYPES)})")
    return name


def from_numpy(np_dtype):
    """Canonical name of a numpy dtype, or None when it is not a splitzip dtype."""
    return _FROM_NUMPY.get(np.dtype(np_dtype))


def numpy_dtype(name):
    return _NUMPY[name]


def from_torch(torch_dtype):
    """Canonical name of a torch dtype, or None."""
    short = str(torch_dtype).replace("torch.", "")
    for name, tname in _TORCH_NAMES.items():
        if short == tname:
            return name
    return None


def torch_dtype(name):
    import torch

    tname = _TORCH_NAMES[name]
    if not hasattr(torch, tname):
        raise invalid(f"this torch has no {tname} dtype")
    return getattr(torch, tname)
