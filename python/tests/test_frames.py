"""frame_info(), frames() and streams of back-to-back frames."""

import struct

import numpy as np
import pytest

import splitzip
from conftest import DTYPES, bits, kv_like


def test_frame_info_fields():
    x = kv_like("fp16", 3000)
    frame = splitzip.compress(x, checksum=True, chunk_log2=8)
    info = splitzip.frame_info(frame)
    assert info["version"] == splitzip.FORMAT_VERSION == 1
    assert info["dtype"] == "fp16"
    assert info["n_elems"] == 3000
    assert info["decoded_size"] == 6000
    assert info["frame_size"] == len(frame)
    assert info["chunk_log2"] == 8
    assert info["checksum"] is True
    assert info["content_checksum"] == splitzip.xxh64(x)
    assert info["stored"] is False
    assert isinstance(info["codebook"], splitzip.Codebook)
    assert info["codebook"] == splitzip.calibrate(x)
    # The same fields straight from the header bytes (FORMAT.md 4.1).
    magic, version, dtype_id, flags, chunk_log2, n, escapes, size = struct.unpack_from(
        "<4sBBBBQQQ", frame)
    assert (magic, version, dtype_id, flags, chunk_log2) == (b"SZKV", 1, 2, 2, 8)
    assert (n, escapes, size) == (3000, info["escape_count"], len(frame))


def test_frame_info_without_checksum():
    info = splitzip.frame_info(splitzip.compress(kv_like("bf16", 10)))
    assert info["checksum"] is False and info["content_checksum"] == 0


def test_stream_of_frames_decodes_as_one_array():
    parts = [kv_like("bf16", n, seed=n) for n in (100, 5000, 1, 777)]
    stream = b"".join(splitzip.compress(p) for p in parts)
    infos = splitzip.frames(stream)
    assert [i["n_elems"] for i in infos] == [100, 5000, 1, 777]
    assert infos[0]["offset"] == 0
    assert [i["offset"] for i in infos[1:]] == \
        list(np.cumsum([i["frame_size"] for i in infos])[:-1])
    assert splitzip.frame_info(stream, offset=infos[2]["offset"])["n_elems"] == 1
    y = splitzip.decompress(stream)
    np.testing.assert_array_equal(bits(y), bits(np.concatenate(parts)))


def test_mixed_dtype_stream_needs_a_byte_target():
    a, b = kv_like("bf16", 100), kv_like("fp32", 50)
    stream = splitzip.compress(a) + splitzip.compress(b)
    with pytest.raises(splitzip.SplitzipError, match="different dtypes"):
        splitzip.decompress(stream)
    with pytest.raises(splitzip.SplitzipError, match="raw uint8"):
        splitzip.decompress(stream, out=np.empty(100, DTYPES["bf16"]))
    total = sum(i["decoded_size"] for i in splitzip.frames(stream))
    out = splitzip.decompress(stream, out=np.empty(total, np.uint8))
    assert out.tobytes() == a.tobytes() + b.tobytes()


def test_frame_info_offset_past_end():
    frame = splitzip.compress(kv_like("bf16", 10))
    with pytest.raises(splitzip.SplitzipError):
        splitzip.frame_info(frame, offset=len(frame) + 1)
    with pytest.raises(splitzip.SplitzipError) as e:
        splitzip.frame_info(frame, offset=len(frame))
    assert e.value.status == "TRUNCATED"


def test_backends_lists_reference():
    b = splitzip.backends()
    assert b["reference"] is True
    assert list(b)[0] == "reference"
