# SPDX-License-Identifier: Apache-2.0
"""Every failure is a SplitzipError (a ValueError) carrying the library Status."""

import struct

import numpy as np
import pytest

import splitzip_kv
from conftest import DTYPES, kv_like


@pytest.fixture
def frame():
    return bytearray(splitzip_kv.compress(kv_like("bf16", 4000), checksum=True))


def status_of(call):
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        call()
    assert isinstance(e.value, ValueError)
    assert str(e.value).startswith(e.value.status + ": ")
    assert isinstance(e.value.code, int) and e.value.code > 0
    return e.value.status


def test_truncated(frame):
    assert status_of(lambda: splitzip_kv.decompress(bytes(frame[:40]))) == "TRUNCATED"
    assert status_of(lambda: splitzip_kv.decompress(bytes(frame[:-16]))) == "TRUNCATED"
    # (0 bytes are a valid stream of no frames: test_frames.py)


def test_trailing_bytes_are_an_error(frame):
    assert status_of(lambda: splitzip_kv.decompress(bytes(frame) + b"\x00" * 16)) == "TRUNCATED"


def test_bad_magic(frame):
    frame[0] ^= 0xFF
    assert status_of(lambda: splitzip_kv.decompress(frame)) == "BAD_MAGIC"
    assert status_of(lambda: splitzip_kv.frame_info(frame)) == "BAD_MAGIC"


def test_unsupported_version(frame):
    for version in (0, 4, 255):  # 3 is supported (FORMAT.md 12)
        frame[4] = version
        assert status_of(lambda: splitzip_kv.decompress(frame)) == "UNSUPPORTED_VERSION"


def test_header_corrupt(frame):
    frame[9] ^= 0x01  # inside n_elems, header_check no longer matches
    assert status_of(lambda: splitzip_kv.decompress(frame)) == "HEADER_CORRUPT"


def test_payload_corruption_is_caught_by_the_checksum(frame):
    frame[64] ^= 0x01  # first residual byte: any value is well-formed
    assert status_of(lambda: splitzip_kv.decompress(frame)) == "CHECKSUM_MISMATCH"
    # Opting out of verification decodes the (wrong) values.
    y = splitzip_kv.decompress(frame, verify_checksum=False)
    assert y.size == 4000


def test_checksum_mismatch_names_the_corrupt_block():
    # 200000 bf16 values = 400000 bytes = 7 checksum blocks of 65536 bytes.
    x = kv_like("bf16", 200000, seed=2)
    frame = splitzip_kv.compress(x, checksum=True)
    info = splitzip_kv.frame_info(frame)
    assert not info["stored"] and info["checksum_blocks"] == 7
    for value, block in ((0, 0), (70000, 2), (199999, 6)):
        bad = bytearray(frame)
        bad[64 + value] ^= 0x01  # residual byte of that value: original bytes 2*value..2*value+1
        with pytest.raises(splitzip_kv.SplitzipError) as e:
            splitzip_kv.decompress(bad)
        assert e.value.status == "CHECKSUM_MISMATCH"
        assert e.value.corrupt_block == block
        assert f"checksum block {block}" in str(e.value)
        lo = block * info["checksum_block_size"]
        assert lo <= 2 * value < lo + info["checksum_block_size"]
    # Two corrupt blocks: the first one is named.
    bad = bytearray(frame)
    bad[64 + 150000] ^= 0x01
    bad[64 + 40000] ^= 0x01
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.decompress_into(bad, np.empty_like(x))
    assert e.value.corrupt_block == 1
    # In a stream, the block is counted within the failing frame.
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.decompress(frame + bytes(bad))
    assert e.value.corrupt_block == 1
    # A corrupt block check (stream 7) itself
    bad = bytearray(frame)
    checks = len(frame) - 32  # stream 7 ends the frame: 7 checks, 28 bytes + 4 of padding
    bad[checks + 4 * 2] ^= 0x80
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.decompress(bad)
    assert e.value.status == "CHECKSUM_MISMATCH" and e.value.corrupt_block == 2
    # Other errors carry none.
    bad = bytearray(frame)
    bad[0] ^= 0xFF
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.decompress(bad)
    assert e.value.corrupt_block is None


