# SPDX-License-Identifier: Apache-2.0
"""Codebook: calibration rule, construction checks, .szcb files, pickling."""

import pickle

import numpy as np
import pytest

import splitzip_kv
from conftest import DTYPES, bits, kv_like, random_bits

EXPONENT = {  # (shift, mask) of the exponent field, FORMAT.md section 2
    "bf16": (7, 0xFF), "fp16": (10, 0x1F), "fp32": (23, 0xFF), "fp8_e5m2": (2, 0x1F)}


def numpy_calibrate(arrays, dtype):
    """FORMAT.md section 3, written independently: count desc, exponent asc, top 16."""
    shift, mask = EXPONENT[dtype]
    counts = np.zeros(256, np.int64)
    for a in arrays:
        counts += np.bincount(((bits(a).astype(np.uint64) >> shift) & mask).astype(np.int64),
                              minlength=256)
    order = sorted((e for e in range(256) if counts[e]), key=lambda e: (-counts[e], e))
    return order[:16]


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_calibration_rule(dtype):
    arrays = [kv_like(dtype, 3000, seed=s) for s in range(3)] + [random_bits(dtype, 500)]
    cb = splitzip_kv.calibrate(arrays)
    assert cb.dtype == dtype
    assert list(cb.entries) == numpy_calibrate(arrays, dtype)
    assert cb.count == len(cb.entries)


def test_calibrate_single_array_and_few_exponents():
    x = np.array([1.0, 2.0, 2.0, 4.0, 4.0, 4.0], np.float32)
    cb = splitzip_kv.calibrate(x)
    assert cb.entries == (129, 128, 127) and cb.count == 3


def test_calibrate_errors():
    with pytest.raises(splitzip_kv.SplitzipError, match="at least one"):
        splitzip_kv.calibrate([])
    with pytest.raises(splitzip_kv.SplitzipError, match="different dtypes"):
        splitzip_kv.calibrate([kv_like("bf16", 10), kv_like("fp8_e5m2", 10)])
    with pytest.raises(splitzip_kv.SplitzipError):
        splitzip_kv.calibrate([kv_like("bf16", 10), kv_like("fp16", 10)])


def test_calibrated_codebook_compresses_like_dynamic_on_its_own_data():
    x = kv_like("bf16", 10000)
    assert splitzip_kv.compress(x, codebook=splitzip_kv.calibrate(x)) == splitzip_kv.compress(x)


def test_foreign_codebook_round_trips_with_escapes():
    x = kv_like("bf16", 10000)
    cb = splitzip_kv.Codebook("bf16", [1, 2, 3])  # no real exponent is in it
    frame = splitzip_kv.compress(x, codebook=cb)
    info = splitzip_kv.frame_info(frame)
    assert info["stored"] or info["escape_count"] > 0
    np.testing.assert_array_equal(bits(splitzip_kv.decompress(frame)), bits(x))


def test_construction_checks():
    cb = splitzip_kv.Codebook("fp16", [15, 14, 16])
    assert cb.entries == (15, 14, 16) and cb.dtype == "fp16" and cb.count == 3
    assert repr(cb) == "Codebook(dtype='fp16', entries=[15, 14, 16])"
    for bad in ([], list(range(17)), [3, 3], [-1], [256]):
        with pytest.raises(splitzip_kv.SplitzipError) as e:
            splitzip_kv.Codebook("bf16", bad)
        assert e.value.status == "BAD_CODEBOOK"
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.Codebook("fp8_e5m2", [32])  # 5-bit exponent
    assert e.value.status == "BAD_CODEBOOK"
    with pytest.raises(splitzip_kv.SplitzipError):
        splitzip_kv.Codebook("int8", [1])


def test_save_load_and_bytes(tmp_path):
    cb = splitzip_kv.calibrate(kv_like("fp32", 5000))
    data = cb.to_bytes()
    assert len(data) == 32 and data[:4] == b"SZCB" and data[4] == 1 and data[5] == 3
    assert splitzip_kv.Codebook.from_bytes(data) == cb
    path = tmp_path / "cb.szcb"
    cb.save(path)
    assert path.read_bytes() == data
    assert splitzip_kv.Codebook.load(str(path)) == cb
    assert hash(splitzip_kv.Codebook.load(path)) == hash(cb)


def test_load_rejects_damaged_files(tmp_path):
    data = bytearray(splitzip_kv.calibrate(kv_like("bf16", 100)).to_bytes())
    data[10] ^= 1
    path = tmp_path / "bad.szcb"
    path.write_bytes(bytes(data))
    with pytest.raises(splitzip_kv.SplitzipError):
        splitzip_kv.Codebook.load(path)
    with pytest.raises(splitzip_kv.SplitzipError):
        splitzip_kv.Codebook.from_bytes(bytes(data[:20]))
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        splitzip_kv.Codebook.load(tmp_path / "missing.szcb")
    assert e.value.status == "IO_ERROR"


def test_pickle():
    cb = splitzip_kv.Codebook("bf16", [120, 121, 119])
    assert pickle.loads(pickle.dumps(cb)) == cb
    assert cb != splitzip_kv.Codebook("bf16", [121, 120, 119])
    assert cb != "not a codebook"
