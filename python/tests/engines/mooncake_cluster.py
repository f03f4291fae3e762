# SPDX-License-Identifier: Apache-2.0
"""A real Mooncake Store deployment on loopback for the engine tests
(mooncake_master + 2 store-client processes, scripts/offload_cluster.sh,
run with this venv's python, which has splitzip and Mooncake). If it
cannot start, the tests that use it fail; they skip only where Mooncake is
not installed and SZ_ENGINES_REQUIRE is unset. Also what both engines'
pool tests do to the pool: flip a stored value, empty it, kill a store
client, count a tier's pool loads, check a run."""

import os
import pathlib
import random
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
# The handle the offload tests use too (they run in another venv, from the
# repository root, with their own conftest module).
sys.path.insert(0, str(ROOT / "scripts"))
from offload_cluster import Cluster  # noqa: E402,F401


def cluster_fixture(port, segment_mib=64):
    """A session fixture: the cluster, or a skip where Mooncake is missing
    (a failure under SZ_ENGINES_REQUIRE=1)."""

    @pytest.fixture(scope="session")
    def mooncake(tmp_path_factory):
        if os.environ.get("SZ_ENGINES_REQUIRE") != "1":
            pytest.importorskip("mooncake.store")
        run = tmp_path_factory.mktemp("mooncake")
        with Cluster(run, int(os.environ.get("SZ_ENGINES_MOONCAKE_PORT", port))).running(
                segment_mib=segment_mib) as c:
            yield c

    return mooncake


def flip_in_pool(remote, k, rng=None):
    """Flips one bit of the value of key ``k`` (a string) in the pool (head
    object) through a tier's store ``remote``; False if it has no value."""
    rng = rng or random.Random(0)
    vk = remote.value_keys([k])[0]
    val = bytearray(remote.client.get(vk))
    if not val:
        return False
    val[rng.randrange(len(val))] ^= 1 << rng.randrange(8)
    return remote.client.upsert(vk, bytes(val)) == 0


def close_emptying_pool(remote, close):
    """Runs ``close`` (the backend's, the engine's) after removing everything
    from the pool (what a test leaves would fill the pool and get the next
    test's values evicted)."""
    try:
        remote.client.remove_all(True)
    finally:
        close()


POOL_LOADS = ("remote_loaded", "remote_missed", "remote_corrupt")


def tally_pool_loads(n, tier):
    """Adds a tier's pool load counters to the Counter ``n`` (before the tier
    is closed and replaced: its counters start again)."""
    for f in POOL_LOADS:
        n[f] += getattr(tier, f)


def check_pool_run(n):
    """What every pool run with faults must show (its test registers this
    module for pytest's assertion rewriting): the ops done, pages served,
    values flipped, restarts and the store client's kill and restart, pool
    loads and refused values, and not one wrong page."""
    assert n["ops"] >= 10_000 and n["served"] > 2_000
    assert n["flipped"] > 0 and n["restarts"] > 0 and n["kills"] == 2
    assert n["remote_loaded"] > 500 and n["remote_corrupt"] > 0
    assert n["wrong"] == 0


class ServerKill:
    """Store client ``server`` SIGKILLed once a run passes 3,000 ops (its
    values vanish) and started again past 6,000; ``n["kills"]`` counts both."""

    def __init__(self, cluster, server):
        self.cluster, self.server = cluster, str(server)

    def step(self, n):
        if n["kills"] == 0 and n["ops"] > 3_000:
            self.cluster("kill-server", self.server)
            n["kills"] += 1
        elif n["kills"] == 1 and n["ops"] > 6_000:
            self.cluster("start-server", self.server)
            n["kills"] += 1

    def restore(self, n):
        """After the run: the client started again if the run ended between."""
        if n["kills"] == 1:
            self.cluster("start-server", self.server)
