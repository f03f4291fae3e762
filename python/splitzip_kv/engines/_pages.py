# SPDX-License-Identifier: Apache-2.0
"""The compressed page cache behind both engine integrations.

A thread-safe LRU map from an engine's page key to one splitzip frame of the
page (checksum always on), with its capacity counted in the frames' bytes:
the same budget holds as many pages as they compress to. Pages are coded a
job at a time with the codec's batch calls (compress_batch, decompress_batch
into the engine's own buffers).

A value that does not decode into exactly the page it stands for (flipped
bits, a truncated or foreign frame, another size) is dropped and reported as
a miss: the caller never sees its bytes as data.
"""

import collections
import struct
import threading

import numpy as np

import splitzip_kv as splitzip
from splitzip_kv import _api, _core

MODES = ("fast", "capacity")

# FORMAT.md 4.1: magic, version, dtype id, flags, chunk_log2, n_elems,
# (escape_count), frame_size. Read here because frame_info() per frame cost
# as much as the tier's other per-page steps together; the codec still
# verifies the header's own check and the content checksum while decoding.
_HEADER = struct.Struct("<4sBBBBQ8xQ")
_MAGIC = b"SZKV"
_FLAG_CHECKSUM = 2
_DTYPE_ID = {"bf16": (1, 2), "fp16": (2, 2), "fp32": (3, 4), "fp8_e5m2": (4, 1),
             "fp8_e4m3": (5, 1)}

# Engine names of the KV dtype -> splitzip dtype.
_DTYPES = {
    "bf16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "torch.float16": "fp16",
    "fp32": "fp32", "float32": "fp32", "float": "fp32", "torch.float32": "fp32",
    "fp8_e5m2": "fp8_e5m2", "float8_e5m2": "fp8_e5m2", "torch.float8_e5m2": "fp8_e5m2",
    "fp8": "fp8_e4m3", "fp8_e4m3": "fp8_e4m3", "float8_e4m3fn": "fp8_e4m3", "torch.float8_e4m3fn": "fp8_e4m3",
}


def splitzip_dtype(name):
    """The splitzip dtype for an engine's dtype name (str or torch dtype)."""
    d = _DTYPES.get(str(name))
    if d is None:
        raise ValueError(f"KV dtype {name!r} is not one splitzip codes "
                         f"(bf16, fp16, fp32, fp8_e5m2, fp8_e4m3)")
    return d


def check_mode(mode):
    if mode not in MODES:
        raise ValueError(f"mode must be 'fast' or 'capacity', not {mode!r}")
    return mode


