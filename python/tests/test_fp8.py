# SPDX-License-Identifier: Apache-2.0
"""Issue 30: fp8 accepted wherever a tensor is (numpy + ml_dtypes, torch),
shape and dtype kept, in both modes (capacity x fp8_e4m3: format v3,
FORMAT.md 4.6.7)."""
import glob
import os

import ml_dtypes
import numpy as np
import pytest

import splitzip_kv as sz

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
KV = sorted(glob.glob(os.path.join(ROOT, "data", "kv", "stories260k", "*.bf16")))

FP8 = [("fp8_e4m3", ml_dtypes.float8_e4m3fn), ("fp8_e5m2", ml_dtypes.float8_e5m2)]


def real_fp8(np_dtype, shape=(2, 8, 64, 32)):
    """Real KV cast as vLLM's --kv-cache-dtype fp8 does (scale 1.0)."""
    x = np.fromfile(KV[2], dtype=np.uint16)[: int(np.prod(shape))].view(ml_dtypes.bfloat16)
    return x.astype(np.float32).astype(np_dtype).reshape(shape)


@pytest.mark.parametrize("name,np_dtype", FP8)
@pytest.mark.parametrize("mode", ["fast", "capacity"])
def test_numpy_fp8_round_trip_keeps_shape_and_dtype(name, np_dtype, mode):
    x = real_fp8(np_dtype)
    frame = sz.compress(x, mode=mode)
    if mode == "capacity" and name == "fp8_e4m3":
        assert frame[4] == 3 and frame[49] == 1  # format v3: the whole byte coded (FORMAT.md 4.6.7)
    assert len(frame) < x.nbytes
    y = sz.decompress(frame)
    assert y.dtype == x.dtype and y.shape == x.shape
    assert y.view(np.uint8).tobytes() == x.view(np.uint8).tobytes()
    assert sz.tensor_desc(frame)["dtype"] == name


@pytest.mark.parametrize("name,np_dtype", FP8)
def test_raw_bytes_with_fp8_dtype_name(name, np_dtype):
    x = real_fp8(np_dtype).reshape(-1)
    y = sz.decompress(sz.compress(x.view(np.uint8), dtype=name))
    assert y.dtype == np.dtype(np_dtype) and y.tobytes() == x.tobytes()


def test_capacity_takes_raw_fp8_bytes():
    raw = np.arange(4096, dtype=np.uint8)
    for name in ("fp8_e4m3", "fp8_e5m2"):
        assert sz.decompress(sz.compress(raw, dtype=name, mode="capacity")).tobytes() == raw.tobytes()


@pytest.mark.parametrize("name,tname", [("fp8_e4m3", "float8_e4m3fn"), ("fp8_e5m2", "float8_e5m2")])
def test_torch_fp8_round_trip(name, tname):
    torch = pytest.importorskip("torch")
    if not hasattr(torch, tname):
        pytest.skip(f"this torch has no {tname}")
    t = torch.randn(4, 3, 64).to(getattr(torch, tname))
    frame = sz.compress(t)
    y = sz.decompress(frame)
    assert y.dtype == getattr(torch, tname) and tuple(y.shape) == (4, 3, 64)
    assert y.view(torch.uint8).numpy().tobytes() == t.view(torch.uint8).numpy().tobytes()
    frame = sz.compress(t, mode="capacity")
    assert frame[49] == 1 and frame[4] == (3 if name == "fp8_e4m3" else 2)  # mode 1; v3 for e4m3 (4.6.7)
    y = sz.decompress(frame)
    assert y.dtype == getattr(torch, tname) and tuple(y.shape) == (4, 3, 64)
    assert y.view(torch.uint8).numpy().tobytes() == t.view(torch.uint8).numpy().tobytes()


@pytest.mark.parametrize("name,np_dtype", FP8)
def test_dtype_names(name, np_dtype):
    from splitzip_kv import _dtypes
    assert _dtypes.normalize(np.dtype(np_dtype)) == name
    assert _dtypes.from_numpy(np_dtype) == name
