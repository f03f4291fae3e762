# SPDX-License-Identifier: Apache-2.0
"""LMCache's serde plugin interface, as an interface only, for machines where
the real `lmcache` package is not installed (it pulls ~6 GB of CUDA wheels).

Written from LMCache 0.5.6's documented contract
(lmcache/v1/distributed/serde/{base,factory,async_processor}.py,
lmcache/v1/distributed/api.py): what a plugin sees, not how LMCache
implements it. install() makes it importable under LMCache's module names,
so splitzip_kv.offload.lmcache_serde binds to it exactly as to the real one.
Tensors are numpy arrays here (the real MemoryObj holds torch tensors).

- Serializer.serialize(src, dst, key) -> int: bytes written into dst.
- Serializer.estimate_serialized_size(layout_desc) -> int: upper bound.
- Deserializer.deserialize(src, dst, key) -> None: into dst's KV layout.
- register_serde_factory(name, factory): raises ValueError for a name taken;
  create_serde_processor(SerdeConfig(type, kwargs)) calls factory(kwargs).
- AsyncSerdeProcessor(serializer, deserializer, max_workers): submit_* run
  the sync calls on a pool; query_*_result pops True / False (an exception
  in the sync call) / None (pending); a serialize result n narrows dst with
  set_used_size(n).
"""

import abc
import concurrent.futures as cf
import dataclasses
import sys
import threading
import types

import numpy as np


@dataclasses.dataclass
class MemoryLayoutDesc:
    shapes: list
    dtypes: list


@dataclasses.dataclass(frozen=True)
class ObjectKey:
    chunk_hash: bytes
    model_name: str
    kv_rank: int
    object_group_id: int = 0
    cache_salt: str = ""


class MemoryObj:
    """Stand-in for LMCache's MemoryObj: .tensor, get_size, set_used_size."""

    def __init__(self, array):
        self._array = array
        self._used = None

    @property
    def tensor(self):
        if self._used is not None:
            return self._array.reshape(-1).view(np.uint8)[:self._used]
        return self._array

    def get_size(self):
        return self._used if self._used is not None else self._array.nbytes

    def set_used_size(self, n):
        if not 0 <= n <= self._array.nbytes:
            raise ValueError("set_used_size out of range")
        self._used = n


@dataclasses.dataclass
class SerdeConfig:
    type: str
    kwargs: dict = dataclasses.field(default_factory=dict)


class Serializer(abc.ABC):
    @abc.abstractmethod
    def serialize(self, src, dst, key) -> int: ...

    @abc.abstractmethod
    def estimate_serialized_size(self, layout_desc) -> int: ...


class Deserializer(abc.ABC):
    @abc.abstractmethod
    def deserialize(self, src, dst, key) -> None: ...


_REGISTRY = {}


def register_serde_factory(name, factory):
    if name in _REGISTRY:
        raise ValueError(f"Serde type already registered: {name!r}")
    _REGISTRY[name] = factory


def get_registered_serde_types():
    return list(_REGISTRY)


def create_serde_processor(config):
    if config.type not in _REGISTRY:
        raise ValueError(f"Unknown serde type {config.type!r}")
    return _REGISTRY[config.type](config.kwargs)


class AsyncSerdeProcessor:
    def __init__(self, serializer, deserializer, max_workers=1):
        self._ser, self._de = serializer, deserializer
        self._pool = cf.ThreadPoolExecutor(max_workers)
        self._lock = threading.Lock()
        self._next = 0
        self._done = {"s": {}, "d": {}}

    def _submit(self, kind, srcs, dsts, keys):
        with self._lock:
            tid = self._next
            self._next += 1

        def run():
            ok = True
            try:
                for s, d, k in zip(srcs, dsts, keys):
                    if kind == "s":
                        d.set_used_size(self._ser.serialize(s, d, k))
                    else:
                        self._de.deserialize(s, d, k)
            except Exception:  # noqa: BLE001 - reported as a failed task
                ok = False
            with self._lock:
                self._done[kind][tid] = ok
        self._pool.submit(run)
        return tid

    def submit_serialize(self, src_objs, dst_objs, keys):
        return self._submit("s", src_objs, dst_objs, keys)

    def submit_deserialize(self, src_objs, dst_objs, keys):
        return self._submit("d", src_objs, dst_objs, keys)

    def query_serialize_result(self, task_id):
        with self._lock:
            return self._done["s"].pop(task_id, None)

    def query_deserialize_result(self, task_id):
        with self._lock:
            return self._done["d"].pop(task_id, None)

    def estimate_serialized_size(self, layout_desc):
        return self._ser.estimate_serialized_size(layout_desc)

    def close(self):
        self._pool.shutdown(wait=True)


def install():
    """Registers this module under LMCache's module names (if lmcache is absent)."""
    try:
        import lmcache  # noqa: F401
        return False
    except ImportError:
        pass
    me = sys.modules[__name__]
    names = ["lmcache", "lmcache.v1", "lmcache.v1.distributed", "lmcache.v1.distributed.api",
             "lmcache.v1.distributed.serde", "lmcache.v1.distributed.serde.base",
             "lmcache.v1.distributed.serde.factory",
             "lmcache.v1.distributed.serde.async_processor"]
    for n in names:
        m = types.ModuleType(n)
        m.__dict__.update({k: v for k, v in me.__dict__.items() if not k.startswith("__")})
        m.__path__ = []
        sys.modules[n] = m
    return True
