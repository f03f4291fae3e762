# SPDX-License-Identifier: Apache-2.0
"""The bundled real KV sample (data/kv/stories260k): round trips, ratios, calibration."""

import hashlib

import numpy as np
import pytest

import splitzip_kv
from conftest import DATA_DIR, DTYPES, bits, load_layer, manifest
import format_decoder


def test_bundled_files_match_manifest():
    for entry in manifest()["files"]:
        data = (DATA_DIR / entry["name"]).read_bytes()
        assert len(data) == entry["bytes"]
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]


def test_every_layer_round_trips_and_compresses(real_layers):
    for name, layer in real_layers.items():
        frame = splitzip_kv.compress(layer, checksum=True)
        info = splitzip_kv.frame_info(frame)
        assert info["n_elems"] == layer.size and not info["stored"], name
        # bf16 codes to 8 residual bits + a 4-bit code: 0.75 of the input plus escapes.
        assert len(frame) < 0.76 * layer.nbytes, (name, len(frame) / layer.nbytes)
        assert info["content_checksum"] == format_decoder.content_checksum(layer.tobytes())
        assert info["checksum_blocks"] == -(-layer.nbytes // 65536)
        np.testing.assert_array_equal(bits(splitzip_kv.decompress(frame)), bits(layer))


def test_calibrated_codebook_on_real_layers(real_layers, tmp_path):
    keys = [v for k, v in real_layers.items() if k.endswith("_k.bf16")]
    cb = splitzip_kv.calibrate(keys)
    assert cb.dtype == "bf16" and cb.count == 16
    path = tmp_path / "keys.szcb"
    cb.save(path)
    cb2 = splitzip_kv.Codebook.load(path)
    assert cb2 == cb
    for layer in keys:
        frame = splitzip_kv.compress(layer, codebook=cb2)
        assert splitzip_kv.frame_info(frame)["codebook"] == cb
        np.testing.assert_array_equal(bits(splitzip_kv.decompress(frame)), bits(layer))


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "fp8_e5m2", "bf16"])
def test_f32_source_in_every_dtype(dtype):
    """layer02 float32 values, converted to each dtype (fp8/fp16 saturate to inf)."""
    src = load_layer("layer02_k.f32")
    with np.errstate(over="ignore"):
        x = src.astype(DTYPES[dtype])
    y = splitzip_kv.decompress(splitzip_kv.compress(x))
    np.testing.assert_array_equal(bits(y), bits(x))
    if dtype == "bf16":
        # The README: the .bf16 files are this float32 data rounded to bf16.
        np.testing.assert_array_equal(bits(y), bits(load_layer("layer02_k.bf16")))
