# SPDX-License-Identifier: Apache-2.0
"""Batched pages: compress_batch / decompress_batch give the single-call
frames and values, per-page errors name the page."""

import numpy as np
import pytest

import splitzip_kv
from conftest import DTYPES, bits, kv_like


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("checksum", [False, True])
@pytest.mark.parametrize("threads", [0, 1, 2])
def test_batch_matches_single_calls(dtype, checksum, threads):
    pages = [kv_like(dtype, n, seed=i) for i, n in enumerate([8192, 1, 777, 40000, 8192])]
    pages.insert(1, np.empty(0, DTYPES[dtype]))  # an empty page is a frame of 0 values
    frames = splitzip_kv.compress_batch(pages, checksum=checksum, threads=threads)
    assert len(frames) == len(pages)
    for page, frame in zip(pages, frames):
        assert isinstance(frame, bytes)
        assert frame == splitzip_kv.compress(page, checksum=checksum, backend="reference")
    back = splitzip_kv.decompress_batch(frames, threads=threads)
    for page, y in zip(pages, back):
        assert y.dtype == DTYPES[dtype]
        np.testing.assert_array_equal(bits(y), bits(page))
    outs = [np.empty_like(p) for p in pages]
    assert splitzip_kv.decompress_batch(frames, outs) is outs
    for page, y in zip(pages, outs):
        np.testing.assert_array_equal(bits(y), bits(page))


def test_batch_with_codebook_and_backends():
    pages = [kv_like("bf16", 4096, seed=i) for i in range(9)]
    cb = splitzip_kv.calibrate(pages)
    for backend in ("cpu", "reference"):
        if not splitzip_kv.backends().get(backend):
            continue
        frames = splitzip_kv.compress_batch(pages, codebook=cb, backend=backend)
        assert frames == [splitzip_kv.compress(p, codebook=cb) for p in pages]


def test_batch_errors_name_the_page():
    pages = [kv_like("bf16", 1000, seed=i) for i in range(4)]
    frames = splitzip_kv.compress_batch(pages, checksum=True)
    bad = bytearray(frames[2])
    bad[64] ^= 1
    with pytest.raises(splitzip_kv.SplitzipError, match="frame 2") as e:
        splitzip_kv.decompress_batch([frames[0], frames[1], bytes(bad), frames[3]])
    assert e.value.status == "CHECKSUM_MISMATCH"
    # Skipping the check decodes it (the flipped bit is in the values).
    out = splitzip_kv.decompress_batch([bytes(bad)], verify_checksum=False)
    assert out[0].shape == (1000,)
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.decompress_batch(frames, max_output_bytes=100)
    assert e.value.status == "LIMIT_EXCEEDED"
    with pytest.raises(splitzip_kv.SplitzipError):
        splitzip_kv.decompress_batch(frames, [np.empty(1000, DTYPES["bf16"])])  # count mismatch
    with pytest.raises(splitzip_kv.SplitzipError):
        splitzip_kv.compress_batch([pages[0], kv_like("fp16", 10, seed=1)])  # mixed dtypes
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.compress_batch(pages, backend="bogus")
    assert e.value.status == "UNKNOWN_BACKEND"
    assert splitzip_kv.compress_batch([]) == []
    assert splitzip_kv.decompress_batch([]) == []


@pytest.mark.parametrize("mode", ["fast", "capacity"])
def test_batch_keeps_shape_and_dtype(mode):
    # Each frame is compress(page)'s, tensor descriptor included, so the
    # pages come back with their shapes (a flat numpy page records none).
    shapes = [(16, 8, 128), (4, 1000), (1, 1, 1), (3000,), (128, 8, 64)]
    for dtype in DTYPES:
        pages = [kv_like(dtype, int(np.prod(s)), seed=i).reshape(s) for i, s in enumerate(shapes)]
        pages.append(np.empty((0, 4), DTYPES[dtype]))
        frames = splitzip_kv.compress_batch(pages, mode=mode)
        assert frames == [splitzip_kv.compress(p, mode=mode) for p in pages]
        back = splitzip_kv.decompress_batch(frames)
        for page, y in zip(pages, back):
            assert y.shape == page.shape and y.dtype == page.dtype
            np.testing.assert_array_equal(bits(y), bits(page))
            single = splitzip_kv.decompress(splitzip_kv.compress(page, mode=mode))
            assert single.shape == y.shape and single.dtype == y.dtype


