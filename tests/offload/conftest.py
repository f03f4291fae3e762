# SPDX-License-Identifier: Apache-2.0
"""Fixtures for the offload tests: the bundled real KV as a paged cache, and a
real Mooncake Store deployment (master + 2 store clients) on loopback,
started by scripts/offload_cluster.sh. If the cluster cannot start, the
tests that need it fail (they are not skipped)."""

import os
import pathlib
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "kv" / "stories260k"
CLUSTER = ROOT / "scripts" / "offload_cluster.sh"


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


class Cluster:
    def __init__(self, run_dir, port):
        self.env = dict(os.environ, SZOF_RUN=str(run_dir), SZOF_PY=sys.executable,
                        SZOF_PORT=str(port), SZOF_CLIENT_TTL="2")
        self.master = f"127.0.0.1:{port}"
        self.run_dir = run_dir

    def __call__(self, *args):
        r = subprocess.run(["bash", str(CLUSTER), *args], env=self.env, capture_output=True,
                           text=True, timeout=120)
        if r.returncode != 0:
            logs = "".join(f"\n--- {p.name}\n{p.read_text()[-3000:]}"
                           for p in sorted(self.run_dir.glob("*.log")))
            raise RuntimeError(f"offload_cluster.sh {' '.join(args)} failed:\n{r.stdout}{r.stderr}{logs}")
        return r.stdout


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    run = os.environ.get("SZOF_TEST_RUN")
    run = pathlib.Path(run) if run else tmp_path_factory.mktemp("szof")
    run.mkdir(parents=True, exist_ok=True)
    c = Cluster(run, int(os.environ.get("SZOF_TEST_PORT", "50651")))
    c("up", "--servers", "2", "--segment-mib", "48")
    yield c
    c("down")
