# SPDX-License-Identifier: Apache-2.0
"""Inputs and outputs: out= zero copy, buffer protocol, DLPack."""

import array
import ctypes

import ml_dtypes
import numpy as np
import pytest

import splitzip_kv
import dlpack_producer as dl
from conftest import DTYPES, bits, kv_like


# ---- out= -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", list(DTYPES))
def test_decompress_into_caller_array_in_place(dtype):
    x = kv_like(dtype, 5000).reshape(50, 100)
    frame = splitzip_kv.compress(x)
    out = np.empty((50, 100), dtype=DTYPES[dtype])
    address = out.ctypes.data
    got = splitzip_kv.decompress(frame, out=out)
    assert got is out and out.ctypes.data == address
    np.testing.assert_array_equal(bits(out), bits(x))


def test_decompress_into_slice_of_a_larger_buffer():
    x = kv_like("bf16", 1000)
    frame = splitzip_kv.compress(x)
    pool = np.full(3000, 7, dtype=np.uint16)
    res = splitzip_kv.decompress_into(frame, pool[1000:2000])
    assert res.size == 2000 and res.backend in splitzip_kv.backends()
    np.testing.assert_array_equal(pool[1000:2000], bits(x))
    assert (pool[:1000] == 7).all() and (pool[2000:] == 7).all()


def test_decompress_into_raw_bytes_and_bytearray():
    x = kv_like("fp16", 999)
    frame = splitzip_kv.compress(x)
    raw = np.empty(x.nbytes, np.uint8)
    splitzip_kv.decompress(frame, out=raw)
    assert raw.tobytes() == x.tobytes()
    ba = bytearray(x.nbytes)
    assert splitzip_kv.decompress(frame, out=ba) is ba
    assert bytes(ba) == x.tobytes()


def test_out_larger_than_needed_keeps_the_tail():
    x = kv_like("fp32", 100)
    out = np.full(120, -1.0, np.float32)
    splitzip_kv.decompress(splitzip_kv.compress(x), out=out)
    np.testing.assert_array_equal(bits(out[:100]), bits(x))
    assert (out[100:] == -1.0).all()


def test_out_checks():
    x = kv_like("bf16", 100)
    frame = splitzip_kv.compress(x)
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.decompress(frame, out=np.empty(99, DTYPES["bf16"]))
    assert e.value.status == "DST_TOO_SMALL"
    with pytest.raises(splitzip_kv.SplitzipError, match="dtype"):
        splitzip_kv.decompress(frame, out=np.empty(100, np.float16))
    with pytest.raises(splitzip_kv.SplitzipError, match="dtype"):
        splitzip_kv.decompress(frame, out=np.empty(100, np.uint32))  # wrong width
    ro = np.empty(100, DTYPES["bf16"])
    ro.flags.writeable = False
    with pytest.raises(splitzip_kv.SplitzipError, match="read-only"):
        splitzip_kv.decompress(frame, out=ro)
    with pytest.raises(splitzip_kv.SplitzipError, match="contiguous"):
        splitzip_kv.decompress(frame, out=np.empty(200, DTYPES["bf16"])[::2])
    with pytest.raises(splitzip_kv.SplitzipError, match="read-only"):
        splitzip_kv.decompress(frame, out=bytes(200))


def test_compress_into_caller_buffer():
    x = kv_like("bf16", 4096)
    out = np.zeros(splitzip_kv.compress_bound("bf16", x.size), np.uint8)
    res = splitzip_kv.compress_into(x, out)
    assert isinstance(res, splitzip_kv.Result)
    assert out[:res.size].tobytes() == splitzip_kv.compress(x)
    ba = bytearray(splitzip_kv.compress_bound("bf16", x.size))
    res2 = splitzip_kv.compress_into(x, memoryview(ba))
    assert bytes(ba[:res2.size]) == splitzip_kv.compress(x)


def test_compress_into_too_small():
    x = kv_like("bf16", 4096)
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.compress_into(x, bytearray(100))
    assert e.value.status == "DST_TOO_SMALL"


# ---- buffer protocol ---------------------------------------------------------

def test_bytes_need_a_dtype():
    x = kv_like("bf16", 512)
    with pytest.raises(splitzip_kv.SplitzipError, match="dtype="):
        splitzip_kv.compress(x.tobytes())
    for buf in (x.tobytes(), bytearray(x.tobytes()), memoryview(x.tobytes())):
        assert splitzip_kv.compress(buf, dtype="bf16") == splitzip_kv.compress(x)


def test_buffer_protocol_with_float_formats():
    h = kv_like("fp16", 300)
    assert memoryview(h).format == "e"
    assert splitzip_kv.compress(memoryview(h)) == splitzip_kv.compress(h)
    f = array.array("f", kv_like("fp32", 300).tolist())
    y = splitzip_kv.decompress(splitzip_kv.compress(f))
    assert y.tobytes() == f.tobytes()
    d = array.array("d", [1.0, 2.0])
    with pytest.raises(splitzip_kv.SplitzipError, match="float64"):
        splitzip_kv.compress(d)


