# SPDX-License-Identifier: Apache-2.0
"""KV offload over Mooncake Store: compressed chunks, batch put/get, decode in place.

One chunk = one (layer, token block) of a paged KV cache, i.e. the K page and
the V page of that layer for that block. With ``codec="splitzip"`` (default)
a chunk is stored as the value described in chunk.py (two checksummed
frames behind a header that binds it to its key), coded in the store's mode
(``codec_options={"mode": "fast" | "capacity"}``); with ``codec="raw"`` the
two pages are stored as they are, straight from and into the caller's
memory (the baseline; no integrity check).

Batches are cut into groups; while one group travels through the store the
next one is encoded (put) or the previous one decoded (get), in two
registered staging buffers. Mooncake releases the GIL in its batch calls and
splitzip in its codec, so the two overlap.
"""

import collections
import concurrent.futures as cf
import dataclasses
import itertools
from typing import Optional
import threading
import time

import numpy as np

from .. import _api, _core
from . import chunk as _chunk
from .keys import chunk_key

MiB = 1 << 20

# Mooncake error codes seen by this layer (mooncake-store types.h ErrorCode).
MOONCAKE_ERRORS = {
    -200: "NO_AVAILABLE_HANDLE (store full, or no segment mounted)",
    -600: "BUFFER_TOO_SMALL",
    -704: "OBJECT_NOT_FOUND",
    -706: "OBJECT_HAS_LEASE",
    -707: "LEASE_EXPIRED (replica gone while reading)",
    -800: "TRANSFER_FAIL",
    -900: "RPC_FAIL",
    -1: "INTERNAL_ERROR",
}


def mooncake_error(code):
    return MOONCAKE_ERRORS.get(code, f"mooncake error {code}")


TAIL = "~t"  # suffix of a value's tail object


def size_class_floor(n):
    """The largest size class of Mooncake's offset allocator that is <= n.

    The allocator keeps free blocks in bins of a small float (3 mantissa
    bits): 8 classes per power of two, and an object takes the whole class
    it rounds up to (measured: 49,153-byte objects use 53,248 bytes each).
    A compressed 64 KiB chunk (~49,430 bytes) would take 53,248; stored as a
    49,152-byte head plus a ~280-byte tail it takes ~49,440.
    """
    if n < 16:
        return n
    step = 1 << (n.bit_length() - 4)
    return n - n % step


def size_classes_floor(n):
    """size_class_floor of each entry of the int64 array ``n`` (values below
    2^53), without a Python step per entry."""
    # n = m * 2^e with 0.5 <= m < 1: a class keeps the 4 leading bits
    # (exact below 2^53; n < 16 has no more than 4 bits and stays n).
    m, e = np.frexp(np.asarray(n, np.float64))
    return np.ldexp(np.floor(m * 16), e - 4).astype(np.int64)


@dataclasses.dataclass
class OffloadConfig:
    """Where the store is and how chunks are coded.

    ``codec``: "splitzip" or "raw". ``codec_options`` (splitzip only):
    ``{"mode": "fast"}`` (default: the 4-bit exponent code, fastest) or
    ``{"mode": "capacity"}`` (per-block Huffman-coded exponents: values about
    10% smaller on real KV, 11% more tokens in the same pool, at a 2-5x
    slower encode and decode; docs/OFFLOAD.md). The mode is per store, for
    what it writes; every frame records its mode, so a store reads values
    written in either mode. Unknown options and modes are refused rather
    than ignored.
    """
    master: str = "127.0.0.1:50051"
    local_hostname: str = "127.0.0.1"
    metadata_server: str = "P2PHANDSHAKE"
    protocol: str = "tcp"
    segment_bytes: int = 0              # memory this client contributes to the pool
    local_buffer_bytes: int = 16 * MiB  # Mooncake's client-side transfer buffer
    replicas: int = 1
    codec: str = "splitzip"
    codec_options: dict = dataclasses.field(default_factory=dict)
    backend: Optional[str] = None       # splitzip backend (None: dispatch)
    threads: int = 0                    # splitzip threads per call (0: backend default)
    group_bytes: int = 32 * MiB         # raw bytes per pipelined group
    namespace: str = "szkv"
    # Cut each compressed value into a head whose size is one of the store
    # allocator's size classes and a small tail object (see size_class_floor):
    # Mooncake's offset allocator rounds every object up to its class, which
    # costs a value just above 3/4 of a power of two 1/12 of its size.
    size_class_split: bool = True
    # codec="raw" only: "multi" stores a chunk's K and V pages as one object
    # (batch_*_multi_buffers), "kv_keys" as two objects (key~k, key~v).
    raw_layout: str = "multi"
    # Capacity table sets (docs/OFFLOAD.md "Table sets"): a set file's path,
    # its bytes, a TableSet, or a list of those. Each is stored once in the
    # pool under tables_key(id). put_blocks codes with a set per layer and
    # K/V when given 2 x layers of them, else (and put_values always) with
    # the first set of the values' dtype; gets decode frames naming any set
    # held or in the pool.
    tables: object = None
    tables_cache: int = 256             # sets fetched from the pool kept (LRU)

    @property
    def mode(self):
        """The splitzip coding mode this store writes: "fast" or "capacity"
        (the default when ``tables`` are given)."""
        return (self.codec_options or {}).get("mode", "capacity" if self.tables is not None else "fast")

    def validate(self):
        if self.codec not in ("splitzip", "raw"):
            raise ValueError(f"codec must be 'splitzip' or 'raw', not {self.codec!r}")
        if not isinstance(self.codec_options or {}, dict):
            raise ValueError("codec_options must be a dict, e.g. {'mode': 'capacity'}")
        opts = dict(self.codec_options or {})
        _chunk.check_mode(opts.pop("mode", "fast"), "codec_options['mode']")
        if opts:
            raise ValueError(f"unknown codec options {sorted(opts)}")
        if self.codec == "raw" and self.codec_options:
            raise ValueError("codec_options apply to codec='splitzip'; codec='raw' takes none")
        if self.replicas < 1:
            raise ValueError("replicas must be >= 1")
        if self.raw_layout not in ("multi", "kv_keys"):
            raise ValueError(f"raw_layout must be 'multi' or 'kv_keys', not {self.raw_layout!r}")
        if self.group_bytes <= 0:
            raise ValueError("group_bytes must be positive")
        if self.tables is not None:
            if self.codec != "splitzip":
                raise ValueError("tables apply to codec='splitzip'")
            if self.mode != "capacity":
                raise ValueError("tables are capacity table sets: codec_options['mode'] must be "
                                 "'capacity' (or left out)")
        if int(self.tables_cache) < 1:
            raise ValueError("tables_cache must be >= 1")


