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
import threading

import numpy as np

import splitzip_kv as splitzip

MODES = ("fast", "capacity")

# Engine names of the KV dtype -> splitzip dtype.
_DTYPES = {
    "bf16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "torch.float16": "fp16",
    "fp32": "fp32", "float32": "fp32", "float": "fp32", "torch.float32": "fp32",
    "fp8_e5m2": "fp8_e5m2", "float8_e5m2": "fp8_e5m2", "torch.float8_e5m2": "fp8_e5m2",
    "fp8_e4m3": "fp8_e4m3", "float8_e4m3fn": "fp8_e4m3", "torch.float8_e4m3fn": "fp8_e4m3",
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
    """Pages of ``page_bytes`` bytes of ``dtype`` values, held compressed
    within ``capacity_bytes`` of frames, least recently used out first."""

    def __init__(self, capacity_bytes, page_bytes, dtype, *, mode="fast", threads=0,
                 backend=None):
        capacity_bytes = int(capacity_bytes)
        page_bytes = int(page_bytes)
        if capacity_bytes <= 0:
            raise ValueError("capacity_bytes must be positive")
        if page_bytes <= 0:
            raise ValueError("page_bytes must be positive")
        self.dtype = splitzip_dtype(dtype)
        self.mode = check_mode(mode)
        self.capacity_bytes = capacity_bytes
        self.page_bytes = page_bytes
        self.threads = int(threads)
        self.backend = backend
        self._lru = collections.OrderedDict()  # key -> frame (bytes)
        self._lock = threading.Lock()
        self.used_bytes = 0
        # Counters (read them under no lock: they are reports, not control).
        self.stored = 0
        self.evicted = 0
        self.refused = 0     # a single frame larger than the whole budget
        self.corrupt = 0     # values dropped because they did not decode exactly

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

    def frame(self, key):
        """The stored frame of ``key`` or None (for tests and tools)."""
        with self._lock:
            return self._lru.get(key)

    def replace_frame(self, key, frame):
        """Swaps the stored value of a held key (fault injection in tests)."""
        with self._lock:
            old = self._lru[key]
            self._lru[key] = frame
            self.used_bytes += len(frame) - len(old)

    def remove(self, key):
        with self._lock:
            f = self._lru.pop(key, None)
            if f is not None:
                self.used_bytes -= len(f)
            return f is not None

    def clear(self):
        with self._lock:
            self._lru.clear()
            self.used_bytes = 0

    # -- store ---------------------------------------------------------------

    def encode(self, pages):
        """Frames of ``pages`` (host uint8 arrays of page_bytes each), one
        batch call. Runs without the lock."""
        return splitzip.compress_batch(pages, dtype=self.dtype, checksum=True,
                                       mode=self.mode, threads=self.threads,
                                       backend=self.backend)

    def insert(self, keys, frames):
        """Holds ``frames`` under ``keys``, evicting the least recently used
        until each fits. Returns (stored flags, evicted keys)."""
        ok, gone = [], []
        cap = self.capacity_bytes
        lru = self._lru
        with self._lock:
            for k, f in zip(keys, frames):
                n = len(f)
                if n > cap:
                    self.refused += 1
                    ok.append(False)
                    continue
                old = lru.pop(k, None)
                if old is not None:
                    self.used_bytes -= len(old)
                while self.used_bytes + n > cap:
                    ek, ef = lru.popitem(last=False)
                    self.used_bytes -= len(ef)
                    self.evicted += 1
                    gone.append(ek)
                lru[k] = f
                self.used_bytes += n
                self.stored += 1
                ok.append(True)
        return ok, gone

    def put(self, keys, pages):
        """encode + insert of the keys not yet held. Returns stored flags
        (True for a key already held)."""
        keys = list(keys)
        todo = set(self.missing(keys))
        if not todo:
            return [True] * len(keys)
        idx = [i for i, k in enumerate(keys) if k in todo]
        frames = self.encode([pages[i] for i in idx])
        flags, _ = self.insert([keys[i] for i in idx], frames)
        ok = [True] * len(keys)
        for i, f in zip(idx, flags):
            ok[i] = f
        return ok

    # -- load ----------------------------------------------------------------

    def get(self, keys, outs):
        """Decodes the pages of ``keys`` into ``outs`` (writable host uint8
        arrays of page_bytes each), one batch call. Returns a flag per key:
        False for a key not held or whose value does not decode exactly
        (that value is dropped); such an out must not be used."""
        with self._lock:
            frames = [self._lru.get(k) for k in keys]
        ok = [f is not None for f in frames]
        idx = [i for i, f in enumerate(frames) if f is not None]
        if not idx:
            return ok
        fs = [frames[i] for i in idx]
        os_ = [outs[i] for i in idx]
        try:
            self._decode(fs, os_)
        except (splitzip.SplitzipError, ValueError, TypeError):
            # One bad value fails the batch call: find which, one at a time.
            for i, f, o in zip(idx, fs, os_):
                try:
                    self._decode([f], [o])
                except (splitzip.SplitzipError, ValueError, TypeError):
                    ok[i] = False
                    self._drop_corrupt(keys[i], f)
        return ok

    def _decode(self, frames, outs):
        # A frame of another size than its page is refused before decoding
        # (the format's header records the decoded size; frame_info checks it).
        for f in frames:
            info = splitzip.frame_info(f)
            if info["decoded_size"] != self.page_bytes or info["dtype"] != self.dtype \
                    or not info["checksum"] or info["frame_size"] != len(f):
                raise ValueError("frame does not describe this page")
        splitzip.decompress_batch(frames, outs, threads=self.threads, backend=self.backend,
                                  verify_checksum=True, max_output_bytes=self.page_bytes)

    def _drop_corrupt(self, key, frame):
        with self._lock:
            if self._lru.get(key) is frame:
                del self._lru[key]
                self.used_bytes -= len(frame)
            self.corrupt += 1
