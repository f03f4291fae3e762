# SPDX-License-Identifier: Apache-2.0
"""The Zarr 3 / numcodecs codec (issue 31): mode=, a public Zarr base class,
registration by entry point, and no warning per array."""

import warnings

import ml_dtypes
import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")
from splitzip_kv.numcodecs_codec import SplitzipCodec, SplitzipZarrCodec  # noqa: E402


def test_public_base_class():
    from zarr.abc.codec import ArrayBytesCodec
    assert SplitzipZarrCodec is not None and issubclass(SplitzipZarrCodec, ArrayBytesCodec)
    assert not any(c.__module__.startswith("zarr.codecs.numcodecs") for c in SplitzipZarrCodec.__mro__)


@pytest.mark.parametrize("mode", ["fast", "capacity"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "bf16"])
def test_zarr_array_mode_no_warning(mode, dtype):
    x = np.random.default_rng(5).standard_normal((4, 8, 64)).astype(np.float32)
    if dtype == "bf16":  # Zarr 3 has no bfloat16 data type: uint16 storage
        data = x.astype(ml_dtypes.bfloat16).view(np.uint16)
        codec = SplitzipZarrCodec(mode=mode, dtype="bf16", view="uint16")
    else:
        data = x.astype(dtype)
        codec = SplitzipZarrCodec(mode=mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store = zarr.storage.MemoryStore()
        a = zarr.create_array(store, shape=data.shape, chunks=(2, 8, 64), dtype=data.dtype,
                              serializer=codec, compressors=None)
        a[...] = data
        b = zarr.open_array(store, mode="r")  # codec found by name through the entry point
        back = b[...]
    assert back.dtype == data.dtype and back.tobytes() == data.tobytes()
    assert b.metadata.to_dict()["codecs"][0] == {"name": "splitzip", "configuration": codec.codec_config}


def test_old_name_reads():
    c = SplitzipZarrCodec.from_dict({"name": "numcodecs.splitzip", "configuration": {"id": "splitzip"}})
    assert c.to_dict()["name"] == "splitzip"
    from zarr.registry import get_codec_class
    assert get_codec_class("splitzip") is SplitzipZarrCodec
    assert get_codec_class("numcodecs.splitzip") is SplitzipZarrCodec


def test_numcodecs_mode():
    x = np.random.default_rng(6).standard_normal(50000).astype(ml_dtypes.bfloat16)
    fast = numcodecs.get_codec({"id": "splitzip"})
    cap = numcodecs.get_codec({"id": "splitzip", "mode": "capacity"})
    assert cap.get_config()["mode"] == "capacity" and numcodecs.get_codec(cap.get_config()) == cap
    f1, f2 = fast.encode(x), cap.encode(x)
    assert len(f2) < len(f1)
    for codec, f in ((fast, f1), (cap, f2)):
        assert codec.decode(f).tobytes() == x.tobytes()
    with pytest.raises(ValueError, match="mode"):
        SplitzipCodec(mode="max")
