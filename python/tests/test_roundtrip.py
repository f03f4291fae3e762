# SPDX-License-Identifier: Apache-2.0
"""Round trips of every dtype, checked bit for bit and against FORMAT.md."""

import numpy as np
import pytest

import splitzip_kv
from conftest import DTYPES, bits, kv_like, random_bits
import format_decoder

ALL = list(DTYPES)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("n", [1, 2, 7, 1000, 1025, 70000])
def test_roundtrip_kv_like(dtype, n):
    x = kv_like(dtype, n, seed=n)
    frame = splitzip_kv.compress(x)
    assert isinstance(frame, bytes)
    assert len(frame) % 16 == 0
    assert len(frame) <= splitzip_kv.compress_bound(dtype, n)
    y = splitzip_kv.decompress(frame)
    assert y.dtype == DTYPES[dtype]
    assert y.shape == (n,)
    np.testing.assert_array_equal(bits(y), bits(x))


@pytest.mark.parametrize("dtype", ALL)
def test_roundtrip_every_bit_pattern(dtype):
    x = random_bits(dtype, 20000, seed=3)
    y = splitzip_kv.decompress(splitzip_kv.compress(x, checksum=True))
    np.testing.assert_array_equal(bits(y), bits(x))


@pytest.mark.parametrize("dtype", ALL)
def test_frames_follow_the_written_format(dtype):
    """An independent numpy decoder of FORMAT.md reads what the library wrote."""
    for x in (kv_like(dtype, 5000, seed=11), random_bits(dtype, 3000, seed=12),
              kv_like(dtype, 70000, seed=13)):
        for checksum in (False, True):
            frame = splitzip_kv.compress(x, chunk_log2=7, checksum=checksum)
            np.testing.assert_array_equal(format_decoder.decode(frame), bits(x))


@pytest.mark.parametrize("chunk_log2", [6, 10, 15])
def test_chunk_sizes(chunk_log2):
    x = kv_like("bf16", 50000, seed=chunk_log2)
    frame = splitzip_kv.compress(x, chunk_log2=chunk_log2)
    assert splitzip_kv.frame_info(frame)["chunk_log2"] == chunk_log2
    np.testing.assert_array_equal(bits(splitzip_kv.decompress(frame)), bits(x))


def test_multidimensional_input_keeps_its_shape():
    x = kv_like("fp16", 2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    y = splitzip_kv.decompress(splitzip_kv.compress(x))
    assert y.shape == x.shape  # the frame's tensor descriptor (FORMAT.md 4.8)
    np.testing.assert_array_equal(bits(y), bits(x))


def test_non_contiguous_source_is_compressed_in_logical_order():
    base = kv_like("bf16", 4000).reshape(40, 100)
    view = base[:, ::3]
    assert not view.flags.c_contiguous
    y = splitzip_kv.decompress(splitzip_kv.compress(view))
    np.testing.assert_array_equal(bits(y), bits(view))


def test_empty_array():
    x = np.zeros(0, dtype=DTYPES["bf16"])
    frame = splitzip_kv.compress(x)
    info = splitzip_kv.frame_info(frame)
    assert info["n_elems"] == 0 and info["stored"] and len(frame) == 64
    y = splitzip_kv.decompress(frame)
    assert y.shape == (0,) and y.dtype == DTYPES["bf16"]


def test_incompressible_data_is_stored():
    x = random_bits("fp32", 4096, seed=5)
    frame = splitzip_kv.compress(x, checksum=False)
    info = splitzip_kv.frame_info(frame)
    assert info["stored"]
    assert len(frame) == 64 + 4096 * 4
    assert info["codebook"] is None
    # With block checks (one 4-byte check, padded to 16) it is the bound.
    frame = splitzip_kv.compress(x, checksum=True)
    assert splitzip_kv.frame_info(frame)["stored"]
    assert len(frame) == splitzip_kv.compress_bound("fp32", 4096) == 64 + 4096 * 4 + 16


def test_compress_is_deterministic_and_threads_do_not_matter():
    x = kv_like("bf16", 300000, seed=9)
    a = splitzip_kv.compress(x)
    assert splitzip_kv.compress(x, threads=1) == a
    assert splitzip_kv.compress(x, threads=2) == a


def test_compress_bound_formula():
    for dtype, size in (("bf16", 2), ("fp16", 2), ("fp32", 4), ("fp8_e5m2", 1)):
        for n in (0, 1, 7, 8, 1000, 32768, 32769, 1 << 40):
            # stored size with the v2 block checks: 4 bytes per 64 KiB block
            blocks = -(-(n * size) // 65536)
            expected = 64 + ((n * size + 15) // 16) * 16 + ((4 * blocks + 15) // 16) * 16
            assert splitzip_kv.compress_bound(dtype, n) == expected
    assert splitzip_kv.compress_bound(np.float16, 3) == splitzip_kv.compress_bound("fp16", 3)
    with pytest.raises(splitzip_kv.SplitzipError):
        splitzip_kv.compress_bound("bf16", -1)
    with pytest.raises(splitzip_kv.SplitzipError):
        splitzip_kv.compress_bound("float64", 1)


def test_dtype_aliases_and_explicit_dtype():
    x = kv_like("bf16", 1000)
    raw = x.view(np.uint16)
    for name in ("bf16", "bfloat16", DTYPES["bf16"]):
        assert splitzip_kv.compress(raw, dtype=name) == splitzip_kv.compress(x)
    assert splitzip_kv.compress(x, dtype="bf16") == splitzip_kv.compress(x)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("n", [1, 1000, 70000])
def test_mode_capacity(dtype, n):
    """mode="capacity": header byte 49 = 1, decodes without a flag; "fast" = default."""
    x = kv_like(dtype, n, seed=n + 7)
    frame = splitzip_kv.compress(x, mode="capacity")
    fast = splitzip_kv.compress(x, mode="fast")
    assert fast == splitzip_kv.compress(x)
    assert fast[49] == 0
    assert frame[49] == (1 if n > 1 else 0)  # a single element is stored (mode 0)
    np.testing.assert_array_equal(bits(splitzip_kv.decompress(frame)), bits(x))
    out = np.empty(splitzip_kv.compress_bound(dtype, n), dtype=np.uint8)
    r = splitzip_kv.compress_into(x, out, mode="capacity")
    assert bytes(out[: r.size]) == frame
    if n == 70000:  # tables and stream sizes pay off on large inputs
        assert len(frame) < len(fast)
    info, finfo = splitzip_kv.frame_info(frame), splitzip_kv.frame_info(fast)
    assert finfo["mode"] == "fast" and finfo["exponent_bytes"] is None and finfo["escape_count"] >= 0
    if n > 1:  # header bytes 16..23 are the coded exponents' size, not escapes
        assert info["mode"] == "capacity" and info["escape_count"] is None and info["codebook"] is None
        assert 0 < info["exponent_bytes"] < n
    else:
        assert info["stored"] and info["mode"] == "fast"


@pytest.mark.parametrize("mode", ["turbo", "", 1])  # None: fast, or capacity with tables=
def test_mode_rejects_unknown(mode):
    x = kv_like("bf16", 100)
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.compress(x, mode=mode)
    assert e.value.status == "INVALID_ARGUMENT"