def load_tables(spec):
    """The table sets ``spec`` names (None, a TableSet, a set file's bytes, a
    path, or a list of those), as a list of TableSet."""
    from .lmcache_serde import load_tables as _load
    return _load(spec)


def calibrate_layer_tables(pages, blocks=None, table_count=None):
    """Table sets per layer and K/V from a paged KV sample ``pages``
    ``[layers, 2, blocks, ...]`` (the blocks ``blocks``, default all), in
    the order OffloadConfig.tables takes them: L0 K, L0 V, L1 K, ...
    Calibrate on KV other than what will be stored (held-out sequences)."""
    from .. import calibrate
    blocks = range(pages.shape[2]) if blocks is None else blocks
    kw = {} if table_count is None else {"table_count": table_count}
    return [calibrate([np.ascontiguousarray(pages[l, j, b]) for b in blocks], mode="capacity", **kw)
            for l in range(pages.shape[0]) for j in range(2)]


def tables_key(namespace, set_id):
    """The pool key of the table set ``set_id``: ``{namespace}/tables/{id:016x}``."""
    return f"{namespace}/tables/{int(set_id):016x}"


@dataclasses.dataclass(frozen=True)
class PagedKVLayout:
    """A paged KV cache ``[layers, 2, num_blocks, block_tokens, kv_heads, head_dim]``."""
    layers: int
    block_tokens: int
    kv_heads: int
    head_dim: int
    dtype: str = "bf16"

    def shape(self, num_blocks):
        return (self.layers, 2, num_blocks, self.block_tokens, self.kv_heads, self.head_dim)

    @property
    def page_elems(self):
        return self.block_tokens * self.kv_heads * self.head_dim

    @property
    def page_bytes(self):
        return self.page_elems * _chunk._ITEMSIZE[self.dtype]

    def allocate(self, num_blocks):
        import ml_dtypes
        np_dtype = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32,
                    "fp8_e5m2": ml_dtypes.float8_e5m2}[self.dtype]
        return np.zeros(self.shape(num_blocks), np_dtype)


@dataclasses.dataclass(slots=True)
class ChunkStatus:
    """What happened to one chunk. ``status``: OK, NOT_FOUND, STORE_ERROR,
    CORRUPT (refused: never returned as data), MISSING_TABLES (a frame names
    a table set neither held nor readable from the pool: no data) or ERROR."""
    key: str
    status: str
    detail: str = ""
    stored_bytes: int = 0

    @property
    def ok(self):
        return self.status == "OK"


def _all_ok(keys, sizes):
    """One OK status per key (positional construction: a fraction of the
    keyword form's cost, which was the largest Python step per chunk)."""
    return list(map(ChunkStatus, keys, itertools.repeat("OK"), itertools.repeat(""), sizes))


class _Staging:
    """A registered host buffer for one group of chunk values."""

    def __init__(self, client, nbytes, tail_bytes):
        self.mem = np.zeros(max(nbytes, 4096) + tail_bytes, np.uint8)
        self.buf = self.mem[:max(nbytes, 4096)]
        self.tail = self.mem[max(nbytes, 4096):]
        self.ptr = self.mem.ctypes.data
        self.tail_ptr = self.ptr + self.buf.nbytes
        if client is not None:
            rc = client.register_buffer(self.ptr, self.mem.nbytes)
            if rc != 0:
                raise RuntimeError(f"register_buffer failed: {mooncake_error(rc)}")


def connect(config):
    """A Mooncake Store client set up from ``config``."""
    try:
        from mooncake.store import MooncakeDistributedStore
    except ImportError as e:
        raise RuntimeError("Mooncake Store is not installed: pip install "
                           "mooncake-transfer-engine-non-cuda (and Debian libibverbs1)") from e
    client = MooncakeDistributedStore()
    rc = client.setup(config.local_hostname, config.metadata_server, int(config.segment_bytes),
                      int(config.local_buffer_bytes), config.protocol, "", config.master)
    if rc != 0:
        raise RuntimeError(f"Mooncake Store setup failed (rc {rc}) for master {config.master}")
    return client


