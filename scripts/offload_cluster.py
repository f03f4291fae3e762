# SPDX-License-Identifier: Apache-2.0
"""scripts/offload_cluster.sh from Python, for the test fixtures of both
suites that need a Mooncake cluster: the offload tests
(tests/offload/conftest.py) and the engine tests
(python/tests/engines/mooncake_cluster.py). Each suite runs in its own venv
and from its own directory, so this sits next to the script both drive and
imports nothing but the standard library."""

import contextlib
import os
import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().with_name("offload_cluster.sh")


class Cluster:
    """A loopback deployment with its state in ``run_dir``, the master on
    ``port``, the store clients run with this interpreter (it has splitzip
    and Mooncake). Calling it runs one offload_cluster.sh command; a failed
    one raises with the cluster's logs."""

    def __init__(self, run_dir, port):
        self.env = dict(os.environ, SZOF_RUN=str(run_dir), SZOF_PY=sys.executable,
                        SZOF_PORT=str(port), SZOF_CLIENT_TTL="2")
        self.master = f"127.0.0.1:{port}"
        self.run_dir = pathlib.Path(run_dir)

    def __call__(self, *args):
        r = subprocess.run(["bash", str(SCRIPT), *args], env=self.env, capture_output=True,
                           text=True, timeout=120)
        if r.returncode != 0:
            logs = "".join(f"\n--- {p.name}\n{p.read_text()[-3000:]}"
                           for p in sorted(self.run_dir.glob("*.log")))
            raise RuntimeError(f"offload_cluster.sh {' '.join(args)} failed:\n{r.stdout}{r.stderr}{logs}")
        return r.stdout

    @contextlib.contextmanager
    def running(self, servers=2, segment_mib=64):
        """Up for the block (a fixture's session), down after it."""
        self("up", "--servers", str(servers), "--segment-mib", str(segment_mib))
        try:
            yield self
        finally:
            self("down")
