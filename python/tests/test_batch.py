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
