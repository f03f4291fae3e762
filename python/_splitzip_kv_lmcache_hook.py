# SPDX-License-Identifier: Apache-2.0
"""LMCache serde plugin discovery by entry point (group ``lmcache.serde``).

LMCache (0.5.x) registers serdes only through ``register_serde_factory``
calls. splitzip-kv's ``splitzip_kv_lmcache.pth`` imports this module at
interpreter start; it only adds a meta-path finder, so a process that never
imports LMCache pays nothing else. When ``lmcache.v1.distributed.serde.factory``
is imported, each ``lmcache.serde`` entry point (name -> factory callable)
not yet registered is registered, so ``"serde": {"type": "splitzip"}`` works
in any process, a vLLM worker included, without a ``register()`` call.
``SPLITZIP_LMCACHE_AUTOREGISTER=0`` turns it off.
"""

import os
import sys

_TARGET = "lmcache.v1.distributed.serde.factory"
GROUP = "lmcache.serde"


def register_entry_points(factory_module):
    """Registers every ``lmcache.serde`` entry point the factory lacks."""
    from importlib.metadata import entry_points
    try:
        eps = entry_points(group=GROUP)
    except TypeError:  # Python < 3.10
        eps = entry_points().get(GROUP, [])
    have = set(factory_module.get_registered_serde_types())
    for ep in eps:
        if ep.name in have:
            continue
        try:
            factory_module.register_serde_factory(ep.name, ep.load())
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not break LMCache's import
            sys.stderr.write(f"splitzip_kv: lmcache.serde entry point {ep.name!r} not registered: {exc}\n")


class _Finder:
    """Wraps the loader of LMCache's serde factory so registration runs right after it."""

    def find_spec(self, name, path=None, target=None):
        if name != _TARGET:
            return None
        sys.meta_path.remove(self)
        try:
            from importlib.util import find_spec
            spec = find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        orig_exec = loader.exec_module

        class _Loader:
            def __getattr__(self, attr):
                return getattr(loader, attr)

            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                orig_exec(module)
                register_entry_points(module)

        spec.loader = _Loader()
        return spec


def install():
    if os.environ.get("SPLITZIP_LMCACHE_AUTOREGISTER", "1") == "0":
        return
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    mod = sys.modules.get(_TARGET)
    if mod is not None:
        register_entry_points(mod)
        return
    sys.meta_path.insert(0, _Finder())


install()
