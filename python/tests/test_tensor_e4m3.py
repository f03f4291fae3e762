# SPDX-License-Identifier: Apache-2.0
"""Issue 17: shape/dtype round trips (tensor descriptor, FORMAT.md 4.8),
fp8_e4m3 (4.7), checksum on by default, argument checks, numcodecs/Zarr."""
import glob
import os
import warnings

import ml_dtypes
import numpy as np
import pytest

import splitzip_kv as sz

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
KV = sorted(glob.glob(os.path.join(ROOT, "data", "kv", "stories260k", "*.bf16")))


def same_bytes(a, b):
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8).tobytes() == \
        np.ascontiguousarray(b).reshape(-1).view(np.uint8).tobytes()


def test_shape_and_dtype_round_trip_bf16_kv_block():
    x = np.random.default_rng(0).standard_normal((2, 16, 256, 8, 128)).astype(ml_dtypes.bfloat16)
    frame = sz.compress(x)
    y = sz.decompress(frame)
    assert y.dtype == x.dtype and y.shape == x.shape and same_bytes(x, y)
    desc = sz.tensor_desc(frame)
    assert desc["shape"] == (2, 16, 256, 8, 128) and desc["dtype"] == "bf16"


def test_shape_of_a_non_contiguous_view():
    base = np.random.default_rng(1).standard_normal((4, 6, 10)).astype(np.float16)
    v = base[:, ::2, 3:]
    assert not v.flags.c_contiguous
    y = sz.decompress(sz.compress(v))
    assert y.shape == v.shape and y.dtype == v.dtype and np.array_equal(y, v)


def test_out_is_checked_against_the_recorded_shape():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    frame = sz.compress(x)
    ok = np.empty((2, 3, 4), np.float32)
    assert sz.decompress(frame, out=ok) is ok and np.array_equal(ok, x)
    with pytest.raises(sz.SplitzipError, match="shape"):
        sz.decompress(frame, out=np.empty((4, 3, 2), np.float32))
    raw = np.empty(x.nbytes, np.uint8)  # raw bytes: only the size counts
    sz.decompress(frame, out=raw)
    assert raw.tobytes() == x.tobytes()


def test_raw_buffers_stay_flat():
    raw = np.arange(1000, dtype=np.uint16)
    y = sz.decompress(sz.compress(raw.tobytes(), dtype="bf16"))
    assert y.shape == (1000,) and y.dtype == ml_dtypes.bfloat16


def test_torch_in_torch_out():
    torch = pytest.importorskip("torch")
    t = torch.randn(2, 3, 5).to(torch.bfloat16)
    y = sz.decompress(sz.compress(t))
    assert isinstance(y, torch.Tensor) and y.dtype == t.dtype and tuple(y.shape) == (2, 3, 5)
    assert torch.equal(y.view(torch.int16), t.view(torch.int16))
    if hasattr(torch, "float8_e4m3fn"):
        e = torch.randn(64).to(torch.float8_e4m3fn)
        y = sz.decompress(sz.compress(e))
        assert y.dtype == torch.float8_e4m3fn and torch.equal(y.view(torch.uint8), e.view(torch.uint8))


def test_e4m3_every_byte_value_round_trips():
    allb = np.tile(np.arange(256, dtype=np.uint8), 50).view(ml_dtypes.float8_e4m3fn)
    for backend in [b for b, ok in sz.backends().items() if ok and b != "cuda"]:
        y = sz.decompress(sz.compress(allb, backend=backend), backend=backend)
        assert y.dtype == np.dtype(ml_dtypes.float8_e4m3fn) and same_bytes(allb, y)
    assert sz.frame_info(sz.compress(allb))["dtype"] == "fp8_e4m3"


@pytest.mark.skipif(not KV, reason="data/kv not present")
def test_e4m3_ratio_on_real_kv_cast_like_vllm():
    total_in = total_out = 0
    for path in KV:
        x = np.fromfile(path, dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)
        scale = float(np.max(np.abs(x))) / 448.0
        e4 = (x / scale).astype(ml_dtypes.float8_e4m3fn)
        frame = sz.compress(e4, checksum=False)
        assert same_bytes(sz.decompress(frame), e4)
        total_in += e4.nbytes
        total_out += len(frame)
    assert total_in / total_out >= 1.10


