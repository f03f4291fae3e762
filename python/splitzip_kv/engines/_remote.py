# SPDX-License-Identifier: Apache-2.0
"""Mooncake Store behind the engine tiers, through the offload layer.

``store`` picks where a tier keeps its compressed pages:

- ``"host"``: this process's memory (CompressedPageCache), within
  ``capacity_bytes`` of frames;
- ``"mooncake"``: a Mooncake Store pool (KVOffloadStore.put_values /
  get_values: one checksummed value per page, bound to its key), shared by
  every engine on the pool; its capacity is the pool's;
- ``"both"``: the host cache in front of Mooncake. A store writes both from
  one encode (the frames the offload layer coded are kept by the host
  cache); a load takes the host copy and fetches only the misses.

A page missing, lost with a killed store client, or refused (flipped bits,
another key's value) is a miss in every mode, never data.
"""

import dataclasses

STORES = ("host", "mooncake", "both")
MiB = 1 << 20


def check_store(store):
    if store not in STORES:
        raise ValueError(f"store must be one of {', '.join(STORES)}, not {store!r}")
    return store


def model_id(name):
    """A key component from an engine's model name ('org/model' has a '/')."""
    s = str(name or "model").replace("/", "--")
    return s or "model"


def tier_tables(tables, mode):
    """The table sets of a tier's ``tables`` option (a set file's path, its
    bytes, a TableSet, or a list of those) and the tier's mode: "capacity"
    when sets are given and ``mode`` is None; sets with mode "fast" are
    refused."""
    from ..offload.store import load_tables
    sets = load_tables(tables)
    if mode is None:
        mode = "capacity" if sets else "fast"
    if sets and mode != "capacity":
        raise ValueError("tables are capacity table sets: mode must be 'capacity' (or left out)")
    return sets, mode


def open_store(options, model, mode, threads, tables=None):
    """A KVOffloadStore (values only) for a tier: ``options`` is the tier's
    ``mooncake`` dict, any OffloadConfig field but the codec's (``master``,
    ``protocol``, ``local_hostname``, ``metadata_server``, ``segment_bytes``,
    ``local_buffer_bytes``, ``replicas``, ``namespace``, ``group_bytes``,
    ``size_class_split``, ``tables_cache``); the mode, threads and table
    sets (a list of TableSet) are the tier's."""
    from ..offload.store import KVOffloadStore, OffloadConfig
    opts = dict(options or {})
    allowed = {f.name for f in dataclasses.fields(OffloadConfig)} - {
        "codec", "codec_options", "threads", "raw_layout", "backend", "tables"}
    unknown = sorted(set(opts) - allowed)
    if unknown:
        raise ValueError(f"unknown mooncake options {unknown} (known: {sorted(allowed)})")
    if "master" not in opts:
        raise ValueError("the mooncake options need 'master' (host:port of mooncake_master)")
    # Staging per concurrent call: two groups of this many raw bytes.
    opts.setdefault("group_bytes", 8 * MiB)
    # Whole values: a pool that evicts to make room may take a value's small
    # tail object and keep its head, and the value is lost while its head
    # still takes the space (bench/results/engines.md).
    opts.setdefault("size_class_split", False)
    cfg = OffloadConfig(codec="splitzip", codec_options={"mode": mode}, threads=int(threads),
                        tables=list(tables) if tables else None, **opts)
    return KVOffloadStore(cfg, model_id(model))


class RemoteCounters:
    """The Mooncake counters a tier reports, for both engines' tiers (a
    mixin: the tier sets ``remote`` and ``_lock``; its store and load
    threads both count)."""

    def _init_remote_counters(self):
        self.remote_stored = 0
        self.remote_failed = 0     # puts the pool refused (full, unreachable)
        self.remote_loaded = 0
        self.remote_missed = 0     # not found, lost, or refused as corrupt
        self.remote_corrupt = 0

    def _count_puts(self, res):
        """Counts put_values results; returns how many were stored."""
        good = sum(1 for r in res if r.ok)
        with self._lock:
            self.remote_stored += good
            self.remote_failed += len(res) - good
        return good

    def _count_loads(self, res):
        with self._lock:
            for r in res:
                if r.ok:
                    self.remote_loaded += 1
                else:
                    self.remote_missed += 1
                    self.remote_corrupt += r.status == "CORRUPT"

    def _remote_stats(self):
        """The counters for stats(); none without a pool."""
        if self.remote is None:
            return {}
        return {"remote_stored": self.remote_stored, "remote_failed": self.remote_failed,
                "remote_loaded": self.remote_loaded, "remote_missed": self.remote_missed,
                "remote_corrupt": self.remote_corrupt,
                "remote_stored_bytes": self.remote.stored_bytes_put}
