# SPDX-License-Identifier: Apache-2.0
"""An independent numpy reading of core/FORMAT.md, used to check frames the
bindings produce against the written spec rather than against the library.

Only the decoding direction and only well-formed frames: validation of bad
frames is the library's job and is tested through the bindings.
"""

import struct

import numpy as np

# id -> (bytes, exponent bits, exponent shift, mantissa bits M, residual byte part k, 3-bit part)
GEOMETRY = {
    1: (2, 8, 7, 7, 1, False),
    2: (2, 5, 10, 10, 1, True),
    3: (4, 8, 23, 23, 3, False),
    4: (1, 5, 2, 2, 0, True),
}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def align16(x):
    return (x + 15) & ~15


def parse_header(frame):
    (magic, version, dtype, flags, chunk_log2, n, escapes, frame_size) = struct.unpack_from(
        "<4sBBBBQQQ", frame, 0)
    codebook = bytes(frame[32:48])
    count = frame[48]
    checksum = struct.unpack_from("<Q", frame, 56)[0]
    return dict(magic=magic, version=version, dtype=dtype, flags=flags, chunk_log2=chunk_log2,
                n=n, escapes=escapes, frame_size=frame_size, codebook=codebook, count=count,
                checksum=checksum)


def decode(frame):
    """Decoded values of one frame as raw unsigned integers (bit patterns)."""
    frame = np.frombuffer(bytes(frame), dtype=np.uint8)
    h = parse_header(frame)
    assert h["magic"] == b"SZKV" and h["version"] == 1
    size, exp_bits, shift, m, k, high = GEOMETRY[h["dtype"]]
    n = h["n"]
    utype = UINT[size]
    if h["flags"] & 1:  # stored
        assert h["frame_size"] == 64 + align16(n * size)
        return frame[64:64 + n * size].view(utype).copy()

    chunk = 1 << h["chunk_log2"]
    n_chunks = -(-n // chunk)
    sizes = [n * k, (3 * n + 7) // 8 if high else 0, (n + 1) // 2, 2 * n_chunks,
             2 * h["escapes"], h["escapes"]]
    offsets, off = [], 64
    for s in sizes:
        offsets.append(off)
        off = align16(off + s)
    assert off == h["frame_size"], (off, h["frame_size"])

    def stream(i):
        return frame[offsets[i]:offsets[i] + sizes[i]]

    residual = np.zeros(n, dtype=np.uint64)
    if k:
        parts = stream(0).reshape(n, k).astype(np.uint64)
        for b in range(k):
            residual |= parts[:, b] << np.uint64(8 * b)
    if high:
        packed = np.unpackbits(stream(1), bitorder="little")[: 3 * n].reshape(n, 3).astype(np.uint64)
        top = packed[:, 0] | (packed[:, 1] << np.uint64(1)) | (packed[:, 2] << np.uint64(2))
        residual |= top << np.uint64(8 * k)

    codes = stream(2)
    nibbles = np.empty(2 * len(codes), dtype=np.uint8)
    nibbles[0::2] = codes & 15
    nibbles[1::2] = codes >> 4
    cb = np.frombuffer(h["codebook"], dtype=np.uint8)
    exponent = cb[nibbles[:n]].astype(np.uint64)

    counts = stream(3).view(np.uint16)
    positions = stream(4).view(np.uint16)
    raw = stream(5)
    e = 0
    for c in range(n_chunks):
        for _ in range(int(counts[c])):
            exponent[c * chunk + int(positions[e])] = raw[e]
            e += 1
    assert e == h["escapes"]

    sign = residual >> np.uint64(m)
    mantissa = residual & np.uint64((1 << m) - 1)
    value = (sign << np.uint64(shift + exp_bits)) | (exponent << np.uint64(shift)) | mantissa
    return value.astype(utype)