def test_fp8_is_not_a_dtype_name():
    with pytest.raises(sz.SplitzipError, match="fp8_e4m3"):
        sz.compress(np.zeros(8, np.uint8), dtype="fp8")
    assert "fp8_e4m3" in sz.DTYPES


def test_checksum_is_on_by_default_and_opt_out_is_checksum_false():
    x = np.ones(1000, np.float16)
    assert sz.frame_info(sz.compress(x))["checksum"] is True
    assert sz.frame_info(sz.compress(x, checksum=False))["checksum"] is False
    out = np.empty(sz.compress_bound("fp16", 1000), np.uint8)
    size, _ = sz.compress_into(x, out)
    assert sz.frame_info(out[:size])["checksum"] is True


@pytest.mark.parametrize("kw", [{"max_output_bytes": -1}, {"threads": -1}, {"threads": 2**40},
                                {"max_output_bytes": 2**70}])
def test_bad_integers_raise_splitziperror_naming_the_argument(kw):
    frame = sz.compress(np.ones(10, np.float32))
    name = next(iter(kw))
    with pytest.raises(sz.SplitzipError, match=name):
        sz.decompress(frame, **kw)


def test_bad_chunk_log2_names_the_argument():
    with pytest.raises(sz.SplitzipError, match="chunk_log2"):
        sz.compress(np.ones(10, np.float32), chunk_log2=-3)


def test_numcodecs_entry_point_and_config_round_trip():
    numcodecs = pytest.importorskip("numcodecs")
    codec = numcodecs.get_codec({"id": "splitzip"})
    assert type(codec).__name__ == "SplitzipCodec"
    cfg = codec.get_config()
    assert cfg["id"] == "splitzip" and numcodecs.get_codec(cfg) == codec
    other = numcodecs.get_codec({"id": "splitzip", "dtype": "bf16", "checksum": False, "view": "uint16"})
    assert numcodecs.get_codec(other.get_config()) == other
    x = np.random.default_rng(2).standard_normal(5000).astype(ml_dtypes.bfloat16)
    assert same_bytes(codec.decode(codec.encode(x)), x)
    raw = x.view(np.uint16)
    back = other.decode(other.encode(raw))
    assert back.dtype == np.uint16 and np.array_equal(back, raw)
    out = np.empty_like(raw)
    other.decode(other.encode(raw), out=out)
    assert np.array_equal(out, raw)


@pytest.mark.parametrize("kind", ["bf16", "fp16", "fp32"])
def test_zarr3_array_round_trip(kind, tmp_path):
    zarr = pytest.importorskip("zarr")
    from splitzip_kv.numcodecs_codec import SplitzipZarrCodec
    assert SplitzipZarrCodec is not None
    rng = np.random.default_rng(3)
    if KV:
        base = np.fromfile(KV[0], dtype=np.uint16).view(ml_dtypes.bfloat16)[: 4 * 8 * 64]
        x = base.astype(np.float32).reshape(4, 8, 64)
    else:
        x = rng.standard_normal((4, 8, 64)).astype(np.float32)
    if kind == "bf16":
        data = x.astype(ml_dtypes.bfloat16).view(np.uint16)  # Zarr 3 has no bfloat16 type
        serializer = SplitzipZarrCodec(dtype="bf16", view="uint16")
    else:
        data = x.astype(np.float16 if kind == "fp16" else np.float32)
        serializer = SplitzipZarrCodec()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning per array (issue 31)
        store = zarr.storage.LocalStore(str(tmp_path / "kv.zarr"))
        a = zarr.create_array(store, shape=data.shape, chunks=(2, 8, 64), dtype=data.dtype,
                              serializer=serializer, compressors=None)
        a[...] = data
        b = zarr.open_array(zarr.storage.LocalStore(str(tmp_path / "kv.zarr")), mode="r")[...]
    assert b.dtype == data.dtype and b.shape == data.shape
    assert b.tobytes() == data.tobytes()
