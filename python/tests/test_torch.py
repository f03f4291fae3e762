# SPDX-License-Identifier: Apache-2.0
"""torch tensors through DLPack: CPU always, CUDA when torch and the CUDA backend allow."""

import numpy as np
import pytest

import splitzip_kv
from conftest import bits, kv_like

torch = pytest.importorskip("torch", reason="torch is not installed (optional dependency)")

TORCH = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
if hasattr(torch, "float8_e5m2"):
    TORCH["fp8_e5m2"] = torch.float8_e5m2


SIGNED = {1: np.uint8, 2: np.int16, 4: np.int32}  # integer types torch.from_numpy takes
INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32}


def as_torch(x, dtype):
    """A torch tensor with the same bits as numpy array x."""
    return torch.from_numpy(bits(x).view(SIGNED[x.itemsize]).copy()).view(TORCH[dtype])


def torch_bits(t):
    return t.reshape(-1).view(INT[t.element_size()])


@pytest.mark.parametrize("dtype", list(TORCH))
def test_cpu_tensor_round_trip(dtype):
    x = kv_like(dtype, 4000).reshape(40, 100)
    t = as_torch(x, dtype).reshape(40, 100)
    frame = splitzip_kv.compress(t)
    assert frame == splitzip_kv.compress(x)
    out = torch.empty(40, 100, dtype=TORCH[dtype])
    assert splitzip_kv.decompress(frame, out=out) is out
    assert torch.equal(torch_bits(out), torch_bits(t))
    back = splitzip_kv.decompress(torch.from_numpy(np.frombuffer(frame, np.uint8).copy()))
    assert isinstance(back, np.ndarray)
    np.testing.assert_array_equal(bits(back), bits(x))
    res = splitzip_kv.compress_into(t, torch.empty(splitzip_kv.compress_bound(dtype, t.numel()),
                                                dtype=torch.uint8))
    assert res.size == len(frame)


def test_cpu_tensor_non_contiguous_and_requires_grad():
    t = torch.randn(64, 32, dtype=torch.float32, requires_grad=True)
    frame = splitzip_kv.compress(t.t())
    np.testing.assert_array_equal(splitzip_kv.decompress(frame), t.detach().t().contiguous().numpy().reshape(-1))


def test_cpu_tensor_out_dtype_mismatch():
    frame = splitzip_kv.compress(torch.zeros(10, dtype=torch.bfloat16))
    with pytest.raises(splitzip_kv.SplitzipError, match="dtype"):
        splitzip_kv.decompress(frame, out=torch.empty(10, dtype=torch.float16))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device visible to torch")
def test_cuda_tensor():
    t = torch.randn(1 << 16, device="cuda").to(torch.bfloat16)
    if not splitzip_kv.backends().get("cuda"):
        with pytest.raises(splitzip_kv.SplitzipError) as e:
            splitzip_kv.compress(t)
        assert e.value.status == "BACKEND_UNAVAILABLE"
        return
    frame = splitzip_kv.compress(t)
    assert frame.device == t.device and frame.dtype == torch.uint8
    assert bytes(frame.cpu().numpy()) == splitzip_kv.compress(t.cpu())
    back = splitzip_kv.decompress(frame)
    assert back.device == t.device and torch.equal(back, t)
