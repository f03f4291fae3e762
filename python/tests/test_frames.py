# SPDX-License-Identifier: Apache-2.0
"""frame_info(), iter_frames(), frames() and streams of back-to-back frames."""

import struct

import numpy as np
import pytest

import splitzip_kv
from conftest import DTYPES, bits, kv_like
import format_decoder


def test_frame_info_fields():
    x = kv_like("fp16", 3000)
    frame = splitzip_kv.compress(x, checksum=True, chunk_log2=8)
    info = splitzip_kv.frame_info(frame)
    # Encoders write the lowest version that expresses the frame: 2 here;
    # FORMAT_VERSION (3) is the newest they write (fp8_e4m3 in mode 1, a table set).
    assert info["version"] == 2 and splitzip_kv.FORMAT_VERSION == 3
    assert info["tables_id"] is None
    assert splitzip_kv.MIN_FORMAT_VERSION == 1
    assert info["dtype"] == "fp16"
    assert info["n_elems"] == 3000
    assert info["decoded_size"] == 6000
    assert info["frame_size"] == len(frame)
    assert info["chunk_log2"] == 8
    assert info["checksum"] is True
    # v2: XXH3-64 over the XXH3-64 of each 64 KiB block of the input.
    assert info["content_checksum"] == format_decoder.content_checksum(x.tobytes())
    assert info["checksum_block_log2"] == 16 and info["checksum_block_size"] == 65536
    assert info["checksum_blocks"] == 1  # 6000 bytes
    assert info["stored"] is False
    assert isinstance(info["codebook"], splitzip_kv.Codebook)
    assert info["codebook"] == splitzip_kv.calibrate(x)
    # The same fields straight from the header bytes (FORMAT.md 4.1).
    magic, version, dtype_id, flags, chunk_log2, n, escapes, size = struct.unpack_from(
        "<4sBBBBQQQ", frame)
    assert (magic, version, dtype_id, flags, chunk_log2) == (b"SZKV", 2, 2, 2, 8)
    assert tuple(frame[49:52]) == (0, 16, 0)  # mode, block_log2, reserved
    assert (n, escapes, size) == (3000, info["escape_count"], len(frame))


def test_frame_info_without_checksum():
    info = splitzip_kv.frame_info(splitzip_kv.compress(kv_like("bf16", 10), checksum=False))
    assert info["checksum"] is False and info["content_checksum"] == 0
    assert info["checksum_block_size"] is None and info["checksum_blocks"] == 0


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


def test_iter_frames_walks_a_stream():
    parts = [kv_like("bf16", n, seed=n) for n in (100, 5000, 1)]
    frames = [splitzip_kv.compress(p, checksum=True) for p in parts]
    stream = b"".join(frames)
    it = splitzip_kv.iter_frames(stream)
    assert iter(it) is it
    infos = list(it)
    assert [i["n_elems"] for i in infos] == [100, 5000, 1]
    assert [i["offset"] for i in infos] == [0, len(frames[0]), len(frames[0]) + len(frames[1])]
    assert [i["frame_size"] for i in infos] == [len(f) for f in frames]
    assert infos == splitzip_kv.frames(stream)
    # Any host buffer: bytearray, memoryview, numpy of any dtype.
    assert list(splitzip_kv.iter_frames(bytearray(stream))) == infos
    assert list(splitzip_kv.iter_frames(memoryview(stream))) == infos
    assert list(splitzip_kv.iter_frames(np.frombuffer(stream, np.uint8))) == infos
    with pytest.raises(StopIteration):
        next(it)


def test_iter_frames_stops_at_a_bad_frame():
    a = splitzip_kv.compress(kv_like("bf16", 100))
    b = bytearray(splitzip_kv.compress(kv_like("fp16", 100)))
    b[0] ^= 0xFF
    it = splitzip_kv.iter_frames(a + bytes(b) + a)
    assert next(it)["offset"] == 0  # the good frame before it is yielded
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        next(it)
    assert e.value.status == "BAD_MAGIC"
    assert f"frame 1 at offset {len(a)}" in str(e.value)
    with pytest.raises(StopIteration):  # the walk ends there
        next(it)
    # trailing bytes that are not a whole frame
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.frames(a + b"\0" * 10)
    assert e.value.status == "TRUNCATED"


def test_empty_stream_has_no_frames():
    """A stream of zero bytes is a valid stream of zero frames and decodes to
    zero bytes."""
    for empty in (b"", bytearray(), memoryview(b""), np.empty(0, np.uint8)):
        assert list(splitzip_kv.iter_frames(empty)) == []
        assert splitzip_kv.frames(empty) == []
        y = splitzip_kv.decompress(empty)
        assert y.shape == (0,) and y.dtype == np.uint8
    out = np.full(4, 7, np.uint8)
    res = splitzip_kv.decompress_into(b"", out)
    assert res.size == 0 and out.tolist() == [7, 7, 7, 7]
    assert splitzip_kv.decompress(b"", out=out) is out
    # The single-frame API needs a frame: a frame of 0 elements is not 0 bytes.
    assert len(splitzip_kv.compress(np.empty(0, DTYPES["bf16"]))) == 64


def to_v1(frame, original):
    """The format v1 frame equivalent to a one-frame v2 stream: XXH64 header
    check, no stream 7, XXH64 of all original bytes as the content checksum."""
    frame = bytearray(frame)
    h = format_decoder.parse_header(frame)
    size = h["frame_size"]
    if h["flags"] & 2:
        size -= format_decoder.align16(4 * splitzip_kv.frame_info(bytes(frame))["checksum_blocks"])
        del frame[size:]
        struct.pack_into("<Q", frame, 56, format_decoder.content_checksum(original, 1))
    struct.pack_into("<Q", frame, 24, size)
    frame[4] = 1
    frame[49:52] = b"\0\0\0"
    struct.pack_into("<I", frame, 52, format_decoder.header_check(frame, 1))
    return bytes(frame)


@pytest.mark.parametrize("checksum", [False, True])
def test_format_v1_frames_still_decode(checksum):
    x = kv_like("fp16", 70000, seed=3)
    v1 = to_v1(splitzip_kv.compress(x, checksum=checksum), x.tobytes())
    info = splitzip_kv.frame_info(v1)
    assert info["version"] == 1 and info["checksum"] == checksum
    assert info["checksum_block_size"] is None and info["checksum_blocks"] == 0
    np.testing.assert_array_equal(format_decoder.decode(v1), bits(x))
    np.testing.assert_array_equal(bits(splitzip_kv.decompress(v1)), bits(x))
    stream = v1 + splitzip_kv.compress(x, checksum=True) + v1
    assert [i["version"] for i in splitzip_kv.iter_frames(stream)] == [1, 2, 1]
    np.testing.assert_array_equal(bits(splitzip_kv.decompress(stream)), bits(np.concatenate([x, x, x])))
    if checksum:
        bad = bytearray(v1)
        bad[64 + 1000] ^= 1
        with pytest.raises(splitzip_kv.SplitzipError) as e:
            splitzip_kv.decompress(bad)
        assert e.value.status == "CHECKSUM_MISMATCH" and e.value.corrupt_block is None


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
