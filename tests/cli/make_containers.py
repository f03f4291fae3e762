#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes small .npy and .safetensors files for the CLI tests using only the
standard library (numpy may not be installed). Each payload is also written
raw, so the test can compare the decompressed output with it.

usage: make_containers.py OUTDIR SOURCE.bf16 SOURCE.f32
"""
import json
import os
import struct
import sys


def npy(path, descr, shape, payload, version=1, fortran=False):
    # numpy's own layout: magic, version, little-endian header length, a dict
    # literal padded with spaces to a 64-byte boundary, ending in a newline.
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, fortran, "(%s)" % "".join("%d, " % d for d in shape) if len(shape) != 1 else "(%d,)" % shape[0])
    prefix = 10 if version == 1 else 12
    pad = (-(prefix + len(header) + 1)) % 64
    header = (header + " " * pad + "\n").encode("latin1")
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([version, 0]))
        f.write(struct.pack("<H" if version == 1 else "<I", len(header)))
        f.write(header)
        f.write(payload)


def safetensors(path, tensors, metadata=None, pad_header_to=8, extra_spaces=0):
    # tensors: list of (name, dtype, shape, payload), laid out in order.
    header, blob = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, payload in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(blob), len(blob) + len(payload)]}
        blob += payload
    text = json.dumps(header).encode()
    # Odd padding puts the payload at an odd offset, exercising the copy to
    # aligned memory.
    text += b" " * ((-len(text)) % pad_header_to + extra_spaces)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.write(blob)


def main():
    out, bf16_src, f32_src = sys.argv[1:4]
    bf16 = open(bf16_src, "rb").read()[:2 * 4096]
    f32 = open(f32_src, "rb").read()[:4 * 3000]
    # fp16 from the f32 values (struct's 'e' rounds to nearest even).
    vals = struct.unpack("<%df" % (len(f32) // 4), f32)
    f16 = struct.pack("<%de" % len(vals), *[max(-65504.0, min(65504.0, v)) for v in vals])
    e5m2 = bytes(b >> 8 for b in struct.unpack("<%dH" % (len(f16) // 2), f16))  # fp16 -> e5m2 by truncation

    def raw(name, data):
        open(os.path.join(out, name), "wb").write(data)

    raw("bf16.raw", bf16)
    raw("f32.raw", f32)
    raw("f16.raw", f16)
    raw("e5m2.raw", e5m2)
    npy(os.path.join(out, "f16.npy"), "<f2", (3000,), f16)
    npy(os.path.join(out, "f32.npy"), "<f4", (10, 300), f32, version=2)
    npy(os.path.join(out, "bf16_v2.npy"), "<V2", (64, 64), bf16)     # ml_dtypes bfloat16
    npy(os.path.join(out, "bf16_named.npy"), "bfloat16", (4096,), bf16)
    npy(os.path.join(out, "bf16_u2.npy"), "<u2", (4096,), bf16)      # needs --dtype bf16
    npy(os.path.join(out, "e5m2.npy"), "float8_e5m2", (3000,), e5m2)
    npy(os.path.join(out, "empty.npy"), "<f2", (0,), b"")
    npy(os.path.join(out, "fortran.npy"), "<f4", (30, 100), f32, fortran=True)
    npy(os.path.join(out, "scalar.npy"), "<f2", (), f16[:2])
    # Every dtype kind in one file, the JSON header ending in 13 padding
    # spaces; the whole file must come back byte for byte.
    safetensors(os.path.join(out, "mixed.safetensors"), [
        ("k", "BF16", [64, 64], bf16),
        ("h", "F16", [3000], f16),
        ("v", "F32", [3000], f32),
        ("pos", "I64", [5], struct.pack("<5q", 0, 1, 2, -3, 1 << 40)),
        ("empty", "F16", [0], b""),
        ("mask", "U8", [7], bytes([0, 1, 1, 0, 255, 7, 9])),
    ], metadata={"format": "pt"}, pad_header_to=8, extra_spaces=13)
    # Malformed: shape says more data than the file holds.
    npy(os.path.join(out, "short.npy"), "<f2", (3001,), f16)
    npy(os.path.join(out, "bigendian.npy"), ">f2", (3000,), f16)
    with open(os.path.join(out, "badlen.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", 60000) + b"{'descr': '<f2'}")

    safetensors(os.path.join(out, "model.safetensors"), [
        ("layer0.k", "BF16", [64, 64], bf16),
        ("layer0.v", "F32", [3000], f32),
        ("layer0.h", "F16", [3000], f16),
        ("ids", "I32", [2], struct.pack("<2i", 1, 2)),
    ], metadata={"format": "pt"})
    safetensors(os.path.join(out, "single.safetensors"), [("x", "F8_E5M2", [3000], e5m2)], pad_header_to=7)
    # fp8 as numpy + ml_dtypes save it (float8_e4m3fn: '<V1', float8_e5m2:
    # '<f1'), and a safetensors file with an E4M3 KV tensor beside bf16 and
    # E5M2 ones. e4m3: bf16 -> fp8 E4M3 bytes by keeping sign, the 4 low
    # exponent bits and 3 mantissa bits (real KV exponents sit near 127,
    # |x| < 2^8, so this is a plausible fp8 KV byte stream).
    bf = struct.unpack("<%dH" % (len(bf16) // 2), bf16)
    e4m3 = bytes(((b >> 8) & 0x80) | ((((b >> 7) & 0xFF) - 120) & 0xF) << 3 | ((b >> 4) & 7) for b in bf)
    raw("e4m3.raw", e4m3)
    npy(os.path.join(out, "e4m3_v1.npy"), "<V1", (64, 64), e4m3)
    npy(os.path.join(out, "e5m2_f1.npy"), "<f1", (3000,), e5m2)
    safetensors(os.path.join(out, "fp8.safetensors"), [
        ("layers.0.k", "F8_E4M3", [64, 64], e4m3),
        ("layers.0.v", "BF16", [64, 64], bf16),
        ("layers.1.k", "F8_E5M2", [3000], e5m2),
    ], metadata={"format": "pt"})
    # Malformed: offsets past the data, overlapping tensors, junk header.
    with open(os.path.join(out, "badoff.safetensors"), "wb") as f:
        h = json.dumps({"t": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 80]}}).encode()
        f.write(struct.pack("<Q", len(h)) + h + b"\0" * 8)
    with open(os.path.join(out, "overlap.safetensors"), "wb") as f:
        h = json.dumps({"a": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]},
                        "b": {"dtype": "BF16", "shape": [4], "data_offsets": [4, 12]}}).encode()
        f.write(struct.pack("<Q", len(h)) + h + b"\0" * 12)
    with open(os.path.join(out, "hugehdr.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", 1 << 62) + b"{}")


if __name__ == "__main__":
    main()
