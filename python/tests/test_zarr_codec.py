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


@pytest.mark.parametrize("mode", ["fast", "capacity"])
@pytest.mark.parametrize("np_type,name", [(ml_dtypes.bfloat16, "bfloat16"), (ml_dtypes.float8_e4m3fn, "float8_e4m3fn"),
                                          (ml_dtypes.float8_e5m2, "float8_e5m2")])
def test_ml_dtypes_as_zarr_data_types(np_type, name, mode):
    x = (np.random.default_rng(7).standard_normal((4, 8, 64)) * 4).astype(np.float32).astype(np_type)
    codec = SplitzipZarrCodec(mode=mode)
    store = zarr.storage.MemoryStore()
    a = zarr.create_array(store, shape=x.shape, chunks=(2, 8, 64), dtype=x.dtype, serializer=codec,
                          compressors=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a[...] = x
        b = zarr.open_array(store, mode="r")
        back = b[...]
    assert b.metadata.to_dict()["data_type"] == name
    assert back.dtype == np.dtype(np_type) and back.tobytes() == x.tobytes()


def test_zarr_data_type_entry_points():
    from importlib.metadata import entry_points
    names = {e.name: e.value for e in entry_points(group="zarr.data_type")}
    for n in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        assert names.get(n, "").startswith("splitzip_kv.numcodecs_codec:"), names


def test_calibrated_codebook_in_zarr_metadata(tmp_path):
    import json

    import splitzip_kv
    rng = np.random.default_rng(8)
    x = rng.standard_normal((8, 4096)).astype(ml_dtypes.bfloat16)
    cb = splitzip_kv.calibrate(x)
    path = tmp_path / "kv.szcb"
    cb.save(path)
    for given in (cb, str(path), {"dtype": "bf16", "entries": list(cb.entries)}):
        codec = SplitzipZarrCodec(codebook=given)
        assert codec.to_dict()["configuration"]["codebook"] == {"dtype": "bf16", "entries": list(cb.entries)}
    store = zarr.storage.LocalStore(tmp_path / "a.zarr")
    a = zarr.create_array(store, shape=x.shape, chunks=(2, 4096), dtype=x.dtype,
                          serializer=SplitzipZarrCodec(codebook=str(path)), compressors=None)
    a[...] = x
    path.unlink()  # the metadata embeds the table: no side file needed to read or write
    meta = json.loads((tmp_path / "a.zarr" / "zarr.json").read_text())
    assert meta["codecs"][0]["configuration"]["codebook"]["entries"] == list(cb.entries)
    b = zarr.open_array(zarr.storage.LocalStore(tmp_path / "a.zarr"), mode="r+")
    assert b[...].tobytes() == x.tobytes()
    b[0:2] = x[2:4]  # writes with the embedded table
    assert b[0:2].tobytes() == x[2:4].tobytes()
    # each chunk's frame uses the calibrated table, not its own top-16
    frame = (tmp_path / "a.zarr" / "c" / "1" / "0").read_bytes()
    assert splitzip_kv.frame_info(frame)["codebook"] == cb


def test_numcodecs_codebook_config():
    import splitzip_kv
    x = np.random.default_rng(9).standard_normal(50000).astype(ml_dtypes.bfloat16)
    cb = splitzip_kv.calibrate(x)
    codec = numcodecs.get_codec({"id": "splitzip", "codebook": {"dtype": "bf16", "entries": list(cb.entries)}})
    assert numcodecs.get_codec(codec.get_config()) == codec
    assert codec.decode(codec.encode(x)).tobytes() == x.tobytes()
    with pytest.raises(ValueError, match="mode='fast'"):
        SplitzipCodec(mode="capacity", codebook=cb)
    with pytest.raises(ValueError, match="dtype"):
        SplitzipCodec(codebook={"entries": [127]})


def test_table_set_file_in_codec_config(tmp_path):
    import json

    import splitzip_kv
    rng = np.random.default_rng(10)
    cal = rng.standard_normal((8, 4096)).astype(ml_dtypes.bfloat16)
    x = rng.standard_normal((8, 4096)).astype(ml_dtypes.bfloat16)
    ts = splitzip_kv.calibrate(cal, mode="capacity")
    path = tmp_path / "kv.szct"
    ts.save(path)
    codec = numcodecs.get_codec({"id": "splitzip", "mode": "capacity", "tables": str(path)})
    assert codec.get_config()["tables"] == str(path)
    assert numcodecs.get_codec(codec.get_config()).tables == str(path)
    frame = codec.encode(x)
    assert splitzip_kv.frame_info(frame)["tables_id"] == ts.id
    assert codec.decode(frame).tobytes() == x.tobytes()
    with pytest.raises(splitzip_kv.SplitzipError, match="MISSING_TABLES"):
        SplitzipCodec(mode="capacity").decode(frame)
    with pytest.raises(ValueError, match="mode='capacity'"):
        SplitzipCodec(tables=str(path))
    with pytest.raises(TypeError, match="path"):
        SplitzipCodec(mode="capacity", tables=ts)
    store = zarr.storage.LocalStore(tmp_path / "a.zarr")
    a = zarr.create_array(store, shape=x.shape, chunks=(2, 4096), dtype=x.dtype,
                          serializer=SplitzipZarrCodec(mode="capacity", tables=path), compressors=None)
    a[...] = x
    meta = json.loads((tmp_path / "a.zarr" / "zarr.json").read_text())
    assert meta["codecs"][0]["configuration"]["tables"] == str(path)
    b = zarr.open_array(zarr.storage.LocalStore(tmp_path / "a.zarr"), mode="r")
    assert b[...].tobytes() == x.tobytes()
