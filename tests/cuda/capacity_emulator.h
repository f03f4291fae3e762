/* SPDX-License-Identifier: Apache-2.0 */
// CPU emulation of the capacity-mode kernels (cuda/capacity_encode.cu,
// cuda/capacity_decode.cu): the per-thread steps of cuda/capacity_logic.h
// run in the kernels' order, looping over blocks, threads and warp lanes
// between the kernels' barriers. The warp's prefix sum of code lengths and
// the shared-memory atomics are emulated as plain sums and ORs; block
// hashes are computed with the CTA's split (cuda/block_hash.h).
#pragma once

#include <cstdint>

#include "tests/cuda/kernel_emulator.h"

namespace splitzip::test {

// One frame of the synchronous backend's capacity path (Mode::capacity).
// Exponent blocks run in reverse order when reverse_blocks is set: the
// result must not depend on the order CTAs take them.
EmuResult emulate_capacity_compress(Dtype dtype, const void* src, uint64_t n, void* dst, uint64_t capacity,
                                    uint32_t chunk_log2, bool checksum, bool reverse_blocks = false);

// The capacity decoder alone (the frame's mode known to the host). Frames
// that are not mode 1 come back with handled = false and their header's
// status (or UNSUPPORTED_MODE).
struct EmuCapDecode {
  EmuResult r;
  bool handled = false;
};
EmuCapDecode emulate_capacity_decompress(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity,
                                         bool verify = true, uint64_t max_output_bytes = 0,
                                         bool reverse_blocks = false);

}  // namespace splitzip::test
