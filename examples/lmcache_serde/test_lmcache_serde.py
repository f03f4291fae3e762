# SPDX-License-Identifier: Apache-2.0
"""The LMCache-style serde on the bundled real KV sample (data/kv/stories260k)."""

import pathlib

import ml_dtypes
import numpy as np
import pytest

import splitzip_kv
import splitzip_serde as serde

DATA = pathlib.Path(__file__).resolve().parents[2] / "data" / "kv" / "stories260k"


def real_kv_chunk(layers=5, dtype="bf16"):
    """[layers, 2, tokens, heads, head_dim] from the bundled files: the 16x512
    (sequence, position) grid becomes 8192 tokens, 4 KV heads of 8 dims."""
    halves = []
    for layer in range(layers):
        for kv in "kv":
            raw = np.fromfile(DATA / f"layer{layer:02d}_{kv}.bf16", dtype=np.uint16)
            assert raw.size == 16 * 512 * 4 * 8
            halves.append(raw.view(ml_dtypes.bfloat16).reshape(16 * 512, 4, 8))
    chunk = np.stack(halves).reshape(layers, 2, 16 * 512, 4, 8)
    if dtype != "bf16":
        chunk = chunk.astype(serde._NUMPY[dtype])
    return chunk


def raw(a):
    return a.reshape(-1).view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.itemsize])


@pytest.fixture(scope="module")
def chunk():
    return real_kv_chunk()


def test_round_trip_real_chunk(chunk):
    layout = serde.KVLayout.of(chunk)
    assert layout == serde.KVLayout(5, 8192, 4, 8, "bf16")
    bound = serde.estimate_serialized_size(layout)
    dst = bytearray(bound)
    written = serde.serialize(chunk, dst)
    assert 0 < written <= bound
    # One bf16 frame per layer K/V codes to ~0.75 of the input on this data.
    assert written < 0.76 * chunk.nbytes, written / chunk.nbytes
    out = np.empty_like(chunk)
    assert serde.deserialize(dst, out) == chunk.nbytes
    np.testing.assert_array_equal(raw(out), raw(chunk))


def test_container_is_frames_back_to_back(chunk):
    dst = np.zeros(serde.estimate_serialized_size(serde.KVLayout.of(chunk)), np.uint8)
    written = serde.serialize(chunk, dst)
    layout, offsets, total = serde.read_header(dst)
    assert total == written and len(offsets) == 11
    payload = dst[offsets[0]:written]
    infos = splitzip_kv.frames(payload)
    assert len(infos) == 10
    assert all(i["n_elems"] == 8192 * 4 * 8 and i["checksum"] for i in infos)
    # The payload alone is a valid splitzip stream: all layers K/V in order.
    np.testing.assert_array_equal(raw(splitzip_kv.decompress(payload)), raw(chunk))


def test_single_layer_decode(chunk):
    dst = bytearray(serde.estimate_serialized_size(serde.KVLayout.of(chunk)))
    serde.serialize(chunk, dst)
    out = np.zeros_like(chunk)
    serde.deserialize(dst, out, layers=[3])
    np.testing.assert_array_equal(raw(out[3]), raw(chunk[3]))
    assert not raw(out[:3]).any() and not raw(out[4:]).any()


@pytest.mark.parametrize("dtype", ["fp16", "fp32", "fp8_e5m2"])
def test_other_dtypes(dtype):
    with np.errstate(over="ignore"):
        chunk = real_kv_chunk(layers=2, dtype=dtype)
    dst = bytearray(serde.estimate_serialized_size(serde.KVLayout.of(chunk)))
    serde.serialize(chunk, dst)
    out = np.empty_like(chunk)
    serde.deserialize(dst, out)
    np.testing.assert_array_equal(raw(out), raw(chunk))


def test_calibrated_codebook(chunk):
    cb = splitzip_kv.calibrate([chunk[:, 0]])  # keys only: one codebook for K
    dst = bytearray(serde.estimate_serialized_size(serde.KVLayout.of(chunk)))
    written = serde.serialize(chunk, dst, codebook=cb)
    out = np.empty_like(chunk)
    serde.deserialize(dst[:written], out)
    np.testing.assert_array_equal(raw(out), raw(chunk))


def test_estimate_is_an_upper_bound_for_incompressible_data():
    rng = np.random.default_rng(0)
    noise = rng.integers(0, 1 << 16, (3, 2, 100, 2, 8), dtype=np.uint16).view(ml_dtypes.bfloat16)
    layout = serde.KVLayout.of(noise)
    bound = serde.estimate_serialized_size(layout)
    dst = bytearray(bound)
    assert serde.serialize(noise, dst) == bound  # every frame falls back to stored
    out = np.empty_like(noise)
    serde.deserialize(dst, out)
    np.testing.assert_array_equal(raw(out), raw(noise))


def test_errors(chunk):
    small = chunk[:2]
    layout = serde.KVLayout.of(small)
    with pytest.raises(serde.SerdeError, match="needs up to"):
        serde.serialize(small, bytearray(100))
    with pytest.raises(serde.SerdeError, match=r"\[layers, 2"):
        serde.serialize(np.zeros((2, 3, 4, 5, 6), np.float32), bytearray(10 ** 6))
    dst = bytearray(serde.estimate_serialized_size(layout))
    n = serde.serialize(small, dst)
    with pytest.raises(serde.SerdeError, match="layout"):
        serde.deserialize(dst, np.empty_like(chunk))
    with pytest.raises(serde.SerdeError, match="layout"):
        serde.deserialize(dst, np.empty(small.shape, np.float16))
    bad = bytearray(dst)
    bad[0] ^= 1
    with pytest.raises(serde.SerdeError, match="magic"):
        serde.deserialize(bad, np.empty_like(small))
    with pytest.raises(serde.SerdeError, match="payload"):
        serde.deserialize(dst[:n - 1], np.empty_like(small))
    bad = bytearray(dst)
    bad[serde._header_size(layout) + 100] ^= 0x10  # inside the first frame's residuals
    with pytest.raises(splitzip_kv.SplitzipError) as e:
        serde.deserialize(bad, np.empty_like(small))
    assert e.value.status == "CHECKSUM_MISMATCH"
    with pytest.raises(serde.SerdeError, match="contiguous"):
        serde.deserialize(dst, np.empty((2, 2, 8192, 8, 4), ml_dtypes.bfloat16).transpose(0, 1, 2, 4, 3))


def test_torch_tensors(chunk):
    torch = pytest.importorskip("torch", reason="torch is not installed (optional)")
    t = torch.from_numpy(raw(chunk).view(np.int16).reshape(chunk.shape)).view(torch.bfloat16)
    dst = torch.empty(serde.estimate_serialized_size(serde.KVLayout.of(t)), dtype=torch.uint8)
    written = serde.serialize(t, dst)
    out = torch.empty_like(t)
    serde.deserialize(dst[:written], out)
    assert torch.equal(out.view(torch.int16), t.view(torch.int16))