def test_bytes_with_partial_element():
    with pytest.raises(splitzip_kv.SplitzipError, match="whole number"):
        splitzip_kv.compress(b"\x00" * 7, dtype="fp32")


def test_decompress_accepts_any_byte_container():
    x = kv_like("fp8_e5m2", 1000)
    frame = splitzip_kv.compress(x)
    for buf in (frame, bytearray(frame), memoryview(frame), np.frombuffer(frame, np.uint8)):
        np.testing.assert_array_equal(bits(splitzip_kv.decompress(buf)), bits(x))


def test_not_an_array():
    with pytest.raises(TypeError):
        splitzip_kv.compress(object(), dtype="bf16")
    with pytest.raises(TypeError):
        splitzip_kv.compress([1.0, 2.0], dtype="fp32")


# ---- DLPack ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_dlpack_from_numpy(dtype):
    x = kv_like(dtype, 2000)
    src = dl.NumpyDLPack(x)
    assert not hasattr(src, "__buffer__") and not isinstance(src, np.ndarray)
    assert splitzip_kv.compress(src) == splitzip_kv.compress(x)
    out = np.empty_like(x)
    splitzip_kv.decompress(splitzip_kv.compress(x), out=dl.NumpyDLPack(out))
    np.testing.assert_array_equal(bits(out), bits(x))


def test_dlpack_bfloat16_and_float8_codes():
    x = kv_like("bf16", 3000)
    p = dl.from_numpy(x.view(np.uint16), dl.CODE_BFLOAT, 16)
    assert splitzip_kv.compress(p) == splitzip_kv.compress(x)
    assert p.exports == 0  # the capsule was released
    f8 = kv_like("fp8_e5m2", 3000)
    assert splitzip_kv.compress(dl.from_numpy(f8.view(np.uint8), dl.CODE_FLOAT8_E5M2, 8)) == \
        splitzip_kv.compress(f8)
    # DLPack float8_e4m3fn is fp8_e4m3 (FORMAT.md 4.7); other float8 codes are refused.
    e4 = f8.view(np.uint8).view(ml_dtypes.float8_e4m3fn)
    assert splitzip_kv.compress(dl.from_numpy(e4.view(np.uint8), dl.CODE_FLOAT8_E4M3FN, 8)) == \
        splitzip_kv.compress(e4)
    with pytest.raises(splitzip_kv.SplitzipError, match="float8"):
        splitzip_kv.compress(dl.from_numpy(f8.view(np.uint8), 9, 8))  # float8_e4m3b11fnuz
    with pytest.raises(splitzip_kv.SplitzipError, match="dtype"):
        splitzip_kv.compress(p, dtype="fp16")  # a bfloat16 array is not fp16


def test_dlpack_non_contiguous_is_refused():
    x = kv_like("fp32", 200)
    p = dl.from_numpy(x, dl.CODE_FLOAT, 32, strides=2)
    p._shape[0] = 100
    with pytest.raises(splitzip_kv.SplitzipError, match="contiguous"):
        splitzip_kv.compress(p)


def test_cuda_memory_without_cuda_backend_is_a_clear_error():
    if splitzip_kv.backends().get("cuda"):
        pytest.skip("this build has a usable CUDA backend")
    # A bogus device address: the binding must refuse before touching it.
    p = dl.Producer(None, 0x1000, 64, dl.CODE_BFLOAT, 16, dl.DEVICE_CUDA)
    for call in (lambda: splitzip_kv.compress(p),
                 lambda: splitzip_kv.compress_into(p, bytearray(1024)),
                 lambda: splitzip_kv.decompress(p),
                 lambda: splitzip_kv.calibrate([p])):
        with pytest.raises(splitzip_kv.SplitzipError) as e:
            call()
        assert e.value.status == "BACKEND_UNAVAILABLE"
        assert "CUDA" in str(e.value)
    x = kv_like("bf16", 32)
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.decompress(splitzip_kv.compress(x), out=p)
    assert e.value.status == "BACKEND_UNAVAILABLE"


def test_other_devices_are_refused():
    p = dl.Producer(None, 0x1000, 64, dl.CODE_BFLOAT, 16, dl.DEVICE_ROCM)
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.compress_into(p, bytearray(1024))
    assert e.value.status == "UNSUPPORTED_MEMORY"


def test_pinned_host_memory_is_host_memory():
    x = kv_like("bf16", 500)
    p = dl.from_numpy(x.view(np.uint16), dl.CODE_BFLOAT, 16, device_type=dl.DEVICE_CUDA_HOST)
    assert splitzip_kv.compress(p) == splitzip_kv.compress(x)
