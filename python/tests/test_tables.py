# SPDX-License-Identifier: Apache-2.0
"""Capacity table sets from Python: calibrate(mode="capacity") -> TableSet,
its bytes/file round trip, compress(tables=) frames that name the set and
decode only with it (MISSING_TABLES with the id otherwise), the batch calls
with one set for every page, and the error cases."""

import pickle

import numpy as np
import pytest

import splitzip_kv as sz
from conftest import bits, kv_like, load_layer


@pytest.fixture(scope="module")
def kv():
    cal = [load_layer("layer00_k.bf16"), load_layer("layer01_k.bf16")]
    data = load_layer("layer03_k.bf16")
    return cal, data


@pytest.fixture(scope="module")
def tables(kv):
    return sz.calibrate(kv[0], mode="capacity")


def test_calibrate_capacity_returns_a_set(kv, tables):
    assert isinstance(tables, sz.TableSet)
    assert tables.dtype == "bf16"
    assert tables.table_count == 1  # the library default (docs/DESIGN.md 7a)
    assert 0 < tables.id < 2**64
    assert sz.calibrate(kv[0], mode="capacity").id == tables.id  # deterministic
    four = sz.calibrate(kv[0], mode="capacity", table_count=4)
    assert four.table_count == 4 and four.id != tables.id
    assert isinstance(sz.calibrate(kv[0]), sz.Codebook)  # the default is still the codebook
    assert "TableSet(id=0x" in repr(tables)


def test_bytes_file_and_pickle_round_trip(tables, tmp_path):
    b = tables.to_bytes()
    assert b[:4] == b"SZCT"
    back = sz.TableSet.from_bytes(b)
    assert back == tables and back.id == tables.id and hash(back) == hash(tables)
    assert sz.TableSet.from_bytes(bytearray(b)) == tables
    p = tmp_path / "k.szct"
    tables.save(p)
    assert p.read_bytes() == b
    assert sz.TableSet.load(p) == tables
    assert sz.TableSet.load(str(p)).id == tables.id
    assert pickle.loads(pickle.dumps(tables)) == tables


def test_corrupt_or_missing_set_files(tables, tmp_path):
    b = bytearray(tables.to_bytes())
    b[40] ^= 1
    with pytest.raises(sz.SplitzipError) as e:
        sz.TableSet.from_bytes(bytes(b))
    assert e.value.status == "HEADER_CORRUPT"
    with pytest.raises(sz.SplitzipError) as e:
        sz.TableSet.from_bytes(b"SZCB" + bytes(40))
    assert e.value.status == "BAD_MAGIC"
    with pytest.raises(sz.SplitzipError) as e:
        sz.TableSet.from_bytes(tables.to_bytes()[:10])
    assert e.value.status == "TRUNCATED"
    with pytest.raises(sz.SplitzipError) as e:
        sz.TableSet.load(tmp_path / "absent.szct")
    assert e.value.status == "IO_ERROR"


def test_frames_name_the_set_and_need_it(kv, tables):
    data = kv[1]
    frame = sz.compress(data, tables=tables)
    info = sz.frame_info(frame)
    assert info["mode"] == "capacity" and info["tables_id"] == tables.id and info["version"] == 3
    assert sz.frame_info(sz.compress(data, mode="capacity"))["tables_id"] is None
    back = sz.decompress(frame, tables=tables)
    assert back.shape == data.shape and np.array_equal(bits(back), bits(data))
    # several sets: the frame picks its own
    other = sz.calibrate(kv[0], mode="capacity", table_count=2)
    assert np.array_equal(bits(sz.decompress(frame, tables=[other, tables])), bits(data))
    out = np.empty_like(data)
    assert sz.decompress_into(frame, out, tables=(tables,)).size == data.nbytes
    assert np.array_equal(bits(out), bits(data))
    # not given: MISSING_TABLES naming the id, never wrong data
    for given in (None, other, [other]):
        with pytest.raises(sz.SplitzipError) as e:
            sz.decompress(frame, tables=given)
        assert e.value.status == "MISSING_TABLES" and e.value.code == 30
        assert f"{tables.id:016x}" in str(e.value) and "tables=" in str(e.value)