class CompressedPageCache:
    """Values of ``dtype`` pages held compressed within ``capacity_bytes`` of
    frames, least recently used out first. A value is one page or a few
    parts of one (SGLang's K and V of a page): a tuple of frames, stored,
    evicted and refused together."""

    def __init__(self, capacity_bytes, dtype, *, mode="fast", threads=0, backend=None, tables=None):
        capacity_bytes = int(capacity_bytes)
        if capacity_bytes <= 0:
            raise ValueError("capacity_bytes must be positive")
        self.dtype = splitzip_dtype(dtype)
        self.mode = check_mode(mode)
        self.capacity_bytes = capacity_bytes
        self.threads = int(threads)
        self.backend = backend
        self._mode_id = _api._mode(self.mode)
        _api._check_common(10, self.threads)
        # Capacity table sets (a list of TableSet): values are coded with the
        # first of this dtype; frames naming any of them decode.
        self.tables = list(tables or [])
        if self.tables and self.mode != "capacity":
            raise ValueError("table sets need mode 'capacity'")
        self._write_set = next((ts for ts in self.tables if ts.dtype == self.dtype), None)
        self._held = self.tables or None
        self._lru = collections.OrderedDict()  # key -> (frames tuple, stored bytes)
        self._lock = threading.Lock()
        self.used_bytes = 0
        # Counters (reports, read without the lock).
        self.stored = 0
        self.evicted = 0
        self.refused = 0     # a value larger than the whole budget
        self.corrupt = 0     # values dropped because they did not decode exactly

    @staticmethod
    def itemsize(dtype):
        """Bytes per value of ``dtype`` (an engine's or splitzip's name)."""
        return _DTYPE_ID[splitzip_dtype(dtype)][1]

    # -- queries -------------------------------------------------------------

    def __len__(self):
        return len(self._lru)

    def __contains__(self, key):
        return key in self._lru

    def touch(self, key):
        """True if ``key`` is held (and marks it recently used)."""
        with self._lock:
            if key in self._lru:
                self._lru.move_to_end(key)
                return True
            return False

    def missing(self, keys):
        """The keys of ``keys`` not held."""
        lru = self._lru
        with self._lock:
            return [k for k in keys if k not in lru]

    def frames(self, key):
        """The stored frames of ``key`` (a tuple) or None (tests and tools)."""
        with self._lock:
            v = self._lru.get(key)
            return None if v is None else v[0]

    def replace_frames(self, key, frames):
        """Swaps the stored frames of a held key (fault injection in tests)."""
        frames = tuple(frames)
        n = sum(len(f) for f in frames)
        with self._lock:
            _, old = self._lru[key]
            self._lru[key] = (frames, n)
            self.used_bytes += n - old

    def remove(self, key):
        with self._lock:
            v = self._lru.pop(key, None)
            if v is not None:
                self.used_bytes -= v[1]
            return v is not None

    def clear(self):
        with self._lock:
            self._lru.clear()
            self.used_bytes = 0

    # -- store ---------------------------------------------------------------

    def encode(self, parts):
        """Frames of ``parts`` (contiguous host uint8 arrays), one batch call;
        runs without the lock. The extension is called directly: the public
        compress_batch's per-array checks cost more than a 4 KiB page's
        coding, and these parts are the tiers' own byte views."""
        return _core.compress_batch(parts, self.dtype, None, 10, True, self.backend, self.threads,
                                    self._mode_id, None, False, self._write_set)

    def insert(self, keys, frames, nparts=1):
        """Holds ``frames`` (``nparts`` consecutive frames per key) under
        ``keys``, evicting the least recently used until each fits.
        Returns (stored flags, evicted keys)."""
        ok, gone = [], []
        cap = self.capacity_bytes
        lru = self._lru
        with self._lock:
            for i, k in enumerate(keys):
                fs = tuple(frames[i * nparts:(i + 1) * nparts])
                n = 0
                for f in fs:
                    n += len(f)
                if n > cap:
                    self.refused += 1
                    ok.append(False)
                    continue
                old = lru.pop(k, None)
                if old is not None:
                    self.used_bytes -= old[1]
                while self.used_bytes + n > cap:
                    ek, ev = lru.popitem(last=False)
                    self.used_bytes -= ev[1]
                    self.evicted += 1
                    gone.append(ek)
                lru[k] = (fs, n)
                self.used_bytes += n
                self.stored += 1
                ok.append(True)
        return ok, gone

    def put(self, keys, parts, nparts=1):
        """encode + insert of the keys not yet held (``parts``: nparts
        consecutive arrays per key). Returns stored flags (True for a key
        already held)."""
        keys = list(keys)
        todo = set(self.missing(keys))
        if not todo:
            return [True] * len(keys)
        idx = [i for i, k in enumerate(keys) if k in todo]
        frames = self.encode([parts[i * nparts + j] for i in idx for j in range(nparts)])
        flags, _ = self.insert([keys[i] for i in idx], frames, nparts)
        ok = [True] * len(keys)
        for i, f in zip(idx, flags):
            ok[i] = f
        return ok

    # -- load ----------------------------------------------------------------

    def get(self, keys, outs, nparts=1):
        """Decodes the values of ``keys`` into ``outs`` (nparts writable host
        uint8 arrays per key, each the size of its part), one batch call.
        Returns a flag per key: False for a key not held or whose value does
        not decode exactly into its outs (that value is dropped); the outs
        of a False key must not be used."""
        with self._lock:
            vals = [self._lru.get(k) for k in keys]
        ok = [v is not None for v in vals]
        idx = [i for i, v in enumerate(vals) if v is not None]
        if not idx:
            return ok
        fs, os_ = [], []
        for i in idx:
            fs.extend(vals[i][0])
            os_.extend(outs[i * nparts:(i + 1) * nparts])
        if self._decode(fs, os_):
            return ok
        # One bad value fails the batch call: find which, one value at a time.
        for i in idx:
            f = vals[i][0]
            if not self._decode(list(f), outs[i * nparts:(i + 1) * nparts]):
                ok[i] = False
                self._drop_corrupt(keys[i], vals[i])
        return ok

    def _decode(self, frames, outs):
        """True if every frame decodes exactly into its out."""
        if len(frames) != len(outs):
            return False
        dtype_id, item = _DTYPE_ID[self.dtype]
        unpack = _HEADER.unpack_from
        try:
            # The header's dtype, size and checksum flag must match the out:
            # a shorter frame would leave part of it unwritten.
            for f, o in zip(frames, outs):
                if len(f) < 64:
                    return False
                magic, _, did, flags, _, n, fsize = unpack(f, 0)
                if magic != _MAGIC or did != dtype_id or not flags & _FLAG_CHECKSUM \
                        or n * item != o.nbytes or fsize != len(f):
                    return False
            # Byte outs of the checked sizes: straight to the extension.
            _core.decompress_batch(frames, outs, self.backend, self.threads, 0, True, False, self._held)
            return True
        except (splitzip.SplitzipError, ValueError, TypeError):
            return False

    def _drop_corrupt(self, key, val):
        with self._lock:
            if self._lru.get(key) is val:
                del self._lru[key]
                self.used_bytes -= val[1]
            self.corrupt += 1
