# SPDX-License-Identifier: Apache-2.0
"""frame_info(), frames() and streams of back-to-back frames."""

import struct

import numpy as np
import pytest

import splitzip_kv
from conftest import DTYPES, bits, kv_like


def test_frame_info_fields():
    x = kv_like("fp16", 3000)
    frame = splitzip_kv.compress(x, checksum=True, chunk_log2=8)
    info = splitzip_kv.frame_info(frame)
    assert info["version"] == splitzip_kv.FORMAT_VERSION == 1
    assert info["dtype"] == "fp16"
    assert info["n_elems"] == 3000
    assert info["decoded_size"] == 6000
    assert info["frame_size"] == len(frame)
    assert info["chunk_log2"] == 8
    assert info["checksum"] is True
    assert info["content_checksum"] == splitzip_kv.xxh64(x)
    assert info["stored"] is False
    assert isinstance(info["codebook"], splitzip_kv.Codebook)
    assert info["codebook"] == splitzip_kv.calibrate(x)
    # The same fields straight from the header bytes (FORMAT.md 4.1).
    magic, version, dtype_id, flags, chunk_log2, n, escapes, size = struct.unpack_from(
        "<4sBBBBQQQ", frame)
    assert (magic, version, dtype_id, flags, chunk_log2) == (b"SZKV", 1, 2, 2, 8)
    assert (n, escapes, size) == (3000, info["escape_count"], len(frame))


def test_frame_info_without_checksum():
    info = splitzip_kv.frame_info(splitzip_kv.compress(kv_like("bf16", 10)))
    assert info["checksum"] is False and info["content_checksum"] == 0


def test_stream_of_frames_decodes_as_one_array():
    parts = [kv_like("bf16", n, seed=n) for n in (100, 5000, 1, 777)]
    stream = b"".join(splitzip_kv.compress(p) for p in parts)
    infos = splitzip_kv.frames(stream)
    assert [i["n_elems"] for i in infos] == [100, 5000, 1, 777]
    assert infos[0]["offset"] == 0
    assert [i["offset"] for i in infos[1:]] == \
        list(np.cumsum([i["frame_size"] for i in infos])[:-1])
    assert splitzip_kv.frame_info(stream, offset=infos[2]["offset"])["n_elems"] == 1
    y = splitzip_kv.decompress(stream)
    np.testing.assert_array_equal(bits(y), bits(np.concatenate(parts)))


def test_mixed_dtype_stream_needs_a_byte_target():
    a, b = kv_like("bf16", 100), kv_like("fp32", 50)
    stream = splitzip_kv.compress(a) + splitzip_kv.compress(b)
    with pytest.raises(splitzip_kv.SplitzipError, match="different dtypes"):
        splitzip_kv.decompress(stream)
    with pytest.raises(splitzip_kv.SplitzipError, match="raw uint8"):
        splitzip_kv.decompress(stream, out=np.empty(100, DTYPES["bf16"]))
    total = sum(i["decoded_size"] for i in splitzip_kv.frames(stream))
    out = splitzip_kv.decompress(stream, out=np.empty(total, np.uint8))
    assert out.tobytes() == a.tobytes() + b.tobytes()


def test_frame_info_offset_past_end():
    frame = splitzip_kv.compress(kv_like("bf16", 10))
    with pytest.raises(splitzip_kv.SplitzipError):
        splitzip_kv.frame_info(frame, offset=len(frame) + 1)
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.frame_info(frame, offset=len(frame))
    assert e.value.status == "TRUNCATED"


def test_backends_lists_reference():
    b = splitzip_kv.backends()
    assert b["reference"] is True
    assert list(b)[0] == "reference"