def test_batch_one_set_for_every_page(kv, tables):
    pages = kv[1].reshape(-1).view(np.uint16).reshape(-1, 16384).view(kv[1].dtype)  # 32 KiB pages
    frames = sz.compress_batch(pages, tables=tables)
    assert all(sz.frame_info(f)["tables_id"] == tables.id for f in frames)
    assert frames == [sz.compress(p, tables=tables) for p in pages]
    listed = sz.compress_batch(list(pages), tables=tables)
    assert listed == frames
    back = sz.decompress_batch(frames, tables=tables)
    assert all(np.array_equal(bits(a), bits(b)) for a, b in zip(back, pages))
    out = np.empty_like(pages)
    sz.decompress_batch(frames, out, tables=tables)
    assert np.array_equal(bits(out), bits(pages))
    with pytest.raises(sz.SplitzipError) as e:
        sz.decompress_batch(frames)
    assert e.value.status == "MISSING_TABLES" and "frame 0" in str(e.value)


def test_batch_a_set_per_page(kv, tables):
    """tables= a list: page i codes with its own set (the pages of every
    layer of a block, each with its layer's set), None = per-block tables;
    each frame is compress()'s with that set."""
    other = sz.calibrate([kv[0][1]], mode="capacity", table_count=4)
    assert other.id != tables.id
    pages = kv[1].reshape(-1).view(np.uint16).reshape(-1, 16384).view(kv[1].dtype)
    per = [(tables, other, None)[i % 3] for i in range(len(pages))]
    for arg in (pages, list(pages)):
        frames = sz.compress_batch(arg, tables=per)
        assert frames == [sz.compress(p, tables=t, mode="capacity") for p, t in zip(pages, per)]
        assert [sz.frame_info(f)["tables_id"] for f in frames[:3]] == [tables.id, other.id, None]
    back = sz.decompress_batch(frames, tables=[tables, other])
    assert all(np.array_equal(bits(a), bits(b)) for a, b in zip(back, pages))
    with pytest.raises(sz.SplitzipError) as e:  # one set short
        sz.compress_batch(pages, tables=per[:-1])
    assert e.value.status == "INVALID_ARGUMENT"
    with pytest.raises(sz.SplitzipError) as e:  # a set with the fast mode
        sz.compress_batch(pages, tables=per, mode="fast")
    assert e.value.status == "INVALID_ARGUMENT"
    fp16 = sz.calibrate([kv_like("fp16", 4096)], mode="capacity")
    with pytest.raises(sz.SplitzipError) as e:  # a set of another dtype names its page
        sz.compress_batch(pages, tables=[tables, fp16] + per[2:])
    assert e.value.status == "INVALID_ARGUMENT" and "page 1" in str(e.value) and "fp16" in str(e.value)
    with pytest.raises(TypeError):
        sz.compress_batch(pages, tables=[tables, 3] + per[2:])
    with pytest.raises(TypeError):
        sz.compress_batch(pages, tables="k.szct")


def test_argument_errors(kv, tables):
    data = kv[1]
    with pytest.raises(sz.SplitzipError) as e:
        sz.compress(data, mode="fast", tables=tables)
    assert e.value.status == "INVALID_ARGUMENT"
    with pytest.raises(sz.SplitzipError) as e:  # a bf16 set for fp16 data
        sz.compress(kv_like("fp16", 4096), tables=tables)
    assert e.value.status == "INVALID_ARGUMENT" and "bf16" in str(e.value)
    with pytest.raises(TypeError):
        sz.compress(data, tables=tables.to_bytes())
    with pytest.raises(TypeError):
        sz.decompress(sz.compress(data), tables="k.szct")
    with pytest.raises(TypeError):
        sz.decompress(sz.compress(data), tables=[tables, 3])
    with pytest.raises(sz.SplitzipError):
        sz.calibrate(kv[0], mode="capacity", table_count=3)
    with pytest.raises(sz.SplitzipError):
        sz.calibrate(kv[0], table_count=4)
    with pytest.raises(sz.SplitzipError):
        sz.calibrate(kv[0], mode="small")
    # Frames without a set ignore the sets given.
    assert np.array_equal(bits(sz.decompress(sz.compress(data), tables=tables)), bits(data))