def test_limit_exceeded(frame):
    assert status_of(lambda: splitzip_kv.decompress(frame, max_output_bytes=1000)) == "LIMIT_EXCEEDED"
    assert splitzip_kv.decompress(frame, max_output_bytes=8000).size == 4000


def test_unknown_backend():
    x = kv_like("bf16", 100)
    assert status_of(lambda: splitzip_kv.compress(x, backend="no-such-backend")) == "UNKNOWN_BACKEND"
    frame = splitzip_kv.compress(x)
    assert status_of(lambda: splitzip_kv.decompress(frame, backend="no-such-backend")) == \
        "UNKNOWN_BACKEND"


def test_every_registered_backend_can_be_forced():
    x = kv_like("fp16", 20000)
    reference = splitzip_kv.compress(x, backend="reference")
    for name, available in splitzip_kv.backends().items():
        if not available:
            assert status_of(lambda: splitzip_kv.compress(x, backend=name)) == "BACKEND_UNAVAILABLE"
            continue
        frame = splitzip_kv.compress(x, backend=name)
        assert frame == reference, name
        res = splitzip_kv.decompress_into(frame, np.empty_like(x), backend=name)
        assert res.backend == name


def test_environment_forces_a_backend(monkeypatch):
    x = kv_like("bf16", 100)
    monkeypatch.setenv("SPLITZIP_BACKEND", "no-such-backend")
    assert status_of(lambda: splitzip_kv.compress(x)) == "UNKNOWN_BACKEND"
    monkeypatch.setenv("SPLITZIP_BACKEND", "reference")
    res = splitzip_kv.compress_into(x, bytearray(splitzip_kv.compress_bound("bf16", 100)))
    assert res.backend == "reference"


def test_bad_arguments():
    x = kv_like("bf16", 100)
    assert status_of(lambda: splitzip_kv.compress(x, chunk_log2=5)) == "BAD_CHUNK_SIZE"
    assert status_of(lambda: splitzip_kv.compress(x, chunk_log2=16)) == "BAD_CHUNK_SIZE"
    assert status_of(lambda: splitzip_kv.compress(x, dtype="fp16")) == "INVALID_ARGUMENT"
    assert status_of(lambda: splitzip_kv.compress(x, dtype="int4")) == "INVALID_ARGUMENT"
    assert status_of(lambda: splitzip_kv.compress(np.zeros(4, np.float64))) == "INVALID_ARGUMENT"
    assert status_of(lambda: splitzip_kv.compress(np.zeros(4, np.int16))) == "INVALID_ARGUMENT"
    fp16_cb = splitzip_kv.calibrate(kv_like("fp16", 100))
    assert status_of(lambda: splitzip_kv.compress(x, codebook=fp16_cb)) == "INVALID_ARGUMENT"
    with pytest.raises(TypeError):
        splitzip_kv.compress(x, codebook=[1, 2, 3])


def test_bad_codebook_in_a_frame(frame):
    # Duplicate the first codebook entry, then re-seal the header check so
    # that rule 9 (not rule 4) is the first to fail.
    frame[33] = frame[32]
    frame[52:56] = b"\x00" * 4
    check = splitzip_kv.xxh3_64(bytes(frame[:64])) & 0xFFFFFFFF  # format v2
    frame[52:56] = struct.pack("<I", check)
    assert status_of(lambda: splitzip_kv.decompress(frame)) == "BAD_CODEBOOK"


def test_overlapping_buffers_are_refused():
    buf = np.zeros(10000, np.uint8)
    x = kv_like("bf16", 1000)
    buf[:2000] = x.view(np.uint8)
    src = buf[:2000].view(x.dtype)
    assert status_of(lambda: splitzip_kv.compress_into(src, buf[1000:])) == "INVALID_ARGUMENT"
    frame = splitzip_kv.compress(x)
    buf[:len(frame)] = np.frombuffer(frame, np.uint8)
    assert status_of(lambda: splitzip_kv.decompress(buf[:len(frame)], out=buf[100:2100])) == \
        "INVALID_ARGUMENT"


