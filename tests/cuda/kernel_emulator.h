/* SPDX-License-Identifier: Apache-2.0 */
// CPU emulation of the CUDA kernel pipelines: runs the kernels' per-thread
// host+device steps (cuda/encode_logic.h, cuda/decode_logic.h,
// cuda/e4m3_logic.h, cuda/plan.h)
// in the kernels' order, looping over tiles and thread indices between the
// points where the kernels place barriers. What it cannot run is the device
// glue: ticket scheduling, warp shuffles in the block scan and the look-back
// (emulated here as plain prefix sums); the v2 block hashes are computed
// with the CTA's split into stripe deltas and the serial chain
// (cuda/block_hash.h), the warp reduction being an exact sum. No GPU or CUDA
// runtime needed.
#pragma once

#include <cstdint>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace splitzip::test {

struct EmuEncodeItem {
  const void* src = nullptr;
  void* dst = nullptr;
  uint64_t n = 0;
  uint64_t capacity = 0;
  Codebook codebook{};
};

struct EmuResult {
  Status status = Status::ok;
  uint64_t size = 0;
  uint64_t corrupt_block = ~uint64_t{0};  // decode: first corrupt checksum block (v2)
};

// The batch pipeline of compress_batch_async. total_elems sizes the
// workspace exactly as the device API does (items beyond it fail).
// Tiles are processed in `reverse_tiles` order when set, to show that the
// result does not depend on the order tiles run in.
std::vector<EmuResult> emulate_compress_batch(Dtype dtype, const std::vector<EmuEncodeItem>& items,
                                              uint64_t total_elems, uint32_t chunk_log2, bool checksum,
                                              bool reverse_tiles = false);

EmuResult emulate_compress(Dtype dtype, const void* src, uint64_t n, void* dst, uint64_t capacity,
                           const Codebook& cb, uint32_t chunk_log2, bool checksum = false);

struct EmuDecodeItem {
  const void* src = nullptr;
  uint64_t src_size = 0;
  void* dst = nullptr;
  uint64_t dst_capacity = 0;
};

std::vector<EmuResult> emulate_decompress_batch(const std::vector<EmuDecodeItem>& items,
                                                uint64_t total_dst_bytes, uint64_t max_output_bytes,
                                                bool verify, bool reverse_tiles = false);

EmuResult emulate_decompress(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity,
                             bool verify = true, uint64_t max_output_bytes = 0);

}  // namespace splitzip::test
