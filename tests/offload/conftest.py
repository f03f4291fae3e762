# SPDX-License-Identifier: Apache-2.0
"""Fixtures for the offload tests: the bundled real KV as a paged cache, and a
real Mooncake Store deployment (master + 2 store clients) on loopback,
started by scripts/offload_cluster.sh. If the cluster cannot start, the
tests that need it fail (they are not skipped)."""

import os
import pathlib
import sys

import ml_dtypes
import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "kv" / "stories260k"
# The cluster handle is shared with the engine tests (another venv and rootdir).
sys.path.insert(0, str(ROOT / "scripts"))
from offload_cluster import Cluster  # noqa: E402


def real_pages(block_tokens=128, layers=5):
    """The bundled [16 seq, 512 pos, 4 heads, 8 dim] K/V of 5 layers as a paged
    cache [layers, 2, blocks, block_tokens, 4, 8]; block b = sequence b // (512 /
    block_tokens), in token order."""
    from splitzip_kv.offload import PagedKVLayout
    layout = PagedKVLayout(layers, block_tokens, 4, 8, "bf16")
    nb = 16 * 512 // block_tokens
    pages = layout.allocate(nb)
    for l in range(layers):
        for h, kv in enumerate("kv"):
            raw = np.fromfile(DATA / f"layer{l:02d}_{kv}.bf16", dtype="<u2")
            pages[l, h] = raw.view(ml_dtypes.bfloat16).reshape(nb, block_tokens, 4, 8)
    return layout, pages


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    run = os.environ.get("SZOF_TEST_RUN")
    run = pathlib.Path(run) if run else tmp_path_factory.mktemp("szof")
    run.mkdir(parents=True, exist_ok=True)
    with Cluster(run, int(os.environ.get("SZOF_TEST_PORT", "50651"))).running(segment_mib=48) as c:
        yield c