def test_error_pickles_with_its_status():
    import pickle

    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.decompress(b"x" * 64)
    again = pickle.loads(pickle.dumps(e.value))
    assert (again.status, again.code, str(again)) == (e.value.status, e.value.code, str(e.value))
    assert again.corrupt_block is None
    bad = bytearray(splitzip_kv.compress(kv_like("bf16", 100000), checksum=True))
    bad[64 + 90000] ^= 1  # block 2
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.decompress(bad)
    again = pickle.loads(pickle.dumps(e.value))
    assert (again.status, again.corrupt_block) == ("CHECKSUM_MISMATCH", 2)


@pytest.mark.parametrize("dtype", ["bf16", "fp16", "fp32", "fp8_e5m2"])
def test_every_single_bit_flip_is_rejected(dtype):
    """With a checksum, no corrupted frame decodes: each flip gets a status."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal(1000).astype(np.float32)
    x[::20] *= np.float32(2.0) ** rng.integers(-12, 12, 50)  # exponents past the top 16
    with np.errstate(over="ignore"):
        x = x.astype(DTYPES[dtype])
    frame = splitzip_kv.compress(x, checksum=True, chunk_log2=6)
    info = splitzip_kv.frame_info(frame)
    assert not info["stored"] and info["escape_count"] > 0
    seen = set()
    for i in range(len(frame)):
        for bit in range(8):
            bad = bytearray(frame)
            bad[i] ^= 1 << bit
            with pytest.raises(splitzip_kv.SplitzipError) as e:
                splitzip_kv.decompress(bad)
            seen.add(e.value.status)
    assert {"HEADER_CORRUPT", "CHECKSUM_MISMATCH", "BAD_PADDING"} <= seen, seen


def test_every_truncation_is_rejected():
    frame = splitzip_kv.compress(kv_like("bf16", 200), checksum=True)
    # (n = 0 is the empty stream, which decodes to nothing)
    for n in range(1, len(frame)):
        assert status_of(lambda: splitzip_kv.decompress(frame[:n])) == "TRUNCATED"


# Integer arguments out of range (negative, past 64 bits) on every entry point
# that takes one: a SplitzipError that names the argument, never nanobind's
# bare TypeError, and never accepted (max_output_bytes=-1 once was, by
# decompress_batch).
@pytest.mark.parametrize("bad", [-1, 2**64, 2**70])
def test_out_of_range_integers_name_the_argument(frame, bad):
    f = bytes(frame)
    x = kv_like("bf16", 100)
    calls = {
        "max_output_bytes": [lambda: splitzip_kv.decompress(f, max_output_bytes=bad),
                             lambda: splitzip_kv.decompress_batch([f], max_output_bytes=bad),
                             lambda: splitzip_kv.decompress_into(f, np.empty(4000, np.uint16),
                                                                 max_output_bytes=bad)],
        "threads": [lambda: splitzip_kv.decompress(f, threads=bad),
                    lambda: splitzip_kv.decompress_batch([f], threads=bad),
                    lambda: splitzip_kv.compress(x, threads=bad),
                    lambda: splitzip_kv.compress_batch([x], threads=bad)],
        "chunk_log2": [lambda: splitzip_kv.compress(x, chunk_log2=bad)],
        "offset": [lambda: splitzip_kv.frame_info(f, bad), lambda: splitzip_kv.tensor_desc(f, bad)],
        "n": [lambda: splitzip_kv.compress_bound("bf16", bad)],
        "seed": [lambda: splitzip_kv.xxh64(b"abc", seed=bad)],
        "entries": [lambda: splitzip_kv.Codebook("bf16", [bad])],
    }
    for name, fns in calls.items():
        for call in fns:
            with pytest.raises(splitzip_kv.SplitzipError, match=name):
                call()


def test_source_tree_import_says_the_extension_is_not_built(tmp_path):
    # python/ of the source tree on sys.path, without the compiled extension:
    # one clear message, not Python's "partially initialized module ...
    # circular import".
    import pathlib
    import shutil
    import subprocess
    import sys
    pkg = pathlib.Path(splitzip_kv.__file__).parent
    dst = tmp_path / "splitzip_kv"
    shutil.copytree(pkg, dst, ignore=shutil.ignore_patterns("_core*", "__pycache__"))
    r = subprocess.run([sys.executable, "-c", "import splitzip_kv"], cwd=tmp_path,
                       env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "the extension is not built: pip install ./python" in r.stderr
    assert "circular import" not in r.stderr