def test_batch_large_pages_match_single_calls():
    # Pages past the size where a frame keeps its bound allocation (bytes
    # cut in place) give the same frames and well-formed bytes objects.
    pages = [kv_like("bf16", n, seed=i).reshape(-1, 64) for i, n in enumerate([1 << 17, 1 << 19, 64])]
    frames = splitzip_kv.compress_batch(pages, mode="capacity")
    for page, frame in zip(pages, frames):
        single = splitzip_kv.compress(page, mode="capacity")
        assert frame == single and hash(frame) == hash(single) and len(frame) == len(bytes(single))
        assert splitzip_kv.frame_info(frame)["frame_size"] == len(frame)
        np.testing.assert_array_equal(bits(splitzip_kv.decompress(frame)), bits(page))


def test_large_compress_returns_independent_sound_bytes():
    # compress() cuts a large frame's bytes object in place (no realloc):
    # the objects must behave as any bytes and never share memory.
    import pickle
    a = kv_like("bf16", 1 << 21, seed=3)
    b = kv_like("bf16", 1 << 21, seed=4)
    fa = splitzip_kv.compress(a)
    keep = bytes(bytearray(fa))
    fb = splitzip_kv.compress(b)
    out = np.empty(splitzip_kv.compress_bound("bf16", a.size), np.uint8)
    n = splitzip_kv.compress_into(a, out).size
    assert fa == keep == out[:n].tobytes() and fa != fb
    assert len(fa) == n and fa[-1:] == keep[-1:] and hash(fa) == hash(keep)
    assert pickle.loads(pickle.dumps(fa)) == fa
    assert (fa + b"x")[:-1] == fa
    np.testing.assert_array_equal(bits(splitzip_kv.decompress(fa)), bits(a))
    np.testing.assert_array_equal(bits(splitzip_kv.decompress(fb)), bits(b))


@pytest.mark.parametrize("mode", ["fast", "capacity"])
def test_stacked_pages(mode):
    # One array whose rows are the pages: the frames of the list form (each
    # compress(row)), and decoding into one array's rows.
    for dtype in DTYPES:
        for shape in [(9, 4096), (5, 16, 4, 8), (1, 3)]:
            pages = kv_like(dtype, int(np.prod(shape)), seed=7).reshape(shape)
            frames = splitzip_kv.compress_batch(pages, mode=mode, threads=2)
            assert frames == [splitzip_kv.compress(p, mode=mode) for p in pages]
            assert frames == splitzip_kv.compress_batch(list(pages), mode=mode)
            out = np.empty_like(pages)
            assert splitzip_kv.decompress_batch(frames, out) is out
            np.testing.assert_array_equal(bits(out), bits(pages))
            back = splitzip_kv.decompress_batch(frames)
            assert all(b.shape == pages.shape[1:] and b.dtype == pages.dtype for b in back)
    assert splitzip_kv.compress_batch(np.empty((0, 8), np.float16)) == []
    frames = splitzip_kv.compress_batch(np.ones((4, 8), np.float16))
    with pytest.raises(splitzip_kv.SplitzipError, match="3 outputs"):
        splitzip_kv.decompress_batch(frames, np.empty((3, 8), np.float16))
    with pytest.raises(splitzip_kv.SplitzipError):
        splitzip_kv.decompress_batch(frames, np.empty((4, 8), np.float32))  # another dtype
    with pytest.raises(splitzip_kv.SplitzipError):
        splitzip_kv.decompress_batch(frames, np.empty((4, 7), np.float16))  # rows too small
    mixed = frames[:2] + splitzip_kv.compress_batch(np.ones((2, 4), np.float32))
    with pytest.raises(splitzip_kv.SplitzipError, match=r"different dtypes: \['fp16', 'fp32'\]"):
        splitzip_kv.decompress_batch(mixed, np.empty((4, 8), np.float16))
    assert splitzip_kv.decompress_batch([], np.empty((0, 8), np.float16)).shape == (0, 8)
    with pytest.raises(splitzip_kv.SplitzipError, match="decompress_batch frame 1"):
        splitzip_kv.decompress_batch([frames[0], b"not a frame"], np.empty((2, 8), np.float16))
