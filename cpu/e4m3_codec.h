/* SPDX-License-Identifier: Apache-2.0 */
// fp8_e4m3 coded streams (FORMAT.md 4.7) for the cpu backend.
#pragma once

#include <cstdint>

#include "core/header.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {
namespace cpu {

// The dynamic codebook's pass: counts[0..256) = the exponent counts; frame
// non-null: also writes stream 1 of the frame (it does not depend on the
// codebook). Returns whether it wrote stream 1.
bool e4m3_histogram(const uint8_t* src, uint64_t n, uint64_t n_checks, uint8_t* frame, uint64_t counts[256],
                    int threads);

// Streams 1 (unless res_done), 3, 6 of an fp8_e4m3 frame; escape_overflow
// past budget. hashes non-null: the block hash of each 64 KiB input block.
Status e4m3_encode(const uint8_t* src, uint64_t n, const Codebook& cb, uint64_t budget, uint64_t n_checks,
                   uint8_t* frame, bool res_done, uint64_t* hashes, int threads, uint64_t* escapes);

// Rules 14 (in-stream), 15, 17, 18 in rule order, then the values;
// hashes non-null: the block hash of each output block.
Status e4m3_decode(const FrameHeader& h, const uint8_t* frame, uint8_t* dst, uint64_t* hashes, int threads);

}  // namespace cpu
}  // namespace splitzip
