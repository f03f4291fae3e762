# SPDX-License-Identifier: Apache-2.0
"""An independent numpy reading of core/FORMAT.md, used to check frames the
bindings produce against the written spec rather than against the library.

Only the decoding direction and only well-formed frames: validation of bad
frames is the library's job and is tested through the bindings. Reads format
v1 and v2; the hash functions (XXH64, XXH3-64) come from the package, what
they are applied to is read from the spec here.
"""

import struct

import numpy as np

import splitzip_kv

BLOCK_LOG2 = 16  # v2 checksum block: 2^16 original bytes

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
    count, mode, block_log2, reserved = frame[48], frame[49], frame[50], frame[51]
    check = struct.unpack_from("<I", frame, 52)[0]
    checksum = struct.unpack_from("<Q", frame, 56)[0]
    return dict(magic=magic, version=version, dtype=dtype, flags=flags, chunk_log2=chunk_log2,
                n=n, escapes=escapes, frame_size=frame_size, codebook=codebook, count=count,
                mode=mode, block_log2=block_log2, reserved=reserved, check=check,
                checksum=checksum)


def header_check(header, version):
    """Low 32 bits of the header hash with the check field zeroed: XXH64 in
    v1, XXH3-64 in v2 (seed 0 both)."""
    h = bytearray(header[:64])
    h[52:56] = b"\0\0\0\0"
    full = splitzip_kv.xxh64(bytes(h)) if version == 1 else splitzip_kv.xxh3_64(bytes(h))
    return full & 0xFFFFFFFF


def block_hashes(data):
    """v2: XXH3-64 of each 2^16-byte block of the original bytes."""
    data = bytes(data)
    size = 1 << BLOCK_LOG2
    return [splitzip_kv.xxh3_64(data[i:i + size]) for i in range(0, len(data), size)]


def content_checksum(data, version=2):
    """The header's content_checksum for original bytes `data`: v1 XXH64 of
    all bytes; v2 XXH3-64 of the block hashes as u64 little-endian."""
    if version == 1:
        return splitzip_kv.xxh64(bytes(data))
    return splitzip_kv.xxh3_64(struct.pack(f"<{len(block_hashes(data))}Q", *block_hashes(data)))


def decode(frame):
    """Decoded values of one frame as raw unsigned integers (bit patterns)."""
    frame = np.frombuffer(bytes(frame), dtype=np.uint8)
    h = parse_header(frame)
    assert h["magic"] == b"SZKV" and h["version"] in (1, 2)
    assert h["check"] == header_check(frame, h["version"])
    v2, has_checksum = h["version"] == 2, bool(h["flags"] & 2)
    assert h["reserved"] == 0
    if v2:
        assert h["mode"] == 0 and h["block_log2"] == (BLOCK_LOG2 if has_checksum else 0)
    else:
        assert h["mode"] == 0 and h["block_log2"] == 0
    size, exp_bits, shift, m, k, high = GEOMETRY[h["dtype"]]
    n = h["n"]
    utype = UINT[size]
    n_checks = -(-(n * size) // (1 << BLOCK_LOG2)) if v2 and has_checksum else 0

    def finish(values, end):
        """Checks stream 7 (v2) and the frame end, then the content checksum."""
        data = values.tobytes()
        if n_checks:
            checks = frame[end:end + 4 * n_checks].view("<u4")
            assert list(checks) == [x & 0xFFFFFFFF for x in block_hashes(data)]
            end = align16(end + 4 * n_checks)
        assert end == h["frame_size"], (end, h["frame_size"])
        if has_checksum:
            assert h["checksum"] == content_checksum(data, h["version"])
        else:
            assert h["checksum"] == 0
        return values

    if h["flags"] & 1:  # stored
        values = frame[64:64 + n * size].view(utype).copy()
        return finish(values, 64 + align16(n * size))

    chunk = 1 << h["chunk_log2"]
    n_chunks = -(-n // chunk)
    sizes = [n * k, (3 * n + 7) // 8 if high else 0, (n + 1) // 2, 2 * n_chunks,
             2 * h["escapes"], h["escapes"]]
    offsets, off = [], 64
    for s in sizes:
        offsets.append(off)
        off = align16(off + s)
    streams_end = off  # stream 7 (v2, CHECKSUM) follows

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
    return finish(value.astype(utype), streams_end)
