/* SPDX-License-Identifier: Apache-2.0 */
// CPU emulation of the capacity-mode kernels (cuda/capacity_encode.cu,
// cuda/capacity_decode.cu): the per-thread steps of cuda/capacity_logic.h
// run in the kernels' order, looping over blocks, threads and warp lanes
// between the kernels' barriers. The warp's prefix sum of code lengths and
// the shared-memory atomics are emulated as plain sums and ORs; block
// hashes are computed with the CTA's split (cuda/block_hash.h).
#pragma once

#include <cstdint>

#include "core/capacity/tables.h"
#include "tests/cuda/kernel_emulator.h"

namespace splitzip::test {

// The pipeline of enqueue_capacity_encode (compress_async /
// compress_batch_async with EncodeConfig::mode = capacity): setup, count,
// plan, write over `items` (codebooks not used). total_elems sizes the
// workspace as the device API does (buffers past it fail alone). Exponent
// blocks run in reverse order when reverse_blocks is set: the result must
// not depend on the order CTAs take them. tables: a table set (FORMAT.md
// 4.9) for every buffer, as the synchronous backend passes it.
std::vector<EmuResult> emulate_capacity_compress_batch(Dtype dtype, const std::vector<EmuEncodeItem>& items,
                                                       uint64_t total_elems, uint32_t chunk_log2, bool checksum,
                                                       bool reverse_blocks = false,
                                                       const CapTables* tables = nullptr);

// One frame of the synchronous backend's capacity path (Mode::capacity):
// its host checks, then the pipeline above for one buffer.
EmuResult emulate_capacity_compress(Dtype dtype, const void* src, uint64_t n, void* dst, uint64_t capacity,
                                    uint32_t chunk_log2, bool checksum, bool reverse_blocks = false,
                                    const CapTables* tables = nullptr);

// The capacity decoder alone: setup, index, blocks, [hash], final over
// `items`. Frames that are not mode 1 come back with handled = false and
// UNSUPPORTED_MODE; a header that fails is handled, with its status.
// tables: the one set the kernels are given (a TABLES frame naming another
// is MISSING_TABLES).
struct EmuCapDecode {
  EmuResult r;
  bool handled = false;
};
std::vector<EmuCapDecode> emulate_capacity_decompress_batch(const std::vector<EmuDecodeItem>& items,
                                                           uint64_t total_dst_bytes, uint64_t max_output_bytes,
                                                           bool verify, bool reverse_blocks = false,
                                                           const CapTables* tables = nullptr);
EmuCapDecode emulate_capacity_decompress(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity,
                                         bool verify = true, uint64_t max_output_bytes = 0,
                                         bool reverse_blocks = false, const CapTables* tables = nullptr);

// decompress_async / decompress_batch_async: the mode-0 pipeline
// (kernel_emulator.h), then the capacity kernels on the same outputs, whose
// final kernel overrides the frames it handles.
std::vector<EmuResult> emulate_decompress_batch_async(const std::vector<EmuDecodeItem>& items,
                                                      uint64_t total_dst_bytes, uint64_t max_output_bytes, bool verify,
                                                      bool reverse = false, const CapTables* tables = nullptr);

}  // namespace splitzip::test
