# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures: the bundled real KV sample and deterministic test arrays."""

import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

# python/tests -> repository root -> data/kv/stories260k
DATA_DIR = pathlib.Path(__file__).resolve().parents[2] / "data" / "kv" / "stories260k"

DTYPES = {
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "fp16": np.dtype(np.float16),
    "fp32": np.dtype(np.float32),
    "fp8_e5m2": np.dtype(ml_dtypes.float8_e5m2),
}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def bits(a):
    """The raw bit patterns of an array, for exact comparisons (NaN-safe)."""
    a = np.ascontiguousarray(a)
    return a.reshape(-1).view(UINT[a.dtype.itemsize])


def kv_like(dtype, n, seed=0):
    """Gaussian values with a few outliers and special values, as KV caches have."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(np.float32) * 0.7
    x[rng.integers(0, n, max(1, n // 500))] *= 300.0
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-42], np.float32)
    x[: min(n, len(specials))] = specials[: min(n, len(specials))]
    return x.astype(DTYPES[dtype])


def random_bits(dtype, n, seed=1):
    """Every bit pattern equally likely: NaN payloads, denormals, the lot."""
    rng = np.random.default_rng(seed)
    size = DTYPES[dtype].itemsize
    return rng.integers(0, 1 << (8 * size), n, dtype=np.uint64).astype(UINT[size]).view(DTYPES[dtype])


def manifest():
    return json.loads((DATA_DIR / "manifest.json").read_text())


def load_layer(name):
    """A bundled KV file as an array of its dtype and shape."""
    path = DATA_DIR / name
    if not path.exists():
        pytest.fail(f"bundled data file missing: {path}")
    dtype = DTYPES["bf16"] if name.endswith(".bf16") else DTYPES["fp32"]
    return np.fromfile(path, dtype=dtype).reshape(manifest()["shape"])


@pytest.fixture(scope="session")
def real_layers():
    names = [f"layer{i:02d}_{kv}.bf16" for i in range(5) for kv in "kv"]
    return {name: load_layer(name) for name in names}
