# SPDX-License-Identifier: Apache-2.0
"""A minimal DLPack producer built with ctypes.

It exports any memory with any DLPack dtype code and device type, so tests
can reach the bindings' DLPack paths (bfloat16, float8 codes, a CUDA device)
without torch or a GPU. Legacy (unversioned) capsules only.
"""

import ctypes


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _Device),
        ("ndim", ctypes.c_int32),
        ("dtype", _DataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

CODE_UINT, CODE_FLOAT, CODE_BFLOAT, CODE_FLOAT8_E4M3FN, CODE_FLOAT8_E5M2 = 1, 2, 4, 10, 12
DEVICE_CPU, DEVICE_CUDA, DEVICE_CUDA_HOST, DEVICE_ROCM = 1, 2, 3, 10


class Producer:
    """Exports `count` elements of `bits` bits at `address` (owner keeps it alive)."""

    def __init__(self, owner, address, count, code, bits, device_type=DEVICE_CPU, strides=None):
        self.owner = owner
        self.exports = 0
        self._shape = (ctypes.c_int64 * 1)(count)
        self._strides = None if strides is None else (ctypes.c_int64 * 1)(strides)
        self._deleter = _Deleter(self._release)
        self._managed = _Managed()
        t = self._managed.dl_tensor
        t.data = address
        t.device = _Device(device_type, 0)
        t.ndim = 1
        t.dtype = _DataType(code, bits, 1)
        t.shape = self._shape
        t.strides = self._strides
        t.byte_offset = 0
        self._managed.deleter = self._deleter
        self._device = device_type

    def _release(self, _ptr):
        self.exports -= 1

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        self.exports += 1
        return _capsule_new(ctypes.addressof(self._managed), b"dltensor", None)

    def __dlpack_device__(self):
        return (self._device, 0)


def from_numpy(arr, code, bits, device_type=DEVICE_CPU, strides=None):
    """Exports a numpy array's memory under the given DLPack type."""
    count = arr.nbytes * 8 // bits if strides is None else arr.size
    return Producer(arr, arr.ctypes.data, count, code, bits, device_type, strides)


class NumpyDLPack:
    """Hides a numpy array behind numpy's own __dlpack__ (no buffer protocol)."""

    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, **kwargs):
        return self._arr.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()
