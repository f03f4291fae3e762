# SPDX-License-Identifier: Apache-2.0
"""Frame surgery for the CLI tests (stdlib only, no splitzip import).

  frame_tools.py to-v1 IN.sz OUT.sz [ORIGINAL]
      Rewrites a one-frame v2 stream as the equivalent format v1 frame
      (FORMAT.md v1: XXH64 header check, no block-check stream 7, XXH64 of
      all ORIGINAL bytes as content checksum when the frame has CHECKSUM).
  frame_tools.py bomb IN.sz OUT.sz
      A v1 header (from IN's first 64 bytes) that claims a coded bf16 frame
      of 2^50 elements, with a valid header check and nothing after it.
"""
import struct
import sys

M = (1 << 64) - 1
P1, P2, P3, P4, P5 = (11400714785074694791, 14029467366897019727, 1609587929392839161,
                      9650029242287828579, 2870177450012600261)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M


def _round(acc, v):
    return (_rotl((acc + v * P2) & M, 31) * P1) & M


def xxh64(data, seed=0):
    """XXH64 (the v1 format's hash), written from the published algorithm."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed, (seed - P1) & M]
        lanes = struct.unpack_from(f"<{(n // 32) * 4}Q", data, 0)
        for k in range(0, len(lanes), 4):
            v[0] = _round(v[0], lanes[k])
            v[1] = _round(v[1], lanes[k + 1])
            v[2] = _round(v[2], lanes[k + 2])
            v[3] = _round(v[3], lanes[k + 3])
        i = (n // 32) * 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M
        for k in range(4):
            h = ((h ^ _round(0, v[k])) * P1 + P4) & M
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, i)[0]), 27) * P1 + P4) & M
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (struct.unpack_from("<I", data, i)[0] * P1 & M), 23) * P2 + P3) & M
        i += 4
    while i < n:
        h = (_rotl(h ^ (data[i] * P5 & M), 11) * P1) & M
        i += 1
    h ^= h >> 33
    h = (h * P2) & M
    h ^= h >> 29
    h = (h * P3) & M
    h ^= h >> 32
    return h


def align16(x):
    return (x + 15) // 16 * 16


def seal_v1(header):
    """Sets the v1 header check (low 32 bits of XXH64, check field zeroed)."""
    struct.pack_into("<I", header, 52, 0)
    struct.pack_into("<I", header, 52, xxh64(bytes(header)) & 0xFFFFFFFF)


def to_v1(frame, original):
    frame = bytearray(frame)
    assert frame[:4] == b"SZKV" and frame[4] == 2, "not a v2 frame"
    flags = frame[6]
    size = struct.unpack_from("<Q", frame, 24)[0]
    assert size == len(frame), "one frame expected"
    if flags & 2:  # CHECKSUM: drop stream 7, the last stream of the frame
        n, dtype = struct.unpack_from("<Q", frame, 8)[0], frame[5]
        nbytes = n * {1: 2, 2: 2, 3: 4, 4: 1}[dtype]
        assert len(original) == nbytes, "ORIGINAL does not match the frame"
        blocks = (nbytes + 65535) // 65536
        size -= align16(4 * blocks)
        del frame[size:]
        struct.pack_into("<Q", frame, 56, xxh64(original))
    struct.pack_into("<Q", frame, 24, size)
    frame[4] = 1
    frame[49:52] = b"\0\0\0"  # v2 mode and block_log2 are reserved in v1
    header = frame[:64]
    seal_v1(header)
    frame[:64] = header
    return bytes(frame)


def bomb(frame):
    b = bytearray(frame[:64])
    n = 1 << 50
    b[4] = 1
    b[5] = 1  # bf16
    b[6] = 0  # coded, no checksum
    b[49:52] = b"\0\0\0"
    struct.pack_into("<Q", b, 8, n)
    struct.pack_into("<Q", b, 16, 0)
    struct.pack_into("<Q", b, 56, 0)
    # coded bf16 frame: residual n, codes n/2, counts 2 per chunk, 16-aligned
    struct.pack_into("<Q", b, 24, align16(64 + n + n // 2 + 2 * (n >> b[7])))
    seal_v1(b)
    return bytes(b)


def main(argv):
    cmd, src, dst = argv[1], argv[2], argv[3]
    data = open(src, "rb").read()
    if cmd == "to-v1":
        original = open(argv[4], "rb").read() if len(argv) > 4 else b""
        out = to_v1(data, original)
    elif cmd == "bomb":
        out = bomb(data)
    else:
        sys.exit(f"unknown command {cmd}")
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main(sys.argv)