class _Geometry:
    """Values of one shape (dtype, parts per value, elements per part): their
    bound, the room of a tail, how many go in one pipelined group, and idle
    staging pairs (one pair per concurrent call)."""

    def __init__(self, dtype, n_parts, part_elems, group_bytes):
        self.dtype = dtype
        self.n_parts = int(n_parts)
        self.part_elems = int(part_elems)
        self.part_bytes = self.part_elems * _chunk._ITEMSIZE[dtype]
        self.bound = _chunk.chunk_bound(dtype, self.n_parts, self.part_elems)
        self.part_bound = _api.compress_bound(dtype, self.part_elems)
        # A tail is shorter than its head's size-class step (head / 8).
        self.tail_cap = (self.bound >> 3) + 64
        self.group = max(1, group_bytes // (self.n_parts * self.part_bytes))
        self.slot_offsets = np.arange(self.group, dtype=np.uint64) * np.uint64(self.bound)
        self.free = []


class KVOffloadStore:
    """Offloads the pages of a paged KV cache to Mooncake Store.

    ``client``: an existing MooncakeDistributedStore (set up), or None to
    make one from ``config``. ``model``: part of every key. ``layout``: the
    paged cache of put_blocks / get_blocks; None for a store that only
    keeps values (put_values / get_values, the engine tiers).

    Thread-safe: concurrent calls each take their own staging buffers.
    """

    def __init__(self, config, model, layout=None, client=None):
        config.validate()
        chunk_key(model, "", 0, config.namespace)  # model and namespace are usable in keys
        self.config = config
        self.model = model
        self.layout = layout
        self.client = client if client is not None else connect(config)
        self._owns_client = client is None
        from mooncake.store import ReplicateConfig
        self._rc = ReplicateConfig()
        self._rc.replica_num = int(config.replicas)
        self._mode = config.mode  # what puts write; gets read either mode
        _api._check_common(10, config.threads)
        self._mode_id = _api._mode(self._mode)
        self._geos = {}
        self._registered = set()
        self._pool = cf.ThreadPoolExecutor(1, thread_name_prefix="szkv")
        self._lock = threading.Lock()
        self._value_prefix = f"{config.namespace}/{model}/"
        # Table sets: the configured ones (kept) and those fetched from the
        # pool by id (LRU, at most config.tables_cache); _held is the list
        # the decoder gets, replaced (not mutated) under _lock.
        own = load_tables(config.tables)
        self._own_sets = {ts.id: ts for ts in own}
        self._write_sets = {}
        for ts in own:
            self._write_sets.setdefault(ts.dtype, ts)
        # put_blocks: 2 x layers sets of the layout's dtype are one per layer
        # and K/V (layer-major: L0 K, L0 V, L1 K, ...; DESIGN.md 7a).
        self._layer_sets = None
        if layout is not None:
            mine = [ts for ts in own if ts.dtype == layout.dtype]
            if len(mine) == 2 * layout.layers and len(mine) > 1:
                self._layer_sets = [(mine[2 * l], mine[2 * l + 1]) for l in range(layout.layers)]
        self._fetched = collections.OrderedDict()
        self._held = list(self._own_sets.values()) or None
        self.tables_fetched = 0   # sets read from the pool
        self.tables_refused = 0   # stored sets that failed their own checks
        if own:
            self.publish_tables()
        # Counters for reports: raw bytes in and stored bytes out.
        self.raw_bytes_put = 0
        self.stored_bytes_put = 0
        # Busy seconds per stage (encode, put, fetch, decode), for the
        # encode / transfer / decode breakdown of docs/OFFLOAD.md.
        self.timings = collections.Counter()

    # -- keys ---------------------------------------------------------------

    def keys(self, block_hashes, layers=None):
        """Chunk keys in the order put/get use: block-major, then layer."""
        layers = range(self._layout().layers) if layers is None else layers
        return [chunk_key(self.model, h, l, self.config.namespace)
                for h in block_hashes for l in layers]

    def value_keys(self, keys):
        """The store keys of put_values' keys: ``{namespace}/{model}/{key}``."""
        p = self._value_prefix
        return [p + k for k in keys]

    def _layout(self):
        if self.layout is None:
            raise ValueError("this store has no PagedKVLayout (put_values / get_values only)")
        return self.layout

    # -- memory -------------------------------------------------------------

    def register(self, pages):
        """Registers the caller's page array with Mooncake. Needed only for
        codec="raw", which moves pages without staging."""
        ptr = pages.ctypes.data
        if ptr not in self._registered:
            rc = self.client.register_buffer(ptr, pages.nbytes)
            if rc != 0:
                raise RuntimeError(f"register_buffer failed: {mooncake_error(rc)}")
            self._registered.add(ptr)

    def _geometry(self, dtype, n_parts, part_elems):
        k = (dtype, n_parts, part_elems)
        geo = self._geos.get(k)
        if geo is None:
            with self._lock:
                geo = self._geos.setdefault(k, _Geometry(dtype, n_parts, part_elems,
                                                         self.config.group_bytes))
        return geo

    def _take_slots(self, geo):
        with self._lock:
            if geo.free:
                return geo.free.pop()
        slots = [_Staging(self.client, geo.group * geo.bound, geo.group * geo.tail_cap)
                 for _ in range(2)]
        for s in slots:
            # A group's batch-call arguments that depend only on the slot,
            # made once (per group they cost more Python than the group's
            # statuses): head and tail addresses, capacities.
            heads = s.ptr + geo.slot_offsets.astype(np.int64)
            tails = s.tail_ptr + np.arange(geo.group, dtype=np.int64) * geo.tail_cap
            s.head_ptrs = heads.tolist()
            s.fetch_ptrs = s.head_ptrs + tails.tolist()
            s.fetch_caps = [geo.bound] * geo.group + [geo.tail_cap] * geo.group
            s.tail_offsets = (s.buf.size + np.arange(geo.group, dtype=np.uint64) * np.uint64(geo.tail_cap))
        return slots

    def _give_slots(self, geo, slots):
        with self._lock:
            geo.free.append(slots)

    def _check_pages(self, pages):
        layout = self._layout()
        if not isinstance(pages, np.ndarray):
            raise TypeError("pages must be a numpy array [layers, 2, blocks, tokens, heads, dim]")
        if pages.ndim != 6 or pages.shape[:2] != (layout.layers, 2) or \
                pages.shape[3:] != (layout.block_tokens, layout.kv_heads, layout.head_dim):
            raise ValueError(f"pages have shape {pages.shape}, layout wants "
                             f"{layout.shape('blocks')}")
        if _chunk.dtype_name(pages) != layout.dtype:
            raise ValueError(f"pages hold {pages.dtype}, layout is {layout.dtype}")
        if not pages.flags.c_contiguous:
            raise ValueError("pages must be C-contiguous")

    def _work(self, pages, block_ids, block_hashes, layers):
        self._check_pages(pages)
        if len(block_ids) != len(block_hashes):
            raise ValueError("block_ids and block_hashes differ in length")
        layers = list(range(self.layout.layers) if layers is None else layers)
        nb = pages.shape[2]
        items = []
        for b, h in zip(block_ids, block_hashes):
            if not 0 <= int(b) < nb:
                raise ValueError(f"block id {b} out of range (pages hold {nb})")
            for l in layers:
                if not 0 <= l < self.layout.layers:
                    raise ValueError(f"layer {l} out of range")
                items.append((chunk_key(self.model, h, l, self.config.namespace),
                              pages[l, 0, int(b)], pages[l, 1, int(b)]))
        return items

    def _work_coded(self, pages, block_ids, block_hashes, layers):
        """The chunks as (keys, byte offsets of their K and V pages in
        ``pages``), in keys() order, computed for the whole batch at once."""
        self._check_pages(pages)
        if len(block_ids) != len(block_hashes):
            raise ValueError("block_ids and block_hashes differ in length")
        layers = list(range(self.layout.layers) if layers is None else layers)
        nb = pages.shape[2]
        bids = np.asarray(block_ids, np.int64).reshape(-1)
        if bids.size and (bids.min() < 0 or bids.max() >= nb):
            bad = bids[(bids < 0) | (bids >= nb)][0]
            raise ValueError(f"block id {bad} out of range (pages hold {nb})")
        for l in layers:
            if not 0 <= l < self.layout.layers:
                raise ValueError(f"layer {l} out of range")
        if bids.size == 0 or not layers:
            return [], np.empty(0, np.uint64)
        prefix = chunk_key(self.model, "", 0, self.config.namespace)[:-len("/L0")]
        sfx = [f"/L{int(l)}" for l in layers]
        keys = [f"{prefix}{h}{s}" for h in block_hashes for s in sfx]
        blocks = np.repeat(bids, len(layers))
        ls = np.tile(np.asarray(layers, np.int64), bids.size)
        k_off = (ls * 2 * nb + blocks) * self.layout.page_bytes
        offsets = np.stack([k_off, k_off + nb * self.layout.page_bytes], axis=1).reshape(-1)
        return keys, offsets.astype(np.uint64)

    def _block_geometry(self):
        return self._geometry(self.layout.dtype, 2, self.layout.page_elems)

    # -- put ----------------------------------------------------------------

    def put_blocks(self, pages, block_ids, block_hashes, layers=None):
        """Stores the pages of ``block_ids`` (their prefix hashes in
        ``block_hashes``) for every layer (or ``layers``). Returns one
        ChunkStatus per chunk, in keys() order."""
        if self.config.codec == "raw":
            items = self._work(pages, block_ids, block_hashes, layers)
            self.register(pages)
            return self._put_raw(items)
        keys, offsets = self._work_coded(pages, block_ids, block_hashes, layers)
        lay = None
        if self._layer_sets is not None:
            ls = np.asarray(list(range(self.layout.layers) if layers is None else layers), np.int64)
            lay = np.tile(ls, len(block_ids))
        return self._put_coded(self._block_geometry(), keys, pages.reshape(-1).view(np.uint8),
                               offsets, layers=lay)[0]

    def put_values(self, keys, src, part_offsets, n_parts, part_elems, *, dtype, frames=False):
        """Stores one value per key of ``keys`` (strings; stored as
        value_keys(keys)): value i's part j is the ``part_elems`` values of
        ``dtype`` at byte offset ``part_offsets[i * n_parts + j]`` of
        ``src`` (a C-contiguous host array: a tier's rows, a host pool).
        Coded in the store's mode, checksummed and bound to its key, in
        batched codec calls. Returns one ChunkStatus per key; with
        ``frames=True`` also, per key, the tuple of its splitzip frames
        (bytes, as compress_batch writes them; also for a value the store
        refused) or None where coding failed, so a host cache can keep what
        was coded once."""
        if self.config.codec != "splitzip":
            raise ValueError("put_values needs codec='splitzip'")
        dtype = _chunk.check_dtype(dtype)
        geo = self._geometry(dtype, n_parts, part_elems)
        src = _byte_view(src, "src")
        offsets = _offsets(part_offsets, len(keys) * geo.n_parts)
        return self._put_coded(geo, self.value_keys(keys), src, offsets, frames)

    def _put_raw(self, items):
        out = []
        g = self._block_geometry().group
        for gi in range(0, len(items), g):
            grp = items[gi:gi + g]
            if self.config.raw_layout == "kv_keys":
                res = self.client.batch_put_from(
                    [k + s for k, _, _ in grp for s in ("~k", "~v")],
                    [p.ctypes.data for _, a, b in grp for p in (a, b)],
                    [p.nbytes for _, a, b in grp for p in (a, b)], self._rc)
                codes = [x or y for x, y in zip(res[0::2], res[1::2])]
            else:
                codes = self.client.batch_put_from_multi_buffers(
                    [k for k, _, _ in grp], [[a.ctypes.data, b.ctypes.data] for _, a, b in grp],
                    [[a.nbytes, b.nbytes] for _, a, b in grp], self._rc)
            for (k, a, b), c in zip(grp, codes):
                n = a.nbytes + b.nbytes
                out.append(ChunkStatus(k, "OK", stored_bytes=n) if c == 0 else
                           ChunkStatus(k, "STORE_ERROR", mooncake_error(c)))
                if c == 0:
                    with self._lock:
                        self.raw_bytes_put += n
                        self.stored_bytes_put += n
        return out

    def _encode_group(self, geo, grp, slot):
        """Every value of the group in one codec call (chunk.encode_many);
        with sets per layer and K/V, each part with its layer's set."""
        t0 = time.perf_counter()
        try:
            part_sets = None
            if len(grp) == 4:
                keys, offsets, src, lay = grp
                pairs = self._layer_sets
                part_sets = [ts for l in lay.tolist() for ts in pairs[l]]
            else:
                keys, offsets, src = grp
            # chunk.encode_many without its argument checks: this store's
            # mode, threads and buffers were checked when it was opened.
            sizes, errors = _core.encode_chunks(
                slot.buf, geo.slot_offsets[:len(keys)], keys, src, offsets, geo.n_parts,
                geo.part_elems, geo.dtype, _chunk.DTYPE_IDS[geo.dtype], None, self.config.backend,
                self.config.threads, self._mode_id, self._write_sets.get(geo.dtype), part_sets)
            return np.asarray(sizes, np.int64), dict(errors)
        finally:
            self.timings["encode"] += time.perf_counter() - t0

    def _put_coded(self, geo, keys, src, offsets, frames=False, layers=None):
        """Returns (statuses, frames per key or None). ``layers``: each
        chunk's layer (put_blocks with sets per layer and K/V)."""
        g, np_ = geo.group, geo.n_parts
        groups = [(keys[i:i + g], offsets[np_ * i:np_ * (i + g)], src) +
                  ((layers[i:i + g],) if layers is not None else ()) for i in range(0, len(keys), g)]
        out = []
        kept = [] if frames else None
        if not groups:
            return out, kept
        slots = self._take_slots(geo)
        try:
            value_part = np_ * geo.part_bytes
            fut = self._pool.submit(self._encode_group, geo, groups[0], slots[0])
            for gi, grp in enumerate(groups):
                sizes, errors = fut.result()
                slot = slots[gi % 2]
                if gi + 1 < len(groups):
                    fut = self._pool.submit(self._encode_group, geo, groups[gi + 1], slots[(gi + 1) % 2])
                keys_g = grp[0]
                n = len(keys_g)
                if errors:
                    ok = np.ones(n, bool)
                    ok[list(errors)] = False
                    idx = np.flatnonzero(ok)
                else:
                    idx = None
                t0 = time.perf_counter()
                codes = self._put_values(geo, keys_g, idx, slot, sizes)
                self.timings["put"] += time.perf_counter() - t0
                stored = codes == 0
                if errors:
                    stored[list(errors)] = False
                n_ok = int(stored.sum())
                with self._lock:
                    self.raw_bytes_put += n_ok * value_part
                    self.stored_bytes_put += int(sizes[stored].sum()) if n_ok < n else int(sizes.sum())
                if n_ok == n:
                    out += _all_ok(keys_g, sizes.tolist())
                else:
                    base = len(out)
                    out += [ChunkStatus(k, "OK", "", s) if c == 0 else
                            ChunkStatus(k, "STORE_ERROR", mooncake_error(c))
                            for k, s, c in zip(keys_g, sizes.tolist(), codes.tolist())]
                    for i, e in errors.items():
                        out[base + i] = ChunkStatus(keys_g[i], "ERROR", e)
                if frames:  # every value coded, stored or not (a host cache keeps it)
                    kept += self._frames_of(geo, slot, sizes, sizes > 0)
        finally:
            self._give_slots(geo, slots)
        return out, kept

    def _frames_of(self, geo, slot, sizes, stored):
        """The splitzip frames of each stored value of a group (bytes), None
        for the others."""
        h = _chunk.header_size(geo.n_parts)
        base = geo.slot_offsets[:sizes.size].astype(np.int64)
        # Part sizes from each header: u32 at 24 + 4j.
        pos = base[:, None] + 24 + 4 * np.arange(geo.n_parts)[None, :]
        psz = slot.buf[pos[..., None] + np.arange(4)].reshape(-1, 4).view("<u4").reshape(
            sizes.size, geo.n_parts).astype(np.int64)
        ends = base[:, None] + h + np.cumsum(psz, axis=1)
        starts = ends - psz
        mv = memoryview(slot.buf)
        out = []
        for i, (a, b, ok) in enumerate(zip(starts.tolist(), ends.tolist(), stored.tolist())):
            out.append(tuple(bytes(mv[x:y]) for x, y in zip(a, b)) if ok else None)
        return out

    def _put_values(self, geo, keys, idx, slot, sizes):
        """batch_put_from of the values of chunks idx (all when None; head +
        tail objects when size_class_split); returns per chunk of the group
        its code (0 only if all its objects went in)."""
        n_all = sizes.size
        if idx is None:
            n = sizes
            ptrs = None  # slot.head_ptrs
            put_keys = keys
        else:
            n = sizes[idx]
            ptrs = slot.ptr + idx * geo.bound
            put_keys = [keys[i] for i in idx.tolist()]
        if n.size == 0:
            return np.zeros(n_all, np.int64)
        head = size_classes_floor(n) if self.config.size_class_split else n
        tail = np.flatnonzero(head < n)
        if ptrs is None:
            head_ptrs = slot.head_ptrs if n_all == geo.group else slot.head_ptrs[:n_all]
            ptrs = geo.slot_offsets[:n_all].astype(np.int64) + slot.ptr if tail.size else None
        else:
            head_ptrs = ptrs.tolist()
        if tail.size == len(put_keys):
            all_keys = put_keys + [k + TAIL for k in put_keys]
            tail_ptrs = (ptrs + head).tolist()
            tail_lens = (n - head).tolist()
        else:
            all_keys = put_keys + [put_keys[i] + TAIL for i in tail.tolist()]
            tail_ptrs = (ptrs[tail] + head[tail]).tolist() if tail.size else []
            tail_lens = (n[tail] - head[tail]).tolist()
        res = self.client.batch_put_from(all_keys, head_ptrs + tail_ptrs, head.tolist() + tail_lens,
                                         self._rc)
        if not any(res):  # every object went in
            return np.zeros(n_all, np.int64)
        res = np.asarray(res, np.int64)
        m = n.size
        head_codes = res[:m].copy()
        if tail.size:
            tail_codes = res[m:]
            fix = tail[head_codes[tail] == 0]
            head_codes[fix] = tail_codes[np.searchsorted(tail, fix)]
        if idx is None:
            codes = head_codes
        else:
            codes = np.zeros(n_all, np.int64)
            codes[idx] = head_codes
        if (head_codes != 0).any():  # do not leave half a value behind
            bad = set(np.flatnonzero(head_codes != 0).tolist())
            pos = list(range(m)) + tail.tolist()
            self.client.batch_remove([k for k, p in zip(all_keys, pos) if p in bad], True)
        return codes

    # -- get ----------------------------------------------------------------

    def get_blocks(self, pages, block_ids, block_hashes, layers=None):
        """Fetches the chunks of ``block_hashes`` into the pages ``block_ids``
        of ``pages``, decoding in place. Returns one ChunkStatus per chunk in
        keys() order. The pages of a chunk that is not OK are zeroed: a
        missing, failed or corrupt chunk never leaves data behind."""
        if self.config.codec == "raw":
            items = self._work(pages, block_ids, block_hashes, layers)
            self.register(pages)
            return self._get_raw(items)
        # Chunks decode on several threads: two of them must not share a page.
        if len(set(int(b) for b in block_ids)) != len(block_ids) or \
                (layers is not None and len(set(layers)) != len(layers)):
            raise ValueError("get_blocks: a block id or layer repeats (two chunks would decode into one page)")
        keys, offsets = self._work_coded(pages, block_ids, block_hashes, layers)
        return self._get_coded(self._block_geometry(), keys, pages.reshape(-1).view(np.uint8),
                               offsets)

    def get_values(self, keys, dst, part_offsets, n_parts, part_elems, *, dtype,
                   drop_corrupt=True):
        """Fetches and decodes the values put_values stored under ``keys``
        into ``dst`` (a writable C-contiguous host array): value i's part j
        goes to byte offset ``part_offsets[i * n_parts + j]``. Returns one
        ChunkStatus per key; the parts of a value that is not OK are zeroed
        (never left with data). ``drop_corrupt``: remove refused values from
        the store, so a later put can replace them (a put over an existing
        key keeps the old value)."""
        if self.config.codec != "splitzip":
            raise ValueError("get_values needs codec='splitzip'")
        dtype = _chunk.check_dtype(dtype)
        geo = self._geometry(dtype, n_parts, part_elems)
        dst = _byte_view(dst, "dst", writable=True)
        offsets = _offsets(part_offsets, len(keys) * geo.n_parts)
        if np.unique(offsets).size != offsets.size:
            raise ValueError("get_values: two parts share a destination")
        out = self._get_coded(geo, self.value_keys(keys), dst, offsets)
        if drop_corrupt:
            bad = [s.key for s in out if s.status == "CORRUPT"]
            if bad:
                self.client.batch_remove(bad + [k + TAIL for k in bad], True)
        return out

    def exist_values(self, keys):
        """Per key of ``keys``: True if its value (its head object) is in the
        store. A True can still miss at get (evicted in between)."""
        if not keys:
            return []
        res = self.client.batch_is_exist(self.value_keys(keys))
        return [r == 1 for r in res]

    def remove_values(self, keys, force=True):
        """Removes the values of ``keys`` (and their tail objects)."""
        if not keys:
            return []
        vk = self.value_keys(keys)
        res = self.client.batch_remove(vk, force)
        if self.config.size_class_split:
            self.client.batch_remove([k + TAIL for k in vk], force)
        return res

    def _get_raw(self, items):
        out = []
        g = self._block_geometry().group
        for gi in range(0, len(items), g):
            grp = items[gi:gi + g]
            if self.config.raw_layout == "kv_keys":
                r2 = self.client.batch_get_into(
                    [k + s for k, _, _ in grp for s in ("~k", "~v")],
                    [p.ctypes.data for _, a, b in grp for p in (a, b)],
                    [p.nbytes for _, a, b in grp for p in (a, b)])
                res = [x + y if x >= 0 and y >= 0 else (x if x < 0 else y)
                       for x, y in zip(r2[0::2], r2[1::2])]
            else:
                res = self.client.batch_get_into_multi_buffers(
                    [k for k, _, _ in grp], [[a.ctypes.data, b.ctypes.data] for _, a, b in grp],
                    [[a.nbytes, b.nbytes] for _, a, b in grp])
            for (k, a, b), r in zip(grp, res):
                if r == a.nbytes + b.nbytes:
                    out.append(ChunkStatus(k, "OK", stored_bytes=r))
                else:
                    a.view(np.uint8)[...] = 0
                    b.view(np.uint8)[...] = 0
                    st = "NOT_FOUND" if r == -704 else "STORE_ERROR"
                    out.append(ChunkStatus(k, st, mooncake_error(r) if r < 0 else
                                           f"value of {r} bytes, expected {a.nbytes + b.nbytes}"))
        return out

    def _fetch_group(self, geo, grp, slot):
        t0 = time.perf_counter()
        try:
            return self._fetch_group_timed(geo, grp, slot)
        finally:
            self.timings["fetch"] += time.perf_counter() - t0

    def _fetch_group_timed(self, geo, grp, slot):
        """Fetches the values of a group into the slot; returns per chunk the
        value size or a negative Mooncake code (int64 array), and the
        indices of the chunks whose head is a size class but which have no
        tail object."""
        keys = grp[0]
        n = len(keys)
        G = geo.group
        if not self.config.size_class_split:
            return np.asarray(self.client.batch_get_into(
                keys, slot.head_ptrs[:n], slot.fetch_caps[:n]), np.int64), []
        # Heads and tails in one batch: tails land in the slot's tail area and
        # are moved (a few hundred bytes each) behind their heads.
        full = n == G
        res = np.asarray(self.client.batch_get_into(
            keys + [k + TAIL for k in keys],
            slot.fetch_ptrs if full else slot.fetch_ptrs[:n] + slot.fetch_ptrs[G:G + n],
            slot.fetch_caps if full else slot.fetch_caps[:n] + slot.fetch_caps[G:G + n]), np.int64)
        heads, tails = res[:n], res[n:]
        total = heads + tails
        if heads.min() > 0 and tails.min() > 0 and total.max() <= geo.bound:
            # Every value came as head + tail (the usual case): join them all.
            # (A stale tail joined to a whole value fails the header's
            # frame-size check and is refused, never decoded.)
            _core.copy_spans(slot.mem, geo.slot_offsets[:n] + heads.astype(np.uint64),
                             slot.tail_offsets[:n], tails.astype(np.uint64))
            return total, []
        out = heads.copy()
        split = (heads > 0) & (size_classes_floor(heads) == heads)  # else no head, or a whole value
        # A tail that cannot fit behind its head: the head alone is refused later.
        joined = np.flatnonzero(split & (tails > 0) & (total <= geo.bound))
        if joined.size:
            _core.copy_spans(slot.mem, (joined * geo.bound + heads[joined]).astype(np.uint64),
                             slot.tail_offsets[joined], tails[joined].astype(np.uint64))
            out[joined] = total[joined]
        unread = split & (tails <= 0) & (tails != -704)
        out[unread] = tails[unread]  # the tail exists but could not be read
        # No tail: the head is the whole value, or the tail is lost.
        return out, np.flatnonzero(split & (tails == -704)).tolist()

    def _decode_group(self, geo, grp, slot, fetched, out):
        keys, offsets, dst = grp
        res, no_tail = fetched
        n = len(keys)
        status = None
        if no_tail:
            status = [None] * n
            for i in no_tail:
                r = int(res[i])
                if self._tail_lost(keys[i], slot.buf[i * geo.bound:i * geo.bound + r]):
                    status[i] = ChunkStatus(keys[i], "NOT_FOUND", "tail object missing (evicted or lost)")
                    res[i] = 0
        have = res > 0
        n_have = int(have.sum())
        why = None
        if n_have == n:
            why = _core.decode_chunks(slot.buf, geo.slot_offsets[:n], res.astype(np.uint64), keys, dst,
                                      offsets, geo.n_parts, geo.part_elems, geo.dtype,
                                      _chunk.DTYPE_IDS[geo.dtype], True, self.config.backend,
                                      self.config.threads, self._held)
            if status is None and why.count(None) == n:
                out += _all_ok(keys, res.tolist())
                return
        status = status or [None] * n
        if n_have == n:
            hv = list(range(n))
        elif n_have:
            hv = np.flatnonzero(have)
            part_offs = offsets.reshape(-1, geo.n_parts)[hv].reshape(-1)
            why = _chunk.decode_many([keys[i] for i in hv.tolist()], slot.buf, geo.slot_offsets[hv],
                                     res[hv].astype(np.uint64), dst, part_offs, geo.n_parts,
                                     geo.part_elems, dtype=geo.dtype, backend=self.config.backend,
                                     threads=self.config.threads, tables=self._held)
            hv = hv.tolist()
        else:
            hv, why = [], []
        missing = {}
        if any(w is not None and _MISSING in w for w in why):
            why, missing = self._decode_missing(geo, keys, slot, res, dst, offsets, hv, why)
        for i, w in zip(hv, why):
            r = int(res[i])
            status[i] = ChunkStatus(keys[i], "OK", "", r) if w is None else \
                ChunkStatus(keys[i], "MISSING_TABLES", missing[i], r) if i in missing else \
                ChunkStatus(keys[i], "CORRUPT", w, r)
        bad = []
        for i, r in enumerate(res.tolist()):
            st = status[i]
            if st is None:
                st = status[i] = (ChunkStatus(keys[i], "NOT_FOUND", mooncake_error(r)) if r == -704 else
                                  ChunkStatus(keys[i], "STORE_ERROR",
                                              mooncake_error(r) if r < 0 else "empty value"))
            if st.status != "OK":
                bad.append(i)
        pb = geo.part_bytes
        for i in bad:  # a chunk that is not OK leaves zeros, never data
            for off in offsets[geo.n_parts * i:geo.n_parts * (i + 1)].tolist():
                dst[off:off + pb] = 0
        out += status

    # -- table sets ---------------------------------------------------------

    def publish_tables(self):
        """Puts each configured table set into the pool under tables_key(id),
        once (a set already there is left as it is). Returns {id: code}, 0
        for a set stored or already present."""
        sets = list(self._own_sets.values())
        if not sets:
            return {}
        keys = [tables_key(self.config.namespace, ts.id) for ts in sets]
        have = self.client.batch_is_exist(keys)
        out = {}
        for ts, k, e in zip(sets, keys, have):
            out[ts.id] = 0 if e == 1 else self.client.put(k, ts.to_bytes(), self._rc)
        return out

    def held_tables(self):
        """The ids of the table sets this store decodes with now."""
        return [ts.id for ts in (self._held or [])]

    def _fetch_tables(self, ids):
        """Reads the sets ``ids`` (not held) from the pool; returns ({id: why}
        for those it could not get, [the sets read]). A stored set is used
        only if its bytes pass the set's own checks and carry the id its key
        names."""
        failed = {}
        got = []
        for sid in ids:
            key = tables_key(self.config.namespace, sid)
            data = self.client.get(key)
            if not data:
                failed[sid] = f"table set {sid:016x} is not held and not in the store ({key})"
                continue
            try:
                ts = _core.TableSet.from_bytes(data)
                if ts.id != sid:
                    raise ValueError(f"holds set {ts.id:016x}")
            except ValueError as e:
                # Remove it so that a writer's publish_tables() can put it again.
                self.client.remove(key, True)
                with self._lock:
                    self.tables_refused += 1
                failed[sid] = f"stored table set {sid:016x} refused ({e}); removed from the store"
                continue
            got.append(ts)
            with self._lock:
                self._fetched[sid] = ts
                self._fetched.move_to_end(sid)
                while len(self._fetched) > int(self.config.tables_cache):
                    self._fetched.popitem(last=False)
                self._held = list(self._own_sets.values()) + list(self._fetched.values())
                self.tables_fetched += 1
        return failed, got

    def _decode_missing(self, geo, keys, slot, res, dst, offsets, hv, why):
        """Chunks refused for MISSING_TABLES: fetches the sets their frames
        name from the pool and decodes them again. Returns the new reasons
        (aligned with hv) and {chunk index: detail} of those still missing."""
        before = list(self._held or [])
        held = {ts.id for ts in before}
        need = {}  # chunk index -> set ids its frames name that are not held
        for k, w in enumerate(why):
            if w is None or _MISSING not in w:
                continue
            i = hv[k]
            r = int(res[i])
            try:
                ids = _frame_table_ids(keys[i], slot.buf[i * geo.bound:i * geo.bound + r])
            except _chunk.ChunkError:
                continue  # stays CORRUPT
            need[k] = [x for x in ids if x not in held] or ids
        failed, got = self._fetch_tables(sorted({x for v in need.values() for x in v if x not in held}))
        # The sets held before and those just read decode this call, even if
        # the bounded cache let some of them go already.
        use = before + [ts for ts in got if ts.id not in held]
        retry = [k for k, v in need.items() if not any(x in failed for x in v)]
        why = list(why)
        if retry:
            sub = [hv[k] for k in retry]
            part_offs = offsets.reshape(-1, geo.n_parts)[sub].reshape(-1)
            why2 = _chunk.decode_many([keys[i] for i in sub], slot.buf, geo.slot_offsets[sub],
                                      res[sub].astype(np.uint64), dst, part_offs, geo.n_parts,
                                      geo.part_elems, dtype=geo.dtype, backend=self.config.backend,
                                      threads=self.config.threads, tables=use)
            for k, w in zip(retry, why2):
                why[k] = w
        missing = {}
        for k, ids in need.items():
            if why[k] is not None and _MISSING in why[k]:
                missing[hv[k]] = "; ".join(failed.get(x, f"table set {x:016x} missing") for x in ids)
        return why, missing

    @staticmethod
    def _tail_lost(key, head):
        """True if the value's (valid) header says it is longer than its head."""
        try:
            _chunk.parse(key, head, exact=False)
            return False
        except _chunk.ChunkError as e:
            return e.reason.startswith("frame sizes add up")

    def _get_coded(self, geo, keys, dst, offsets):
        g, np_ = geo.group, geo.n_parts
        groups = [(keys[i:i + g], offsets[np_ * i:np_ * (i + g)], dst) for i in range(0, len(keys), g)]
        out = []
        if not groups:
            return out
        slots = self._take_slots(geo)
        try:
            fut = self._pool.submit(self._fetch_group, geo, groups[0], slots[0])
            for gi, grp in enumerate(groups):
                res = fut.result()
                if gi + 1 < len(groups):
                    fut = self._pool.submit(self._fetch_group, geo, groups[gi + 1], slots[(gi + 1) % 2])
                t0 = time.perf_counter()
                self._decode_group(geo, grp, slots[gi % 2], res, out)
                self.timings["decode"] += time.perf_counter() - t0
        finally:
            self._give_slots(geo, slots)
        return out

    # -- lookup and removal -------------------------------------------------

    def lookup_prefix(self, block_hashes):
        """How many leading blocks have every layer in the store (a prefix hit)."""
        keys = self.keys(block_hashes)
        exist = self.client.batch_is_exist(keys) if keys else []
        L = self.layout.layers
        for i in range(len(block_hashes)):
            if not all(e == 1 for e in exist[i * L:(i + 1) * L]):
                return i
        return len(block_hashes)

    def remove_blocks(self, block_hashes, force=True):
        """Removes the chunks (and their tail objects); returns the head codes."""
        keys = self.keys(block_hashes)
        if not keys:
            return []
        if self.config.codec == "raw" and self.config.raw_layout == "kv_keys":
            res = self.client.batch_remove([k + s for k in keys for s in ("~k", "~v")], force)
            return [x or y for x, y in zip(res[0::2], res[1::2])]
        res = self.client.batch_remove(keys, force)
        if self.config.codec == "splitzip" and self.config.size_class_split:
            self.client.batch_remove([k + TAIL for k in keys], force)
        return res

    def close(self):
        self._pool.shutdown(wait=True)
        if self._owns_client:
            self.client.close()


_MISSING = "MISSING_TABLES"


def _frame_table_ids(key, value):
    """The table set ids the frames of a chunk value name (0: none)."""
    _, _, spans = _chunk.parse(key, value)
    ids = []
    for off, size in spans:
        try:
            sid = _core.frame_info(value[off:off + size], 0).get("tables_id", 0)
        except ValueError as e:
            raise _chunk.ChunkError(key, str(e)) from None
        if sid and sid not in ids:
            ids.append(sid)
    return ids


def _byte_view(a, what, writable=False):
    """The flat uint8 view of a C-contiguous host numpy array (no copy)."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{what} must be a numpy array")
    if not a.flags.c_contiguous:
        raise ValueError(f"{what} must be C-contiguous")
    if writable and not a.flags.writeable:
        raise ValueError(f"{what} is read-only")
    return a.reshape(-1).view(np.uint8)


def _offsets(part_offsets, count):
    o = np.asarray(part_offsets)
    if o.ndim != 1 or o.size != count:
        raise ValueError(f"{count} part offsets expected, got {o.size}")
    if o.size and (o.dtype.kind not in "iu" or (o.dtype.kind == "i" and o.min() < 0)):
        raise ValueError("part offsets must be non-negative integers")
    return o.astype(np.uint64, copy=False)
