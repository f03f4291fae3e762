# SPDX-License-Identifier: Apache-2.0
"""LMCache serde plugin discovery (issue 31): a fresh process that imports
LMCache's serde factory finds "splitzip" without calling register().

Without the real `lmcache` package, a stand-in package on disk re-exports the
interface copy of tests/offload/lmcache_interface.py under LMCache's module
names, imported through the normal import system (as a vLLM worker would)."""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
IFACE = ROOT / "tests" / "offload"

CHECK = r"""
import sys
import lmcache.v1.distributed.serde.factory as f
types = f.get_registered_serde_types()
assert "splitzip" in types, types
from lmcache.v1.distributed.serde.base import SerdeConfig
proc = f.create_serde_processor(SerdeConfig(type="splitzip", kwargs={"mode": "capacity"}))
print("found", type(proc).__name__)
"""


def _have_real_lmcache():
    r = subprocess.run([sys.executable, "-c", "import lmcache"], capture_output=True)
    return r.returncode == 0


def _fake_lmcache(root):
    names = ["lmcache", "lmcache/v1", "lmcache/v1/distributed", "lmcache/v1/distributed/serde"]
    for n in names:
        (root / n).mkdir(parents=True, exist_ok=True)
        (root / n / "__init__.py").write_text("from lmcache_interface import *  # noqa: F401,F403\n")
    for mod in ["v1/distributed/api", "v1/distributed/serde/base", "v1/distributed/serde/factory",
                "v1/distributed/serde/async_processor"]:
        (root / "lmcache" / (mod + ".py")).write_text("from lmcache_interface import *  # noqa: F401,F403\n")


def _run(tmp_path, env_extra):
    env = dict(os.environ, **env_extra)
    if not _have_real_lmcache():
        _fake_lmcache(tmp_path)
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(IFACE)])
    return subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, env=env,
                          cwd=str(tmp_path))


def test_fresh_process_finds_the_plugin(tmp_path):
    r = _run(tmp_path, {})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "found" in r.stdout


def test_entry_point_is_declared():
    from importlib.metadata import entry_points
    eps = entry_points(group="lmcache.serde") if sys.version_info >= (3, 10) \
        else entry_points().get("lmcache.serde", [])
    names = {ep.name: ep.value for ep in eps}
    assert names.get("splitzip") == "splitzip_kv.offload.lmcache_serde:make_processor"


def test_autoregister_can_be_turned_off(tmp_path):
    r = _run(tmp_path, {"SPLITZIP_LMCACHE_AUTOREGISTER": "0"})
    assert r.returncode != 0 and "AssertionError" in r.stderr
