# SPDX-License-Identifier: Apache-2.0
"""Tensor files from Python (issue 31): python -m splitzip_kv, save_file /
load_file / restore, and round trips with the `splitzip` CLI both ways."""

import os
import shutil
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import splitzip_kv
import splitzip_kv._cli

# The wheel's own CLI binary (the `splitzip` command runs it too).
_BUNDLED = splitzip_kv._cli.executable()
CLI = _BUNDLED if os.access(_BUNDLED, os.X_OK) else shutil.which("splitzip")
need_cli = pytest.mark.skipif(CLI is None, reason="no splitzip CLI in the wheel or on PATH")
MODES = ["fast", "capacity"]


def _tensors(mode="fast"):
    rng = np.random.default_rng(31)
    base = rng.standard_normal((64, 33)).astype(np.float32)
    t = {
        "a.bf16": base.astype(ml_dtypes.bfloat16),
        "b.fp16": base.astype(np.float16),
        "c.fp32": base,
        "d.e5m2": base.astype(ml_dtypes.float8_e5m2),
        "e.e4m3": base.astype(ml_dtypes.float8_e4m3fn),
        "f.i32": np.arange(100, dtype=np.int32).reshape(10, 10),
        "g.scalar": np.array(1.5, dtype=np.float32),
    }
    if mode == "capacity":
        # fp8_e4m3 frames are mode 0 only (FORMAT.md 4.7): the CLI refuses a
        # capacity-mode file holding one.
        del t["e.e4m3"]
    return t


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def test_python_m_runs_the_cli():
    out = subprocess.run([sys.executable, "-m", "splitzip_kv", "-V"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("splitzip " + splitzip_kv.__version__)


@need_cli
@pytest.mark.parametrize("mode", MODES)
def test_save_file_then_cli_decompress(tmp_path, mode):
    t = _tensors(mode)
    sz = tmp_path / "m.safetensors.sz"
    splitzip_kv.save_file(t, sz, mode=mode)
    subprocess.run([CLI, "decompress", "-o", str(tmp_path / "m.safetensors"), str(sz)], check=True)
    assert (tmp_path / "m.safetensors").read_bytes() == splitzip_kv.safetensors_bytes(t)
    assert mode in {f["mode"] for f in splitzip_kv.frames(sz.read_bytes()) if not f["stored"]}
    back = splitzip_kv.load_file(sz)
    assert sorted(back) == sorted(t)
    for k in t:
        _same(back[k], t[k])


@need_cli
@pytest.mark.parametrize("mode", MODES)
def test_cli_compress_then_load_file(tmp_path, mode):
    t = _tensors(mode)
    st = tmp_path / "m.safetensors"
    st.write_bytes(splitzip_kv.safetensors_bytes(t, metadata={"format": "pt"}))
    subprocess.run([CLI, "compress", "--mode", mode, str(st)], check=True)
    sz = tmp_path / "m.safetensors.sz"
    assert splitzip_kv.restore(sz) == st.read_bytes()
    assert splitzip_kv.restore(sz.read_bytes()) == st.read_bytes()
    back = splitzip_kv.load_file(str(sz))
    for k in t:
        _same(back[k], t[k])


@need_cli
@pytest.mark.parametrize("dtype", [np.float16, np.float32, ml_dtypes.bfloat16])
def test_npy_restore(tmp_path, dtype):
    arr = np.random.default_rng(1).standard_normal((7, 300)).astype(dtype)
    p = tmp_path / "k.npy"
    np.save(p, arr)
    subprocess.run([CLI, "compress", str(p)], check=True)
    assert splitzip_kv.restore(tmp_path / "k.npy.sz") == p.read_bytes()
    _same(splitzip_kv.load_file(tmp_path / "k.npy.sz")[""], arr)


def test_load_file_torch(tmp_path):
    torch = pytest.importorskip("torch", reason="torch is not installed in this venv (optional dependency)")
    if CLI is None:
        pytest.skip("no splitzip CLI in the wheel or on PATH")
    t = _tensors()
    sz = tmp_path / "m.safetensors.sz"
    splitzip_kv.save_file(t, sz)
    back = splitzip_kv.load_file(sz, framework="pt")
    assert back["a.bf16"].dtype == torch.bfloat16
    assert back["c.fp32"].numpy().tobytes() == t["c.fp32"].tobytes()
    assert back["a.bf16"].view(torch.int16).numpy().tobytes() == t["a.bf16"].tobytes()
    # torch tensors in, the same file out
    sz2 = tmp_path / "m2.safetensors.sz"
    splitzip_kv.save_file(back, sz2)
    assert splitzip_kv.restore(sz2) == splitzip_kv.safetensors_bytes(t)


def test_bad_framework_and_mode(tmp_path):
    with pytest.raises(ValueError):
        splitzip_kv.save_file({}, tmp_path / "x.sz", mode="max")
