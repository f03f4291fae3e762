# SPDX-License-Identifier: Apache-2.0
"""Loopback test of the transfer pipeline without a network: the prefill
side's StreamEncoder hands frames to the decode side's StreamDecoder by
memcpy between their rings, as the transport would.

Needs libsplitzip_transfer.so (see README.md: cmake -S examples/transfer
-B build-transfer/ex && ninja -C build-transfer/ex, or $SPLITZIP_TRANSFER_LIB).
"""
import ctypes as C
import os

import numpy as np
import pytest

import sztx

if not os.path.exists(os.environ.get("SPLITZIP_TRANSFER_LIB", sztx.DEFAULT_LIB)):
    pytest.skip("libsplitzip_transfer.so is not built (examples/transfer/README.md)",
                allow_module_level=True)


def loopback(tensors, frame_elems=1 << 16, slots=3):
    """Moves tensors through encoder -> rings -> decoder; returns (dst, stream)."""
    total = sum(t.nbytes for t in tensors)
    enc = sztx.Encoder(tensors, frame_elems, slots)
    enc.start()
    dst = np.full(total, 0x5A, dtype=np.uint8)
    cap = sztx.slot_capacity(frame_elems)
    dec = sztx.Decoder(dst, slots, cap)
    ring, ring_bytes = dec.ring
    assert ring_bytes == slots * cap
    stream = bytearray()
    try:
        while True:
            f = enc.next()
            if f is None:
                break
            slot, addr, size, raw, off = f
            assert size <= cap
            d = dec.acquire()
            C.memmove(ring + d * cap, addr, size)
            stream += C.string_at(addr, size)
            enc.release(slot)
            dec.submit(d, size, off, raw)
        dec.finish()
    finally:
        dec.stop()
        dec.close()
        enc.close()
    return dst, bytes(stream)


def test_real_kv_arrives_bit_exact():
    tensors = sztx.real_kv()
    dst, stream = loopback(tensors)
    assert np.array_equal(dst, np.concatenate(tensors))
    # The frames sent, back to back, are one valid stream of the payload.
    frames, decoded = sztx.stream_scan(stream)
    assert decoded == dst.nbytes
    assert frames == sum(-(-(t.nbytes // 2) // (1 << 16)) for t in tensors)
    assert len(stream) < 0.76 * dst.nbytes


def test_empty_payload_is_an_empty_stream():
    # No tensors, or only empty ones: no frame is sent, the receiver's
    # destination is empty and finishing succeeds.
    for tensors in ([], [np.empty(0, np.uint8), np.empty(0, np.uint8)]):
        dst, stream = loopback(tensors)
        assert dst.nbytes == 0 and stream == b""
    assert sztx.stream_scan(b"") == (0, 0)


def test_stream_scan_rejects_a_bad_stream():
    dst, stream = loopback([sztx.real_kv()[0]])
    assert sztx.stream_scan(stream)[1] == dst.nbytes
    with pytest.raises(sztx.SplitzipError, match="TRUNCATED"):
        sztx.stream_scan(stream + b"\0" * 10)
    bad = bytearray(stream)
    bad[0] ^= 0xFF
    with pytest.raises(sztx.SplitzipError, match="BAD_MAGIC"):
        sztx.stream_scan(bytes(bad))
