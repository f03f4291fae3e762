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


def open_store(options, model, mode, threads):
    """A KVOffloadStore (values only) for a tier: ``options`` is the tier's
    ``mooncake`` dict, any OffloadConfig field but the codec's (``master``,
    ``protocol``, ``local_hostname``, ``metadata_server``, ``segment_bytes``,
    ``local_buffer_bytes``, ``replicas``, ``namespace``, ``group_bytes``,
    ``size_class_split``); the mode and threads are the tier's."""
    from ..offload.store import KVOffloadStore, OffloadConfig
    opts = dict(options or {})
    allowed = {f.name for f in dataclasses.fields(OffloadConfig)} - {
        "codec", "codec_options", "threads", "raw_layout", "backend"}
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
    cfg = OffloadConfig(codec="splitzip", codec_options={"mode": mode}, threads=int(threads), **opts)
    return KVOffloadStore(cfg, model_id(model))
