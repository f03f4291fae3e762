# SPDX-License-Identifier: Apache-2.0
"""The exception every splitzip failure raises."""


class SplitzipError(ValueError):
    """A splitzip operation failed.

    ``status`` is the library's Status name (``"BAD_MAGIC"``, ``"TRUNCATED"``,
    ...; see core/FORMAT.md section 9), ``code`` its stable number and
    ``message`` the human-readable explanation. ``corrupt_block`` is set for a
    ``CHECKSUM_MISMATCH`` on a format v2 frame: the index of the first
    checksum block (2**16 original bytes each, ``frame_info()["checksum_block_size"]``)
    whose check failed, so bytes ``[b * size, (b + 1) * size)`` of that frame's
    data are suspect. It is None otherwise (v1 frames hash all bytes at once).
    """

    def __init__(self, status, message, code=None, corrupt_block=None):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.code = code
        self.corrupt_block = corrupt_block

    def __reduce__(self):
        # Keeps the status across pickling (multiprocessing, concurrent.futures).
        return (type(self), (self.status, self.message, self.code, self.corrupt_block))


# Stable numbers of the statuses raised from Python code (splitzip.hpp).
_CODES = {
    "INVALID_ARGUMENT": 1,
    "LIMIT_EXCEEDED": 13,
    "BACKEND_UNAVAILABLE": 21,
    "UNSUPPORTED_MEMORY": 22,
    "UNDEFINED_MODE": 29,
    "MISSING_TABLES": 30,
}


def error(status, message):
    """Builds a SplitzipError for a status detected on the Python side."""
    return SplitzipError(status, message, _CODES.get(status))


def invalid(message):
    return error("INVALID_ARGUMENT", message)
