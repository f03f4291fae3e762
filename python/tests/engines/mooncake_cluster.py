# SPDX-License-Identifier: Apache-2.0
"""A real Mooncake Store deployment on loopback for the engine tests
(mooncake_master + 2 store-client processes, scripts/offload_cluster.sh,
run with this venv's python, which has splitzip and Mooncake). If it
cannot start, the tests that use it fail; they skip only where Mooncake is
not installed and SZ_ENGINES_REQUIRE is unset."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
CLUSTER = ROOT / "scripts" / "offload_cluster.sh"


class Cluster:
    def __init__(self, run_dir, port):
        self.env = dict(os.environ, SZOF_RUN=str(run_dir), SZOF_PY=sys.executable,
                        SZOF_PORT=str(port), SZOF_CLIENT_TTL="2")
        self.master = f"127.0.0.1:{port}"
        self.run_dir = pathlib.Path(run_dir)

    def __call__(self, *args):
        r = subprocess.run(["bash", str(CLUSTER), *args], env=self.env, capture_output=True,
                           text=True, timeout=120)
        if r.returncode != 0:
            logs = "".join(f"\n--- {p.name}\n{p.read_text()[-3000:]}"
                           for p in sorted(self.run_dir.glob("*.log")))
            raise RuntimeError(f"offload_cluster.sh {' '.join(args)} failed:\n{r.stdout}{r.stderr}{logs}")
        return r.stdout


def cluster_fixture(port, segment_mib=64):
    """A session fixture: the cluster, or a skip where Mooncake is missing
    (a failure under SZ_ENGINES_REQUIRE=1)."""

    @pytest.fixture(scope="session")
    def mooncake(tmp_path_factory):
        if os.environ.get("SZ_ENGINES_REQUIRE") != "1":
            pytest.importorskip("mooncake.store")
        run = tmp_path_factory.mktemp("mooncake")
        c = Cluster(run, int(os.environ.get("SZ_ENGINES_MOONCAKE_PORT", port)))
        c("up", "--servers", "2", "--segment-mib", str(segment_mib))
        try:
            yield c
        finally:
            c("down")

    return mooncake
